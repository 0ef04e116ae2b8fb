#!/usr/bin/env bash
# Call 9 of paged K/V (issue 14): the re-read's refactor (R = d80b482, whose kernels/, src/ and
# tests/ main's fbb1a15 repeats: one page_row for the pool and the paged amax, kv_pages_fill by
# lengths): gpu_paged, gpu_pooled_cache, gpu_kernels, and memcheck of gpu_paged.
set -u
tar xJf .carry/d4/variants.tar.xz -C .carry/d4
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64
W=$OUT/w; mkdir -p $W
for t in gpu_paged gpu_pooled_cache gpu_kernels; do
  timeout 60 .carry/d4/R/$t > $W/$t.log 2>&1; echo "$t rc=$?" | tee -a $W/steps.txt; done
timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 .carry/d4/R/gpu_paged > $W/memcheck-gpu_paged.log 2>&1
echo "memcheck gpu_paged rc=$?" | tee -a $W/steps.txt
for t in gpu_paged gpu_pooled_cache gpu_kernels memcheck-gpu_paged; do tail -2 $W/$t.log; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
