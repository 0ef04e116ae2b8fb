/* Input files opened without surprises: only a regular file is read, and the check is made
   before open() can block (a FIFO without a writer would wait forever) and again on the
   opened descriptor (the path may change in between). */
#ifndef FP2_INFILE_H
#define FP2_INFILE_H

#include <stdio.h>

/* path opened for reading in binary mode; NULL with err ("cannot open 'x': ..." or
   "'x' is a fifo, not a regular file") otherwise. */
FILE *infile_open(const char *path, char *err);

/* The whole file (up to 256 MiB), NUL-terminated, owned by the caller; NULL with err when it
   cannot be read. */
char *read_text_file(const char *path, size_t *len, char *err);

#endif
