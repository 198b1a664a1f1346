#!/usr/bin/python3
"""tests/interop/perfetto_check.py KTRACKCTL FILE... - the Perfetto/Chrome
export against the Trace Event Format (the JSON that ui.perfetto.dev and
chrome://tracing load; no Perfetto consumer is packaged by Debian or npm,
so the structure is checked here, field by field): a "traceEvents" array;
every event a phase this format defines, with the keys that phase needs
and their types (ts and dur numbers in microseconds, pid/tid integers,
instant scopes, counters' numeric args, metadata names); slices that do
not end before they start; one process_name/thread_name per track.  And
its content against the text views: one call slice per paired call
(hist --json -k func's counts), one instant per marker, the lost-record
counters' last values adding up to the records lost.  Output: TAP.
"""
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter

from tap import main, tap

PHASES = {"X", "B", "E", "i", "I", "C", "M", "b", "e", "n", "s", "t", "f", "P", "O", "N", "D"}


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def structure(events):
    bad = []
    names = Counter()
    for i, e in enumerate(events):
        ph = e.get("ph")
        where = f"event {i} ({e.get('name')!r}, ph {ph!r})"
        if ph not in PHASES:
            bad.append(f"{where}: unknown phase")
            continue
        if not isinstance(e.get("name"), str):
            bad.append(f"{where}: name is not a string")
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid", 0), int):
            bad.append(f"{where}: pid/tid are not integers")
        if ph != "M" and not is_num(e.get("ts")):
            bad.append(f"{where}: ts is not a number")
        if ph == "X" and (not is_num(e.get("dur")) or e["dur"] < 0):
            bad.append(f"{where}: a complete event needs dur >= 0")
        if ph in ("i", "I") and e.get("s", "t") not in ("g", "p", "t"):
            bad.append(f"{where}: instant scope must be g, p or t")
        if ph == "C" and (not isinstance(e.get("args"), dict) or not all(is_num(v) for v in e["args"].values())):
            bad.append(f"{where}: a counter's args must be numbers")
        if ph == "M":
            if e.get("name") not in ("process_name", "thread_name", "process_sort_index", "thread_sort_index",
                                     "process_labels"):
                bad.append(f"{where}: unknown metadata event")
            if not isinstance(e.get("args"), dict):
                bad.append(f"{where}: metadata needs args")
            names[(e["name"], e.get("pid"), e.get("tid") if e["name"].startswith("thread") else None)] += 1
        if "args" in e and not isinstance(e["args"], dict):
            bad.append(f"{where}: args is not an object")
        if len(bad) > 20:
            break
    dup = [k for k, c in names.items() if c > 1]
    if dup:
        bad.append(f"metadata named twice: {dup[:5]}")
    return bad


def check(ktrackctl, path):
    label = os.path.basename(path)
    with tempfile.TemporaryDirectory(prefix="ktrack-perfetto-") as tmp:
        out = os.path.join(tmp, "trace.json")
        r = subprocess.run([ktrackctl, "export", "-o", out, path], capture_output=True, text=True)
        try:
            doc = json.load(open(out))
            err = ""
        except Exception as e:
            doc, err = {}, f"{e}\n{r.stderr}"
        events = doc.get("traceEvents") if isinstance(doc, dict) else None
        tap(r.returncode == 0 and isinstance(events, list) and doc.get("displayTimeUnit") in ("ms", "ns"),
            f"{label}: export writes a trace-event JSON object with traceEvents", err or r.stderr)
        if not isinstance(events, list):
            return
        bad = structure(events)
        tap(not bad, f"{label}: all {len(events)} events follow the Trace Event Format", "\n".join(bad))

        h = subprocess.run([ktrackctl, "hist", "-k", "func", "--json", path], capture_output=True, text=True)
        calls = sum(json.loads(l)["count"] for l in h.stdout.splitlines() if l.startswith('{"key"'))
        slices = sum(1 for e in events if e.get("ph") == "X" and e.get("cat") == "call")
        tap(slices == calls, f"{label}: {slices} call slices, hist --json counts {calls} calls")

        rep = subprocess.run([ktrackctl, "report", "--json", path], capture_output=True, text=True)
        recs = [json.loads(l) for l in rep.stdout.splitlines() if l.startswith("{")]
        markers = sum(1 for x in recs if x["event"] == "marker")
        lost = sum(x["fields"]["count"] for x in recs if x["event"] == "lost")
        instants = sum(1 for e in events if e.get("ph") in ("i", "I") and e.get("cat") == "marker")
        tap(instants == markers, f"{label}: {instants} marker instants, report has {markers} markers")
        last = {}
        for e in events:
            if e.get("ph") == "C" and e.get("name", "").startswith("lost records"):
                last[e["name"]] = e["args"].get("lost", 0)
        tap(sum(last.values()) == lost, f"{label}: lost-record counters end at {sum(last.values())}, "
            f"report's lost records add up to {lost}")


main(check, __doc__)
