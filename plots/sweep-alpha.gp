# Sweep of the threshold alpha (paper Tab. 9): relative L2 error against full attention with
# and without mean correction (left axis, log) and the selected density (right axis), per
# dtype. The paper's densities at alpha 0.2 and 0.0125 (5.2% and 23.6% at 64K, FP8, H20)
# are marked points.
# Usage: gnuplot -c sweep-alpha.gp DATA.dat OUT.png   (fp2bench plot RESULT.json writes DATA.dat)
# columns: alpha rel_error_corrected rel_error_uncorrected density
# series: dtype

script_dir = ARG0
i = strlen(script_dir)
while (i > 0 && script_dir[i:i] ne "/") { i = i - 1 }
load (i > 0 ? script_dir[1:i] : "")."style.gp"
set output ARG2

stats ARG1 using 1 nooutput
blocks = STATS_blocks

set title "Threshold sweep: error against full attention, with and without correction"
set xlabel "alpha (keep blocks with E >= alpha * max E)"
set ylabel "relative L2 error"
set y2label "density [% of causal pairs]"
set logscale x 2
set xtics ("0.0125" 0.0125, "0.025" 0.025, "0.05" 0.05, "0.1" 0.1, "0.2" 0.2, "0.4" 0.4)
set logscale y 10
set ytics nomirror
set y2tics
set y2range [0:*]
set key center right opaque box lc rgb "#d8d8d8"

$paper << EOD
0.2 5.2
0.0125 23.6
EOD

plot for [b=0:blocks-1] ARG1 index b using 1:2 with linespoints ls 1 dt b+1 title (b == 0 ? "error, corrected" : ""), \
     for [b=0:blocks-1] ARG1 index b using 1:3 with linespoints ls 2 dt b+1 title (b == 0 ? "error, uncorrected" : ""), \
     for [b=0:blocks-1] ARG1 index b using 1:(100 * $4) axes x1y2 with linespoints ls 3 dt b+1 \
         title (b == 0 ? "density (right axis)" : ""), \
     for [b=0:blocks-1] ARG1 index b using 1:(NaN) with lines lc rgb "black" dt b+1 title columnheader(1), \
     $paper using 1:2 axes x1y2 with points ls 9 title "paper density, 64K FP8 (H20)"
