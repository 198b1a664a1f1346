"""TAP output and the command line the interop checks share:
CHECK.py KTRACKCTL FILE... runs check(ktrackctl, file) per FILE."""
import sys

_n = 0
_failed = False


def tap(ok, name, why=""):
    """One case: 'ok N - name', or 'not ok N - name' and 'why' as comments."""
    global _n, _failed
    _n += 1
    print(f"{'ok' if ok else 'not ok'} {_n} - {name}")
    if not ok:
        _failed = True
        for line in str(why).splitlines()[:20]:
            print(f"# {line}")


def main(check, doc):
    if len(sys.argv) < 3:
        print(doc)
        sys.exit(2)
    for path in sys.argv[2:]:
        check(sys.argv[1], path)
    print(f"1..{_n}")
    sys.exit(1 if _failed else 0)
