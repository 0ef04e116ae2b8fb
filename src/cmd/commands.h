/* The subcommands of fp2bench: each takes its own argv (argv[0] is its name) and
   returns an exit code from error.h. */
#ifndef FP2_COMMANDS_H
#define FP2_COMMANDS_H

int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_density(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_regress(int argc, char **argv);
int cmd_speedup(int argc, char **argv);
int cmd_sweep_alpha(int argc, char **argv);
int cmd_correction(int argc, char **argv);
int cmd_breakdown(int argc, char **argv);
int cmd_chunked(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_hpc_compare(int argc, char **argv);
int cmd_reproduce(int argc, char **argv);

#endif
