/* Output files that never destroy what is at their path. A regular file, or a path that
   does not exist yet, is made under a temporary name beside its destination (same
   directory, so the final rename is atomic) and renamed into place only when complete,
   keeping the old file's mode: a failed run never leaves half a file. Anything else at
   the path (a symlink, a device such as /dev/null, a FIFO) is written in place, through
   the link, so that it stays what it is; its write errors are reported. */
#ifndef FP2_OUTFILE_H
#define FP2_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct outfile {
  FILE *f;     /* where to write */
  char *path;  /* the destination */
  char *tmp;   /* the temporary name, or NULL when writing in place */
} outfile;

/* Opens path for writing as described above. 0, or -1 with err. */
int outfile_open(outfile *o, const char *path, char *err);

/* Finishes: when ok and every write succeeded, syncs and renames into place (0);
   otherwise removes the temporary file (-1, with err set unless ok was 0, when the caller's
   error stands). Frees o's names either way. */
int outfile_close(outfile *o, int ok, char *err);

/* Writes len bytes to path that way. 0, or -1 with err. */
int outfile_write(const char *path, const void *data, size_t len, char *err);

/* Up-front check of a destination, before any work: it is not a directory and the place
   can be written (the directory for a new or regular file, the path itself otherwise).
   0, or -1 with err. */
int outfile_check(const char *path, char *err);

/* An output option checked before any work: a NULL path or "-" (stdout) passes; otherwise
   outfile_check, and the path must name none of others[0..n) (the inputs and the other
   outputs; entries with a NULL path are skipped). 0, or -1 with err naming both options. */
typedef struct named_file {
  const char *option; /* "--data", "RESULT.json", ... */
  const char *path;
} named_file;
int outfile_check_option(const char *option, const char *path, const named_file *others, int n, char *err);

#endif
