#!/usr/bin/env bash
# The docs' commands run, so that none can go stale (issue 16, item 10): every `$ fp2bench`
# example in the README's code blocks, every experiments/*.json `command` and every command
# of experiments/README.md, at a small size on the cpu backend; every `fp2bench NAME` the two
# READMEs mention names a command. An example's output is held to what the README shows.
# Usage: cli_docs.sh path/to/fp2bench
set -u
bin=$(realpath "$1")
name=cli_docs.sh
src=$(realpath "$(dirname "$(realpath "$0")")/..")
# shellcheck source=lib/expect.sh
. "$src/tests/lib/expect.sh"
need_python3

# The last of a repeated option counts: these shrink any experiment to seconds on the cpu.
small=(--backend cpu --len 1k --heads 8:2 --dim 32)

# run_doc WHERE CODE ARGS...: fp2bench ARGS (results/<gpu>/ redirected here) exits with CODE
# within 120 s, from the source folder, where the READMEs' relative paths (tests/fixtures/...) point.
run_doc() {
  local where=$1 code=$2
  shift 2
  local args=("${@//results\/<gpu>\//$dir/}")
  (cd "$src" && timeout 120 "$bin" "${args[@]}") >got.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq "$code" ] || { fail "$where: 'fp2bench ${*:1:8}' exited $rc, expected $code: $(head -c 300 err.txt)"; return 1; }
}

# exact_doc CODE WANT ARGS...: a README example exits with CODE and prints WANT exactly.
exact_doc() {
  local code=$1 want=$2
  shift 2
  run_doc README.md "$code" "$@" || return
  diff "$want" got.txt >diff.txt || fail "README.md: 'fp2bench $*' prints otherwise: $(cat diff.txt)"
}

# same_fields WANT ARGS...: the example's output (got.txt) has every named line of WANT
# ("density", "time (cpu)", "cuda driver": a name, then two spaces).
same_fields() {
  local want=$1 field
  shift
  while read -r field; do
    grep -q "^$field  " got.txt || fail "README.md: 'fp2bench $*' prints no '$field' line"
  done < <(sed -n 's/^\([a-z][a-z ()]*[a-z)]\)  .*/\1/p' "$want")
}

# README: each example's command and the output shown after it, up to the next one.
awk -v d="$dir" '
  /^```/ { block = !block; out = ""; next }
  block && /^\$ fp2bench / { n++; print substr($0, 12) > (d "/ex" n ".cmd"); out = d "/ex" n ".want"; printf "" > out; next }
  out != "" { print > out }' "$src/README.md"
examples=$(ls ex*.cmd 2>/dev/null | wc -l)
[ "$examples" -ge 6 ] || fail "README.md: $examples '\$ fp2bench' examples found, expected at least 6"
for cmd in ex*.cmd; do
  read -ra args <"$cmd"
  want=${cmd%.cmd}.want
  case " ${args[*]} " in
    # Shown as a GPU prints it: it must still run, here on the cpu; gpu_check covers the GPU.
    *" --backend gpu "*) run_doc README.md 0 "${args[@]}" "${small[@]}" ;;
    # Deterministic (fixed seeds on the oracle; committed fixtures), at their own small size:
    # the output is exactly the README's. regress's example shows a SLOWER verdict, exit 1.
    " check "*) exact_doc 0 "$want" "${args[@]}" ;;
    " regress "*) exact_doc 1 "$want" "${args[@]}" ;;
    # A report of named lines (info describes this machine, run's numbers vary): the same names.
    " info "*) run_doc README.md 0 "${args[@]}" && same_fields "$want" "${args[@]}" ;;
    " run "*) run_doc README.md 0 "${args[@]}" "${small[@]}" && same_fields "$want" "${args[@]}" ;;
    # Small as shown (batch takes --requests, not --len): the same two header lines.
    " batch "*)
      if run_doc README.md 0 "${args[@]}"; then
        [ "$(head -2 got.txt | tr -s ' ')" = "$(head -2 "$want" | tr -s ' ')" ] ||
          fail "README.md: 'fp2bench ${args[*]}' begins '$(head -2 got.txt)', not as the README shows"
      fi ;;
    # A table: the same header.
    *)
      if run_doc README.md 0 "${args[@]}" "${small[@]}"; then
        [ "$(head -1 got.txt | tr -s ' ')" = "$(head -1 "$want" | tr -s ' ')" ] ||
          fail "README.md: 'fp2bench ${args[*]}' has the header '$(head -1 got.txt)', not the README's"
      fi ;;
  esac
done

# doc_key ARGS...: what a command runs once `small` overrides it: its command, then its other
# options as sorted OPTION=VALUE words (--out, what `small` sets and the default --alpha 0.1
# left out), so that a command the specs already ran is not run again.
doc_key() {
  local cmd=$1 words=() i
  shift
  for ((i = 1; i <= $#; i++)); do
    local opt=${!i} val=""
    case $opt in --*) ;; *) words+=("$opt"); continue ;; esac
    local j=$((i + 1))
    if [ $j -le $# ] && [ "${!j#--}" = "${!j}" ]; then val=${!j}; i=$j; fi
    case "$opt=$val" in --out=* | --backend=* | --len=* | --heads=* | --dim=* | --alpha=0.1) ;; *) words+=("$opt=$val") ;; esac
  done
  echo "$cmd $(printf '%s\n' "${words[@]}" | sort | tr '\n' ' ')"
}
ran=" "

# The specs' commands, as reproduce would run them but small: each writes its result.
for spec in "$src"/experiments/*.json; do
  line=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["command"])' "$spec")
  read -ra args <<<"$line"
  [ "${args[0]}" = fp2bench ] || { fail "$spec: command '$line' does not start with fp2bench"; continue; }
  out=$(basename "$spec")
  ran="$ran$(doc_key "${args[@]:1}") |"
  if run_doc "$out" 0 "${args[@]:1}" "${small[@]}"; then
    [ -s "$dir/$out" ] || fail "$out: command '$line' wrote no results/<gpu>/$out"
  fi
done

# experiments/README.md's commands (indented blocks). The one on a recorded file needs a file
# that record_qkv.py writes on a GPU host (test_record_qkv.py tests that): its command name only.
while read -r line; do
  read -ra args <<<"$line"
  case " ${args[*]} " in
    *".safetensors "*) ;;
    *) case $ran in
         *"$(doc_key "${args[@]:1}") |"*) ;; # a spec's command, run above
         *) run_doc experiments/README.md 0 "${args[@]:1}" "${small[@]}" ;;
       esac ;;
  esac
done < <(sed -n 's/^    \(fp2bench \)/\1/p' "$src/experiments/README.md")

# Every `fp2bench NAME` in the READMEs is a command that `fp2bench help` lists.
"$bin" help >help.txt 2>&1
while read -r cmd; do
  [ "$cmd" = help ] || grep -q "^  $cmd " help.txt || fail "the docs mention 'fp2bench $cmd', which is not a command"
done < <(grep -oh '`fp2bench [a-z][a-z-]*\|^ *\$\? *fp2bench [a-z][a-z-]*' "$src/README.md" "$src/experiments/README.md" |
  sed 's/.*fp2bench //' | sort -u)

[ "$failures" -eq 0 ] || { echo "cli_docs.sh: $failures failure(s)" >&2; exit 1; }
echo "cli_docs.sh: ok"
