# Selected density against sequence length: the overall density of this run, each KV
# head's density behind it, and the paper's benchmark densities as marked points
# (DESIGN.md section 4: 74% at 4K down to 4.5% at 128K).
# Usage: gnuplot -c density.gp DATA.dat OUT.png   (fp2bench plot RESULT.json writes DATA.dat)
# columns: len density density_per_head.*

# style.gp lies beside this script, wherever gnuplot is started from.
script_dir = ARG0
i = strlen(script_dir)
while (i > 0 && script_dir[i:i] ne "/") { i = i - 1 }
load (i > 0 ? script_dir[1:i] : "")."style.gp"
set output ARG2

# Columns after len and density are per-head densities (as many as the run had heads).
stats ARG1 using 1 nooutput
heads = STATS_columns - 2

set title "Selected density against sequence length"
set xlabel "sequence length [tokens]"
set ylabel "density [% of causal (query, key) pairs]"
set logscale x 2
set xtics ("1K" 1024, "2K" 2048, "4K" 4096, "8K" 8192, "16K" 16384, "32K" 32768, \
           "64K" 65536, "128K" 131072, "256K" 262144, "512K" 524288, "1M" 1048576)
set yrange [0:105]
set offsets graph 0.03, graph 0.03, 0, 0

$paper << EOD
4096 74
8192 53
16384 32.2
32768 17.8
65536 9
131072 4.5
EOD

plot for [h=1:heads] ARG1 using 1:(100 * column(2 + h)) with lines ls 10 \
         title (h == 1 ? "per KV head" : ""), \
     ARG1 using 1:(100 * $2) with linespoints ls 1 title "fp2bench (this run)", \
     $paper using 1:2 with points ls 9 title "paper (FlashPrefill V2)", \
     $paper using 1:2:(sprintf("%g%%", $2)) with labels offset 2.2,0.8 notitle
