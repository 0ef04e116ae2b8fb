# Cost of the mean correction against sparsity (paper Fig. 6): extra time of the corrected
# sparse attention over the uncorrected one, in ms (left) and relative (right), per dtype.
# The paper (64K, H20): at most 12.2 ms dense, 3.6-4.5 ms and 18% (BF16) / 27% (FP8) at 90%.
# Usage: gnuplot -c correction.gp DATA.dat OUT.png   (fp2bench plot RESULT.json writes DATA.dat)
# columns: sparsity overhead_ms overhead
# series: dtype

script_dir = ARG0
i = strlen(script_dir)
while (i > 0 && script_dir[i:i] ne "/") { i = i - 1 }
load (i > 0 ? script_dir[1:i] : "")."style.gp"
set output ARG2

stats ARG1 using 1 nooutput
blocks = STATS_blocks

set title "Mean correction: extra time against sparsity"
set xlabel "sparsity [% of causal blocks dropped]"
set ylabel "extra time [ms]"
set y2label "relative overhead [%]"
set ytics nomirror
set y2tics
set key top left opaque box lc rgb "#d8d8d8"

$paper << EOD
90 18
90 27
EOD

plot for [b=0:blocks-1] ARG1 index b using (100 * $1):2 with linespoints ls 1 dt b+1 title (b == 0 ? "extra ms" : ""), \
     for [b=0:blocks-1] ARG1 index b using (100 * $1):(100 * $3) axes x1y2 with linespoints ls 2 dt b+1 \
         title (b == 0 ? "relative (right axis)" : ""), \
     for [b=0:blocks-1] ARG1 index b using 1:(NaN) with lines lc rgb "black" dt b+1 title columnheader(1), \
     $paper using 1:2 axes x1y2 with points ls 9 title "paper at 90%: 18% BF16, 27% FP8 (H20)"
