# Sourced by the command-line tests: a scratch folder to work in (removed at exit), fail()
# counting failures, need_python3() and expect(). The sourcing script sets `name` first and
# passes absolute paths (it works in the scratch folder).
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
failures=0
fail() { echo "$name: $*" >&2; failures=$((failures + 1)); }
# need_python3: skips the test (77) where there is no python3.
need_python3() { command -v python3 >/dev/null 2>&1 || { echo "$name: python3 not found" >&2; exit 77; }; }

# expect CODE PATTERN CMD...: CMD exits with CODE within 60 s, and its stderr (err.txt) holds
# one line besides progress (fp2bench: CMD: len ..., or the run's description), matching PATTERN.
expect() {
  local code=$1 pattern=$2
  shift 2
  timeout 60 "$@" >out.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq "$code" ] || fail "'${*:1:4}' exited $rc, expected $code: $(head -c 300 err.txt)"
  grep -q -- "$pattern" err.txt || fail "'${*:1:4}' did not say '$pattern': $(head -c 300 err.txt)"
  [ "$(grep -vc '^fp2bench: [a-z-]*: \(len \|synth\|.*safetensors, len\)' err.txt)" -le 1 ] ||
    fail "'${*:1:4}' printed more than one line besides progress: $(head -c 300 err.txt)"
}
