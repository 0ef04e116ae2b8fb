# Chunked prefill: total time (index stage + attention) of the prompt in query chunks, relative
# to one pass over it, and the density each gives; "+cache" marks the chunks run with the pooled
# cache (the means of earlier chunks' key blocks read, not pooled again).
# Usage: gnuplot -c chunked.gp DATA.dat OUT.png   (fp2bench plot RESULT.json writes DATA.dat)
# columns: chunk time_vs_one_pass density index_ms attend_ms mode

script_dir = ARG0
i = strlen(script_dir)
while (i > 0 && script_dir[i:i] ne "/") { i = i - 1 }
load (i > 0 ? script_dir[1:i] : "")."style.gp"
set output ARG2

set title "Chunked prefill against one pass (the first bar, chunk = whole prompt)"
set xlabel "query chunk [tokens]"
set ylabel "time [ms]"
set y2label "density [%]"
set ytics nomirror
set y2tics
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set key below horizontal
set bmargin 6

plot ARG1 using 4:xtic(sprintf("%d%s", $1, strcol(6) eq "chunked+cache" ? " +cache" : "")) ls 2 title "index stage", \
     '' using 5 ls 1 title "attention", \
     '' using 0:(100 * $3) axes x1y2 with points ls 9 title "density (right axis)"
