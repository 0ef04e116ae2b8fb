"""How the experiments' scripts (peers.py, record_qkv.py) end: their failures as exceptions,
each mapped to one line on stderr and fp2bench's exit codes (0 ok, 2 usage, 3 runtime, 77
absent), anything unforeseen as one line too, with the traceback only under --debug."""
import sys

EXIT_OK, EXIT_USAGE, EXIT_RUNTIME, EXIT_ABSENT = 0, 2, 3, 77


class UsageError(Exception):
    """Bad arguments or an unreadable input: exit 2."""


class RuntimeFailure(Exception):
    """The environment or the run failed: exit 3."""


class Absent(Exception):
    """What the script needs (torch, a CUDA device) is missing: exit 77."""


def run_main(prog, run, args, describe):
    """run(args)'s exit code, or the one its failure maps to after one line "prog: why";
    describe(e) is that line for an unforeseen exception."""
    try:
        return run(args)
    except UsageError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return EXIT_USAGE
    except Absent as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return EXIT_ABSENT
    except RuntimeFailure as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_RUNTIME
    except Exception as e:  # anything unforeseen: one line, the traceback only with --debug
        if getattr(args, "debug", False):
            raise
        print(f"{prog}: {describe(e)} (--debug shows the traceback)", file=sys.stderr)
        return EXIT_RUNTIME
