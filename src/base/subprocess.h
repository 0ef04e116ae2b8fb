/* Running another program without a shell (arguments are passed as they are) and waiting
   for it: gnuplot for plots, fp2bench itself for a fresh candidate in regress. */
#ifndef FP2_SUBPROCESS_H
#define FP2_SUBPROCESS_H

#include <stddef.h>

/* Runs `path` with argv (NULL-terminated) and waits. stdout_null: send its standard output
   to /dev/null. Returns its exit status (0..255), or -1 with err when it could not be run or
   was killed by a signal. */
int spawn_wait(const char *path, char *const argv[], int stdout_null, char *err);

/* The program `name` names, as env finds it, into buf: a name with a slash as it is, a bare
   name as the first executable of that name on PATH. 0, or -1 when it is not executable. */
int find_in_path(const char *name, char *buf, size_t len);

#endif
