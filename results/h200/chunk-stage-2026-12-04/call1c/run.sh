#!/usr/bin/env bash
# Call 1c (planned 2026-12-05; no device was lent in the session that wrote it): the cached pool
# under the select, U (branch pool-under-select, 4570237: fp2_pool's progress counters, the
# sm90 BF16 select waiting per stage on them), against its base C (csr-one-kernel, e157101);
# both built by ../build.sh into .carry/d4, the same carry as call 1. Run it after calls 1 and
# 1b, as device time allows.
# U's GPU tests, gpu_pooled_cache three times (the select reads what a running grid writes:
# a missed wait shows as an index or means that differ from the uncached pass), and its
# memcheck; chunked (each chunk's index with the cache must equal the one without: the
# command fails otherwise) at 64K in 8K and 16K chunks and at 128K in 8K chunks, alternated C
# U twice at 128K. ncu is left out: it serialises the kernels whose overlap this is about.
# Nothing here is a record.
source results/h200/chunk-stage-2026-12-04/steps.sh
U=.carry/d4/U
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t-U 40 $U/$t; done
for i in 2 3; do step gpu_pooled_cache-U-$i 40 $U/gpu_pooled_cache; done
step memcheck-cache-U 90 compute-sanitizer --tool memcheck --error-exitcode 9 $U/gpu_pooled_cache
step chunked-64k-U 60 $U/fp2bench chunked --backend gpu --len 64k --chunk 8k,16k --out $W/chunked-64k-U-$SECONDS.json
for v in C U C U; do
  step chunked-$v-$SECONDS 45 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
finish
