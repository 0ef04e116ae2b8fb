# Shared preamble of the fp2bench plots, loaded first by every script (see density.gp
# for how a script finds it). Sets the terminal, the grid and the line styles, so that
# every figure looks alike; the script then sets the output to ARG2 itself (within a
# `load`ed file gnuplot hides the ARGn variables):
#   ls 1      fp2bench, this run
#   ls 2..5   peers measured in the same run
#   ls 9      the paper's own numbers, as marked points
#   ls 10     detail behind the main line (per-head curves)
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 1000,640 noenhanced font "sans,12" linewidth 1.2
} else {
  set terminal png size 1000,640 noenhanced font "sans,12" linewidth 1.2
}

set border 3
set tics nomirror
set grid xtics ytics lc rgb "#d8d8d8" lw 1 dt 1
set key top right opaque box lc rgb "#d8d8d8"

set style line 1 lc rgb "#1f77b4" lw 2.5 pt 7 ps 1.2
set style line 2 lc rgb "#d62728" lw 2 pt 5 ps 1.1
set style line 3 lc rgb "#2ca02c" lw 2 pt 9 ps 1.3
set style line 4 lc rgb "#9467bd" lw 2 pt 11 ps 1.3
set style line 5 lc rgb "#ff7f0e" lw 2 pt 13 ps 1.3
set style line 6 lc rgb "#8c564b" lw 2 pt 15 ps 1.3
set style line 7 lc rgb "#e377c2" lw 2 pt 4 ps 1.3
set style line 8 lc rgb "#17becf" lw 2 pt 8 ps 1.3
set style line 11 lc rgb "#bcbd22" lw 2 pt 12 ps 1.3
set style line 9 lc rgb "#000000" lw 2 pt 6 ps 2
set style line 10 lc rgb "#b8b8b8" lw 1 pt 1 ps 0.6
