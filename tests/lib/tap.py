"""TAP output for the Python tests: numbered checks, failure detail as
comments, the plan at the end and the exit status from what failed."""

import sys

n = failed = 0


def check(ok, what, detail=""):
    global n, failed
    n += 1
    failed += not ok
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
    if not ok and detail:
        for line in str(detail).splitlines()[-20:]:
            print("#   " + line)
    sys.stdout.flush()
    return ok


def any_failed():
    return failed > 0


def done():
    """Print the plan; the exit status for the checks so far."""
    print("1..%d" % n)
    return 1 if failed else 0
