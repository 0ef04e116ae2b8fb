# Sourced by the gather's calls from call 5 on, after ../chunk-stage-2026-12-04/steps.sh and
# ../paged-attention-2026-12-05/steps.sh (step, $W, paged_finish).
# gather_gates NAME: build NAME's paged, kernel and pooled-cache tests, its checks against the
# oracle with pages of 16 (a mixed batch at g = 8; 16K+77 at 24:8, g = 3), and synccheck and
# memcheck of its paged test.
gather_gates() {
  local b=.carry/d4/$1
  for t in gpu_paged gpu_kernels gpu_pooled_cache; do step $t-$1 40 $b/$t; done
  step check-paged16-$1 60 $b/fp2bench check --backend gpu --rows 512 --kernel sm90 --paged 16 \
    --requests 1k,2x300/2k+77,640/4k+77,77
  step check-paged16-g3-$1 60 $b/fp2bench check --backend gpu --rows 256 --kernel sm90 --paged 16 --heads 24:8 \
    --len 16k+77
  for tool in synccheck memcheck; do
    step $tool-paged-$1 60 compute-sanitizer --tool $tool --error-exitcode 9 $b/gpu_paged
  done
}
