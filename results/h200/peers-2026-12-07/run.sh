#!/usr/bin/env bash
# The same-run peers at 128K on main's kernels (HEAD of ../chunk-stage-2026-12-04/build.sh), H200
# only: FlashPrefill V2's own pass and its and HPC-Ops' sparse kernels on our mask (the recipe of
# ../shared/peers, assembled here into .peers by `experiments/build_peers.sh assemble` and carried),
# both dtypes (speedup-peers-128k.json, the record); then cuDNN, FA2, SDPA and FlexAttention in
# BF16 (3 trials; the dense peers take 0.25-0.45 s a run at 128K). About 330 s of an H200.
# Carry: .carry/d4/variants.tar.xz (`VARIANTS=HEAD ../chunk-stage-2026-12-04/build.sh`),
# .carry/libcjson.so.1 and .peers; run as `DEADLINE=400 bash results/h200/peers-2026-12-07/run.sh`.
H200_ONLY=1
source results/h200/chunk-stage-2026-12-04/steps.sh
step build-peers 240 env OUT=$W/peers-build bash experiments/build_peers.sh build .peers
if passed build-peers; then
  eval "$(bash experiments/build_peers.sh env .peers)"
  step speedup-peers-128k 150 $H/fp2bench speedup --backend gpu --len 128k --dtype both --peers fpv2,hpc \
    --out $W/speedup-peers-128k.json
fi
step speedup-dense-peers-128k-bf16 150 $H/fp2bench speedup --backend gpu --len 128k --dtype bf16 \
  --peers cudnn,torch --trials 3 --out $W/speedup-dense-peers-128k-bf16.json
verdicts
python3 results/h200/paged-attention-2026-12-05/summary.py $W
pack
