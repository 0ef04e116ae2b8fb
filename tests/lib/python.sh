#!/usr/bin/env bash
# Runs a Python test (python.sh SCRIPT ARGS...) with the interpreter found when it runs, not
# when cmake was configured: $FP2_PYTHON (a path, or a name looked up on PATH, as fp2bench
# takes it) or python3. Exit 77 (skipped) when there is none; the scripts themselves exit 77
# where torch (or a GPU) is missing.
set -u
py=${FP2_PYTHON:-python3}
path=$(command -v -- "$py") || { echo "python.sh: '$py' not found: skipped" >&2; exit 77; }
exec "$path" "$@"
