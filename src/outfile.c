#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

char *outfile_temp(const char *path) {
  size_t cap = strlen(path) + 32;
  char *tmp = xmalloc(cap);
  snprintf(tmp, cap, "%s.tmp.%ld", path, (long)getpid());
  return tmp;
}

int outfile_settle(const char *tmp, const char *path, int ok, char *err) {
  if (ok && rename(tmp, path) == 0) return 0;
  if (ok) err_set(err, "cannot write '%s': %s", path, strerror(errno));
  unlink(tmp); /* best effort: the error already set is the one to report */
  return -1;
}

/* All of data to fd, resuming after signals and short writes. */
static int write_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t w = write(fd, data, len);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    data += w;
    len -= (size_t)w;
  }
  return 0;
}

int outfile_write(const char *path, const void *data, size_t len, char *err) {
  char *tmp = outfile_temp(path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    err_set(err, "cannot write '%s': %s", path, strerror(errno));
    free(tmp);
    return -1;
  }
  /* fsync before the rename, so that a crash just after it cannot leave an empty file */
  int ok = write_all(fd, data, len) == 0 && fsync(fd) == 0;
  if (!ok) err_set(err, "cannot write '%s': %s", path, strerror(errno));
  if (close(fd) != 0 && ok) {
    err_set(err, "cannot write '%s': %s", path, strerror(errno));
    ok = 0;
  }
  int rc = outfile_settle(tmp, path, ok, err);
  free(tmp);
  return rc;
}
