#!/usr/bin/python3
"""tests/interop/ctf_check.py KTRACKCTL FILE... - the CTF export read back by
Debian's babeltrace2 (its Python bindings, python3-bt2: the library the
babeltrace2 command is made of): for each recorded FILE, 'ktrackctl export
--format ctf' must give, event for event, what 'ktrackctl report --json'
prints: the same number of events, and for each its timestamp, CPU, name,
pid, tgid, comm, context, probe event, ip, parent_ip and every field value
(report's null = a faulted fetch: skipped; an unknown comm is
"<idle>" for pid 0, else "<...>"; x* fields as numbers in base 16;
named values as CTF enumeration labels).  Output: TAP.  Also runs the
babeltrace2 command itself on each export (its text output: one line per
event).
"""
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

import bt2

from tap import main, tap




def plain(f):
    """A bt2 field as Python values (enumerations: (value, labels))."""
    if isinstance(f, (bt2._EnumerationFieldConst,)):
        return ("enum", int(f), tuple(f.labels))
    if isinstance(f, bt2._IntegerFieldConst):
        return int(f)
    if isinstance(f, bt2._StringFieldConst):
        return str(f)
    if isinstance(f, bt2._ArrayFieldConst):
        return [plain(x) for x in f]
    if isinstance(f, bt2._StructureFieldConst):
        return {k: plain(v) for k, v in f.items()}
    raise TypeError(type(f))


def same(j, c):
    """report --json's value j against the CTF value c."""
    if j is None:
        return True  # a faulted fetch (fault_mask says which)
    if isinstance(c, tuple) and c[0] == "enum":
        return j == c[1] if isinstance(j, int) else j in c[2]
    if isinstance(j, list):
        return isinstance(c, list) and len(j) == len(c) and all(same(a, b) for a, b in zip(j, c))
    if isinstance(j, str) and isinstance(c, int):
        return j.startswith("0x") and int(j, 16) == c
    if isinstance(j, str) and isinstance(c, list):  # bytes: hex digits
        return j == "".join(f"{b:02x}" for b in c)
    return j == c


def ctf_events(d):
    out = []
    for msg in bt2.TraceCollectionMessageIterator(d):
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        out.append({
            "ts": msg.default_clock_snapshot.value,
            "cpu": int(ev.packet.context_field["cpu_id"]),
            "event": ev.name,
            "context": plain(ev.common_context_field),
            "payload": plain(ev.payload_field),
        })
    return out


def key(ts, cpu, name, pid):
    return (ts, cpu, name, pid)


def check(ktrackctl, path):
    label = os.path.basename(path)
    with tempfile.TemporaryDirectory(prefix="ktrack-ctf-") as tmp:
        d = os.path.join(tmp, "ctf")
        r = subprocess.run([ktrackctl, "export", "--format", "ctf", "-o", d, path], capture_output=True, text=True)
        tap(r.returncode == 0 and os.path.isfile(os.path.join(d, "metadata")),
            f"{label}: export --format ctf writes a CTF directory", r.stderr)
        if r.returncode:
            return
        rep = subprocess.run([ktrackctl, "report", "--json", path], capture_output=True, text=True)
        want = [json.loads(line) for line in rep.stdout.splitlines() if line.startswith("{")]
        try:
            got = ctf_events(d)
            err = ""
        except Exception as e:  # babeltrace2 refused the trace
            got, err = [], f"{type(e).__name__}: {e}"
        tap(not err and len(got) == len(want),
            f"{label}: babeltrace2 reads {len(got)} events, report --json prints {len(want)}", err)

        # Equal timestamps may come in another order across CPUs: match by
        # (ts, cpu, event, pid), in order within a key.
        by_key = defaultdict(list)
        for e in got:
            by_key[key(e["ts"], e["cpu"], e["event"], e["context"]["pid"])].append(e)
        bad = []
        for j in want:
            k = key(j["ts"], j["cpu"], j["event"], j["pid"])
            if not by_key[k]:
                bad.append(f"no CTF event at ts {j['ts']} cpu {j['cpu']} {j['event']} pid {j['pid']}")
                continue
            c = by_key[k].pop(0)
            ctx = c["context"]
            if ctx["tgid"] != j["tgid"] or ctx["comm"] != (j["comm"] or ("<idle>" if j["pid"] == 0 else "<...>")) or ctx["ctx"] != j["ctx"]:
                bad.append(f"context of {k}: {ctx} vs {j}")
            p = c["payload"]
            if "ip" in j:
                for f in ("probe_event", "ip", "parent_ip"):
                    if not same(j[f], p.get(f)):
                        bad.append(f"{f} of {k}: CTF {p.get(f)!r}, report {j[f]!r}")
            for f, v in j["fields"].items():
                if f not in p or not same(v, p[f]):
                    bad.append(f"field {f} of {k}: CTF {p.get(f)!r}, report {v!r}")
            if len(bad) > 20:
                break
        tap(not bad, f"{label}: every event's timestamp, CPU, task, context, ip and fields are report --json's",
            "\n".join(bad))
        kinds = sorted({e["event"] for e in want})
        print(f"# {label}: {len(want)} events of {len(kinds)} kinds: {', '.join(kinds[:12])}")

        r = subprocess.run(["babeltrace2", d], capture_output=True, text=True)
        lines = r.stdout.count("\n")
        tap(r.returncode == 0 and lines == len(want),
            f"{label}: the babeltrace2 command prints {lines} lines", r.stderr[-2000:])


main(check, __doc__)
