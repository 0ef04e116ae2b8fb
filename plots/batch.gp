# Continuous batching: the time of one batch of mixed requests (index stage + attention) beside
# each of its requests run alone, summed, and our dense pass on the batch, per dtype.
# Usage: gnuplot -c batch.gp DATA.dat OUT.png [PRESENT]   (fp2bench plot RESULT.json writes
# DATA.dat and gives PRESENT, the columns holding data: without singles (--no-singles), no bar)
# columns: dtype index_ms attend.median_ms dense.median_ms singles_total_ms
# optional: singles_total_ms

script_dir = ARG0
i = strlen(script_dir)
while (i > 0 && script_dir[i:i] ne "/") { i = i - 1 }
load (i > 0 ? script_dir[1:i] : "")."style.gp"
set output ARG2

set title "One batch against its requests alone and against dense attention"
set ylabel "time [ms]"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key below
set yrange [0:*]

present = ARGC >= 3 ? ARG3 : "1 2 3 4 5"
singles = strstrt(" ".present." ", " 5 ") > 0
# Without singles the bar is left out of the plot command (a histogram of no points is an error).
alone = singles ? "'' using 5 ls 2 title 'each request alone, summed', " : ""
eval "plot ARG1 using ($2 + $3):xtic(1) ls 1 title 'the batch (index + attention)', ".alone. \
     "'' using 4 ls 3 title 'dense attention on the batch'"
