#!/usr/bin/env bash
# samples_walkthrough - run every sample's README walk-through and check that
# the output it documents really appears (so the docs cannot drift from the
# code).  Runs inside the test VM as root, from the repository root:
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'samples*'
#   tests/kernel/samples_walkthrough.sh [-v] [SAMPLE...]  (already in a guest;
#                                        -v quotes every step's output)
#
# The convention (also described in samples/README.md):
#  - Only fenced blocks opened with ```console are tested.  In them a line
#    starting with "$ " is a command (a trailing "\" continues it on the next
#    line); the lines after it, up to the next command, are its expected
#    output.
#  - Every command must exit 0 (a walk-through that shows a failure writes
#    `...; echo "exit status $?"` and documents the status line).
#  - Expected lines must appear in the command's output (stdout and stderr)
#    in that order, each matching a whole line; other output lines may come
#    in between.  "..." in an expected line matches any text; a line that is
#    just "..." only marks elided output.  Runs of blanks compare equal.
#  - Commands run with bash from the repository root, each in a new shell;
#    "sudo" is a no-op function here (the guest runs everything as root).
#  - HTML comments right before a ```console fence apply to that block:
#      <!-- requires: FEATURE -->   run only when the kernel has FEATURE,
#      <!-- requires: !FEATURE -->  ... only when it lacks it; otherwise
#                                   each command is reported as SKIP.
#      <!-- expect: REGEX -->       the block's whole output must also
#                                   match this Python regular expression.
#    Features: fprobe, kprobes, tracefs, cc, trace-cmd, kernel>=X.Y,
#    kernel<X.Y.
#  - After each sample, no module it loaded may still be loaded and no
#    tracefs instance it made may remain ("leaves the guest clean").
# Output: TAP ("ok N - SAMPLE: COMMAND", "# SKIP reason", plan "1..N").
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 1
exec python3 "$here/lib/walkthrough.py" "$root" "$@"
