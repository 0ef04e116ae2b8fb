/* Output files that appear whole or not at all: they are made under a temporary name
   beside their destination (same directory, so the final rename is atomic) and renamed
   into place only when complete, so a failed run never leaves half a file. */
#ifndef FP2_OUTFILE_H
#define FP2_OUTFILE_H

#include <stddef.h>

/* Writes len bytes to path that way (synced before the rename). 0, or -1 with err. */
int outfile_write(const char *path, const void *data, size_t len, char *err);

/* For files that another program fills: the temporary name "<path>.tmp.<pid>"
   (malloc'd, the caller frees it), then outfile_settle, which renames tmp to path when
   ok (0, or -1 with err when the rename fails) and otherwise removes tmp (-1, err left
   as the caller set it). */
char *outfile_temp(const char *path);
int outfile_settle(const char *tmp, const char *path, int ok, char *err);

#endif
