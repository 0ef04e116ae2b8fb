#include "infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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

char *read_text_file(const char *path, size_t *len, char *err) {
  enum { LIMIT = 256 << 20 }; /* far above any result; stops a mistaken /dev/zero */
  FILE *f = infile_open(path, err);
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = xmalloc(cap);
  for (;;) {
    n += fread(buf + n, 1, cap - 1 - n, f);
    if (n < cap - 1) break;
    if (cap > LIMIT) {
      err_set(err, "'%s' is larger than %d MiB: not a result file", path, LIMIT >> 20);
      fclose(f); /* read-only: nothing to lose if closing fails */
      free(buf);
      return NULL;
    }
    cap *= 2;
    buf = xrealloc(buf, cap);
  }
  int failed = ferror(f);
  fclose(f);
  if (failed) {
    err_set(err, "cannot read '%s'", path);
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}
