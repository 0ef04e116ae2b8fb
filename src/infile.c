#include "infile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

/* What a file that is not regular is, for the message. */
static const char *kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a fifo";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a plain file";
}

static int regular(const char *path, const struct stat *st, char *err) {
  if (S_ISREG(st->st_mode)) return 0;
  err_set(err, "'%s' is %s, not a regular file", path, kind(st->st_mode));
  return -1;
}

FILE *infile_open(const char *path, char *err) {
  struct stat st;
  if (stat(path, &st) != 0) {
    err_set(err, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  if (regular(path, &st, err) != 0) return NULL;
  /* O_NONBLOCK: should a FIFO take the path's place after the stat, open returns at once */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    err_set(err, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  FILE *f = NULL;
  if (fstat(fd, &st) != 0)
    err_set(err, "cannot open '%s': %s", path, strerror(errno));
  else if (regular(path, &st, err) == 0 && fcntl(fd, F_SETFL, 0) == 0 && !(f = fdopen(fd, "rb")))
    err_set(err, "cannot open '%s': %s", path, strerror(errno));
  if (!f) close(fd);
  return f;
}
