# Operator speedup of the sparse pass (index stage + sparse attention) over each dense
# baseline measured in the same run, against sequence length; one panel line per baseline
# and dtype; FlexAttention, FlashPrefill V2 and HPC-Ops kernel for kernel (their time on our
# index over our attention without correction, neither with an index stage), and FlashPrefill
# V2's whole pass (its own index and corrected attention) over ours. The paper's 128K numbers (H20: 27.2x
# over FlashAttention-2 in BF16, 47.3x in FP8) are marked points.
# Usage: gnuplot -c speedup.gp DATA.dat OUT.png [PRESENT]   (fp2bench plot RESULT.json writes
# DATA.dat and gives PRESENT, the columns holding data: a peer that did not run gets no line)
# columns: len speedup_dense speedup_fa2 speedup_cudnn speedup_sdpa_cudnn speedup_flex speedup_flex_kernel speedup_fpv2 speedup_fpv2_kernel speedup_hpc
# optional: speedup_fa2 speedup_cudnn speedup_sdpa_cudnn speedup_flex speedup_flex_kernel speedup_fpv2 speedup_fpv2_kernel speedup_hpc
# series: dtype

script_dir = ARG0
i = strlen(script_dir)
while (i > 0 && script_dir[i:i] ne "/") { i = i - 1 }
load (i > 0 ? script_dir[1:i] : "")."style.gp"
set output ARG2

stats ARG1 using 1 nooutput
blocks = STATS_blocks

set title "Speedup of the sparse operator (index + attention) over dense attention"
set xlabel "sequence length [tokens]"
set ylabel "speedup [x]"
set logscale x 2
set logscale y 2
set xtics ("1K" 1024, "2K" 2048, "4K" 4096, "8K" 8192, "16K" 16384, "32K" 32768, \
           "64K" 65536, "128K" 131072, "256K" 262144)
set key top left opaque box lc rgb "#d8d8d8"
set offsets graph 0.03, graph 0.03, 0, 0

$paper << EOD
131072 27.2
131072 47.3
EOD

# Each data block is one dtype (its first line names it) drawn with its own dash type;
# columns 2.. are the baselines that ran, one colour each.
names = "ours-dense FA2 cuDNN cuDNN-SDPA FlexAttention Flex,kernel-for-kernel FlashPrefill-V2 FPV2,kernel-for-kernel HPC-Ops,kernel-for-kernel"
present = ARGC >= 3 ? ARG3 : "2 3 4 5 6 7 8 9 10"
baselines = ""
do for [w in present] { if (int(w) > 1) { baselines = baselines." ".w } }
plot for [b=0:blocks-1] for [w in baselines] ARG1 index b using 1:(column(int(w))) with linespoints \
         ls (int(w) == 10 ? 11 : int(w) - 1) dt b+1 title (b == 0 ? word(names, int(w) - 1) : ""), \
     for [b=0:blocks-1] ARG1 index b using 1:(NaN) with lines lc rgb "black" dt b+1 title columnheader(1), \
     $paper using 1:2 with points ls 9 title "paper, 128K vs FA2 (H20)"
