#!/usr/bin/env bash
# Builds the libFuzzer targets with clang into build-fuzz/ and runs each for a bounded time
# on a copy of its seed corpus (tests/fuzz/corpus/<target>/, plus the inputs of
# tests/fuzz/regressions/<target>/ and the dictionary tests/fuzz/<target>.dict if there is
# one), all targets at once. Exits non-zero on any finding (crash, leak, undefined
# behaviour, failed expectation, timeout, out-of-memory); the input that caused it is left
# in build-fuzz/artifacts/<target>/. Copy it to tests/fuzz/regressions/<target>/ so that
# test_fuzz_regressions keeps it.
#
#   bash tests/fuzz/run.sh [SECONDS [TARGET...]]     SECONDS per target, default 30
#
# A script rather than CMake targets: the fuzzers need clang with -fsanitize=fuzzer on
# a few host sources, while the CMake project needs nvcc and builds everything with one C
# compiler. Each target is compiled from just the C files it needs (no CUDA code, no
# fp2host library; the options target takes the sm90 shape check, kernels/sm90_shape.c, and
# the page-size check, kernels/pages.c);
# cli.h includes kernels/fp2.h, which needs the CUDA headers only.
# FUZZ_CC picks the compiler (default: clang).
set -eu
cd "$(dirname "$0")/../.."

seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(safetensors options plot)

cc=${FUZZ_CC:-}
if [ -z "$cc" ]; then
  for c in clang clang-14; do command -v "$c" >/dev/null 2>&1 && { cc=$c; break; }; done
fi
if [ -z "$cc" ]; then
  echo "fuzz: clang not found (apt-get install clang libclang-rt-dev)" >&2
  exit 1
fi
# nvcc may be a symlink (/usr/local/bin/nvcc on some images): resolve it before looking
# for the toolkit's include directory beside it.
cuda_include=
for nvcc in "$(command -v nvcc || true)" /usr/local/cuda/bin/nvcc; do
  [ -n "$nvcc" ] && [ -e "$nvcc" ] || continue
  dir=$(dirname "$(dirname "$(readlink -f "$nvcc")")")/include
  [ -f "$dir/cuda_runtime_api.h" ] && { cuda_include=$dir; break; }
done
if [ -z "$cuda_include" ]; then
  echo "fuzz: cuda_runtime_api.h not found beside nvcc or in /usr/local/cuda (kernels/fp2.h needs it)" >&2
  exit 1
fi

out=build-fuzz
mkdir -p "$out"
flags=(-std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -Wall -Wextra -Wno-missing-field-initializers
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
       -Isrc -Isrc/base -Isrc/data -Isrc/oracle -Isrc/run -Isrc/record -Isrc/peers -Isrc/driver -Ikernels
       -I"$cuda_include")
sources_safetensors=(src/data/safetensors.c src/data/qkv_file.c src/data/tensor.c src/base/numeric.c src/base/error.c
                     src/base/infile.c src/base/outfile.c)
libs_safetensors=(-lcjson -lm)
sources_options=(src/driver/cli.c src/data/requests.c src/base/error.c src/base/text_format.c kernels/sm90_shape.c
                 kernels/pages.c kernels/status.c)
libs_options=(-lm)
sources_plot=(src/record/plot_table.c src/record/report_load.c src/base/infile.c src/base/outfile.c src/base/error.c)
libs_plot=(-lcjson -lm)

for t in "${targets[@]}"; do
  case $t in
    safetensors|options|plot) ;;
    *) echo "fuzz: unknown target '$t' (safetensors, options, plot)" >&2; exit 2 ;;
  esac
  src="sources_$t[@]"
  lib="libs_$t[@]"
  if ! "$cc" "${flags[@]}" -o "$out/fuzz_$t" "tests/fuzz/fuzz_$t.c" "${!src}" "${!lib}" \
       2>"$out/build_$t.log"; then
    cat "$out/build_$t.log" >&2
    echo "fuzz: cannot build fuzz_$t with $cc (libFuzzer comes with libclang-rt-dev)" >&2
    exit 1
  fi
done

# A fresh copy of the seeds each run: new inputs the fuzzer keeps go there, not into git.
pids=()
for t in "${targets[@]}"; do
  rm -rf "$out/corpus_$t" "$out/artifacts/$t"
  mkdir -p "$out/corpus_$t" "$out/artifacts/$t"
  cp tests/fuzz/corpus/"$t"/* "$out/corpus_$t/"
  dirs=("$out/corpus_$t")
  [ -d "tests/fuzz/regressions/$t" ] && dirs+=("tests/fuzz/regressions/$t")
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$out/fuzz_$t" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -max_len=65536 \
      -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$out/artifacts/$t/" "${dict[@]}" \
      "${dirs[@]}" >"$out/fuzz_$t.log" 2>&1 &
  pids+=($!)
done

failed=0
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if wait "${pids[$i]}"; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz_$t.log")
    echo "fuzz_$t: ${runs:-?} inputs in ${seconds} s, no finding"
  else
    failed=1
    echo "fuzz_$t: FINDING (log: $out/fuzz_$t.log, input: $out/artifacts/$t/)" >&2
    tail -n 60 "$out/fuzz_$t.log" >&2
  fi
done
exit $failed
