"""The check harness of the Python tests: one line per check ("ok: what (detail)" or
"FAIL: what (detail)"), then a count; the exit code is 0 only when every check passed and
there was at least one."""

passed = failed = 0


def check(cond, what, detail=""):
    """Counts and prints one check; returns cond."""
    global passed, failed
    if cond:
        passed += 1
        detail = " ".join(str(detail).split())
        print(f"ok: {what}" + (f" ({detail[:200]}{'...' if len(detail) > 200 else ''})" if detail else ""))
    else:
        failed += 1
        print(f"FAIL: {what}" + (f" ({detail})" if detail else ""))
    return cond


def finish():
    """Prints the count and returns the exit code."""
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1
