#!/usr/bin/env bash
# The one call of 2026-12-06 (fourth session) that dumped main's select kernels in SASS, as it
# ran on an H100 (cuobjdump is there, not on the build machine): 0ff7129's libfp2.so from
# ../chunk-stage-2026-12-04/build.sh's HEAD, both instances of select_sm90_kernel (BF16, then FP8).
tar xJf .carry/d4/variants.tar.xz -C .carry/d4 && nvidia-smi --query-gpu=name --format=csv,noheader && cuobjdump -sass .carry/d4/HEAD/libfp2.so > /tmp/all.sass 2>&1; grep -n 'Function' /tmp/all.sass | head -80; awk '/Function : .*select_sm90_kernel/{p=1} p&&/Function : /&&!/select_sm90_kernel/{p=0} p' /tmp/all.sass | xz > $OUT/select-sm90.sass.xz; ls -la $OUT
