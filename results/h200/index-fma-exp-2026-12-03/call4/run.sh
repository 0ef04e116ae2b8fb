#!/usr/bin/env bash
# Call 4: the review commit (values_download_transposed on the problem's host prefixes), the
# FP8 sm90 checks that read V's codes back from V^T: a batch of two sequences with partial
# blocks at g = 3 (under memcheck) and 128K 8:8.
set -u
tar xJf .carry/s1/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64
W=$OUT/w; mkdir -p $W; X=build/fp2bench
compute-sanitizer --tool memcheck --error-exitcode 1 $X check --backend gpu --kernel sm90 --dtype fp8 --len 2k+77 --batch 2 --heads 24:8 --rows 64 > $W/san-memcheck.log 2>&1; echo "memcheck rc=$?" | tee -a $W/steps.txt
timeout 60 $X check --backend gpu --rows 128 --kernel sm90 --dtype fp8 --len 128k --data synth:llm --heads 8:8 > $W/check-fp8-128k.log 2>&1; echo "check-fp8-128k rc=$?" | tee -a $W/steps.txt
timeout 60 $X check --backend gpu --rows 64 --kernel sm90 --dtype fp8 --len 4k+33,16k --batch 2 --heads 32:8 > $W/check-fp8-batch.log 2>&1; echo "check-fp8-batch rc=$?" | tee -a $W/steps.txt
tail -3 $W/san-memcheck.log; tail -2 $W/check-fp8-128k.log | cut -c1-140; tail -3 $W/check-fp8-batch.log | cut -c1-140
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
