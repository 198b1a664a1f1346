#!/usr/bin/env python3
"""Runs samples' README walk-throughs and checks their documented output.

Called by tests/kernel/samples_walkthrough.sh (which documents the
convention) as: walkthrough.py ROOT [-v] [SAMPLE...].
"""
import os
import re
import subprocess
import sys

root = sys.argv[1]
wanted = sys.argv[2:]
# -v: quote every step's output (to write or update a README's expected lines).
verbose = bool(wanted) and wanted[0] == "-v"
if verbose:
    wanted = wanted[1:]
samples_dir = os.path.join(root, "samples")


def course_order():
    """Samples in the order samples/README.md links them, then the rest."""
    names = []
    try:
        with open(os.path.join(samples_dir, "README.md")) as f:
            for m in re.finditer(r"\]\(([A-Za-z0-9_]+)/README\.md\)", f.read()):
                if m.group(1) not in names:
                    names.append(m.group(1))
    except OSError:
        pass
    for d in sorted(os.listdir(samples_dir)):
        if os.path.isdir(os.path.join(samples_dir, d)) and d not in names:
            names.append(d)
    return names


def kernel_version():
    m = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (int(m.group(1)), int(m.group(2)))


def has_feature(name):
    m = re.fullmatch(r"kernel(>=|<)(\d+)\.(\d+)", name)
    if m:
        at_least = kernel_version() >= (int(m.group(2)), int(m.group(3)))
        return at_least if m.group(1) == ">=" else not at_least
    if name == "fprobe":
        with open("/proc/kallsyms") as f:
            return any(line.rstrip().endswith(" register_fprobe") for line in f)
    if name == "kprobes":
        try:
            with open("/sys/kernel/debug/kprobes/enabled") as f:
                return f.read().strip() == "1"
        except OSError:
            return False
    if name == "tracefs":
        return os.path.exists("/sys/kernel/tracing/trace")
    if name in ("cc", "trace-cmd"):
        return subprocess.call(f"command -v {name} >/dev/null", shell=True) == 0
    raise ValueError(f"unknown feature '{name}' in a requires marker")


FEATURE_WHY = {
    "fprobe": "the kernel has no fprobe (CONFIG_FPROBE is off)",
    "kprobes": "kprobes are missing or disabled",
    "tracefs": "tracefs is not mounted",
    "cc": "no C compiler",
    "trace-cmd": "trace-cmd is not installed (Debian package trace-cmd)",
}


# Why a block that shows a kernel *without* FEATURE cannot run here.
FEATURE_HAS = {
    "fprobe": "this kernel has fprobe (CONFIG_FPROBE=y), so the failure cannot happen here",
}


def why_not(feat):
    if feat.startswith("kernel"):
        return f"the running kernel ({os.uname().release}) is not {feat[6:]}"
    return FEATURE_WHY[feat]


def parse(path):
    """Blocks: dicts with requires, expect, steps [(command, [expected])]."""
    blocks, markers, block = [], {}, None
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if block is None:
            m = re.match(r"\s*<!--\s*(requires|expect):\s*(.*?)\s*-->\s*$", line)
            if m:
                markers.setdefault(m.group(1), []).append(m.group(2))
            elif line.strip() == "```console":
                block = {"requires": markers.get("requires", []),
                         "expect": markers.get("expect", []), "steps": [],
                         "line": i + 1}
                markers = {}
            elif line.strip():
                markers = {}
            i += 1
            continue
        if line.strip() == "```":
            blocks.append(block)
            block = None
        elif line.startswith("$ "):
            cmd = line[2:]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                nxt = lines[i]
                cmd = cmd[:-1] + "\n" + (nxt[2:] if nxt.startswith("> ") else nxt)
            block["steps"].append((cmd, []))
        elif block["steps"]:
            block["steps"][-1][1].append(line)
        i += 1
    return blocks


def norm(s):
    return " ".join(s.split())


def line_regex(expected):
    parts = [re.escape(norm(p)) for p in norm(expected).split("...")]
    return re.compile(".*".join(parts) + r"\Z")


def check_output(expected, output):
    """None when every expected line is found in order, else the first missing."""
    out = [norm(l) for l in output.split("\n")]
    pos = 0
    for exp in expected:
        if not exp.strip() or exp.strip() == "...":
            continue
        rx = line_regex(exp)
        while pos < len(out) and not rx.match(out[pos]):
            pos += 1
        if pos == len(out):
            return exp
        pos += 1
    return None


def loaded_modules():
    with open("/proc/modules") as f:
        return {l.split()[0] for l in f}


def instances():
    try:
        return set(os.listdir("/sys/kernel/tracing/instances"))
    except OSError:
        return set()


PRELUDE = 'sudo() { "$@"; }\n'
n = 0
failed = 0


def tap(ok, desc, diag=None, skip=None):
    global n, failed
    n += 1
    failed += not ok
    line = f"{'ok' if ok else 'not ok'} {n} - {desc}"
    if skip:
        line += f" # SKIP {skip}"
    print(line, flush=True)
    for d in diag or []:
        for l in str(d).rstrip("\n").split("\n"):
            print(f"#   {l}", flush=True)


def short(cmd):
    c = " ".join(cmd.split())
    return c if len(c) <= 90 else c[:87] + "..."


names = course_order()
if wanted:
    unknown = [w for w in wanted if w not in names]
    if unknown:
        print(f"Bail out! no such sample: {' '.join(unknown)}")
        sys.exit(1)
    names = [x for x in names if x in wanted]

for name in names:
    readme = os.path.join(samples_dir, name, "README.md")
    if not os.path.exists(readme):
        tap(False, f"{name}: has a README.md walk-through", [f"{readme} is missing"])
        continue
    blocks = parse(readme)
    nsteps = sum(len(b["steps"]) for b in blocks)
    if not nsteps:
        tap(False, f"{name}: README.md has tested ```console steps", ["no ```console block with a $ command"])
        continue
    mods_before, inst_before = loaded_modules(), instances()
    for b in blocks:
        skip = None
        for req in b["requires"]:
            neg = req.startswith("!")
            feat = req.lstrip("!")
            if has_feature(feat) == neg:
                skip = f"needs {feat}: {why_not(feat)}" if not neg else \
                    f"shows a kernel without {feat}: {FEATURE_HAS.get(feat, 'this kernel has it')}"
        if skip:
            for cmd, _ in b["steps"]:
                tap(True, f"{name}: {short(cmd)}", skip=skip)
            continue
        block_out = ""
        for cmd, expected in b["steps"]:
            try:
                p = subprocess.run(["bash", "-c", PRELUDE + cmd], cwd=root,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=120)
                out, rc = p.stdout.decode(errors="replace"), p.returncode
            except subprocess.TimeoutExpired as e:
                out, rc = (e.stdout or b"").decode(errors="replace"), "timeout (120 s)"
            block_out += out
            diag = []
            if rc != 0:
                diag.append(f"exit status {rc} (documented commands must succeed)")
            missing = check_output(expected, out)
            if missing is not None:
                diag.append(f"expected line not found (in order): {missing}")
            ok = not diag
            if diag or verbose:
                diag.append("output was:")
                diag.append(out if out.strip() else "(nothing)")
            tap(ok, f"{name}: {short(cmd)}", diag)
        for rx in b["expect"]:
            ok = re.search(rx, block_out, re.MULTILINE) is not None
            tap(ok, f"{name}: block at line {b['line']} output matches /{rx}/",
                None if ok else ["output was:", block_out])
    left = sorted(loaded_modules() - mods_before)
    inst_left = sorted(instances() - inst_before)
    for m in left:
        subprocess.call(["rmmod", m])
    for i in inst_left:
        try:
            os.rmdir(os.path.join("/sys/kernel/tracing/instances", i))
        except OSError:
            pass
    diag = []
    if left:
        diag.append("still loaded after the walk-through: " + " ".join(left))
    if inst_left:
        diag.append("tracefs instances left behind: " + " ".join(inst_left))
    tap(not diag, f"{name}: walk-through leaves the guest clean", diag)

print(f"1..{n}")
sys.exit(1 if failed else 0)
