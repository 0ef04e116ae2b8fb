# Where the time of the sparse pass goes, per length: quantisation (FP8), pooling, selection
# (fused scoring and thresholding), attention without correction, and the correction.
# Usage: gnuplot -c breakdown.gp DATA.dat OUT.png   (fp2bench plot RESULT.json writes DATA.dat)
# columns: len quantise.median_ms pool.median_ms select.median_ms attend_uncorrected.median_ms correction_ms

script_dir = ARG0
i = strlen(script_dir)
while (i > 0 && script_dir[i:i] ne "/") { i = i - 1 }
load (i > 0 ? script_dir[1:i] : "")."style.gp"
set output ARG2

set title "Time of each stage of the sparse pass"
set xlabel "sequence length [tokens]"
set ylabel "time [ms]"
set logscale x 2
set logscale y 10
set xtics ("1K" 1024, "2K" 2048, "4K" 4096, "8K" 8192, "16K" 16384, "32K" 32768, \
           "64K" 65536, "128K" 131072, "256K" 262144)
set key top left opaque box lc rgb "#d8d8d8"

names = "quantise pool select attention correction"
plot for [c=2:6] ARG1 using 1:(column(c) > 0 ? column(c) : NaN) with linespoints ls (c - 1) title word(names, c - 1)
