# Our CSR block index against HPC-Ops' dense per-query-head uint8 mask (paper Fig. 5 and
# Tab. 7): index size in MiB per measured density (left axis, log), with what our gpu
# backend allocates for the index today, and, when the result was measured on a GPU, the
# sparse attention's time on each mask (right axis): ours, HPC-Ops' and FlashPrefill V2's
# (a peer skipped in that run has no line; the result's peers_skipped says why). The paper
# (from the V1 explainer): at 128K, 32:4 heads, 5%: 32 MB for HPC-Ops' mask against 6 MB for
# the CSR.
# Usage: gnuplot -c hpc-ops.gp DATA.dat OUT.png   (fp2bench plot RESULT.json writes DATA.dat)
# columns: density hpc_mask_bytes csr_bytes index_alloc_bytes attend.median_ms hpc.median_ms fpv2_kernel.median_ms
# optional: attend.median_ms hpc.median_ms fpv2_kernel.median_ms

script_dir = ARG0
i = strlen(script_dir)
while (i > 0 && script_dir[i:i] ne "/") { i = i - 1 }
load (i > 0 ? script_dir[1:i] : "")."style.gp"
set output ARG2

MiB = 1024.0 * 1024.0
set title "Block index: CSR against HPC-Ops' dense mask"
set xlabel "density [% of causal (query, key) pairs]"
set ylabel "index size [MiB]"
set logscale y
set key top left opaque box lc rgb "#d8d8d8"

# PRESENT (ARG3) lists the columns holding data: the times exist only in results measured on
# a GPU, and a peer skipped in that run has no column.
present = ARGC >= 3 ? ARG3 : "1 2 3 4 5 6 7"
has(c) = strstrt(" ".present." ", " ".c." ") > 0
timed = has(5)
if (timed) { set y2label "sparse attention [ms]"; set y2tics; set ytics nomirror }

sizes = "ARG1 using (100 * $1):($2 / MiB) with linespoints ls 1 title 'HPC-Ops mask (uint8 per query head)', \
         ARG1 using (100 * $1):($3 / MiB) with linespoints ls 2 title 'our CSR (offsets + indices)', \
         ARG1 using (100 * $1):($4 / MiB) with linespoints ls 3 title 'our index buffers as allocated'"
times = "ARG1 using (100 * $1):5 axes x1y2 with linespoints ls 4 title 'our sparse attention'"
if (has(6)) { times = times.", ARG1 using (100 * $1):6 axes x1y2 with linespoints ls 5 title 'HPC-Ops block-sparse FP8'" }
if (has(7)) { times = times.", ARG1 using (100 * $1):7 axes x1y2 with linespoints ls 6 title 'FlashPrefill V2 block-sparse'" }
if (timed) { plot @sizes, @times } else { plot @sizes }
