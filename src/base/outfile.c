#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

/* The directory of path ("." for a bare name), malloc'd. */
static char *parent_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strcpy(xmalloc(2), ".");
  size_t len = slash == path ? 1 : (size_t)(slash - path);
  char *dir = xmalloc(len + 1);
  memcpy(dir, path, len);
  dir[len] = '\0';
  return dir;
}

/* outfile_check on what lstat found at path (exists: 0 where nothing is there yet). */
static int check_at(const char *path, int exists, const struct stat *st, char *err) {
  if (!*path) {
    err_set(err, "an empty file name cannot be written");
    return -1;
  }
  if (exists && S_ISDIR(st->st_mode)) {
    err_set(err, "cannot write '%s': it is a directory", path);
    return -1;
  }
  const int in_place = exists && !S_ISREG(st->st_mode);
  char *dir = in_place ? NULL : parent_dir(path);
  const int rc = access(in_place ? path : dir, W_OK);
  if (rc != 0) err_set(err, "cannot write '%s': %s", path, strerror(errno));
  free(dir);
  return rc == 0 ? 0 : -1;
}

int outfile_check(const char *path, char *err) {
  struct stat st = {0};
  const int exists = *path && lstat(path, &st) == 0;
  return check_at(path, exists, &st, err);
}

/* 1 when a and b name one file: the same text, or the same existing file by device and
   inode (through links). */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (strcmp(a, b) == 0) return 1;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int outfile_check_option(const char *option, const char *path, const named_file *others, int n, char *err) {
  if (!path || strcmp(path, "-") == 0) return 0;
  for (int i = 0; i < n; i++)
    if (others[i].path && same_file(path, others[i].path)) {
      err_set(err, "%s: '%s' is also the file of %s, which it would overwrite", option, path, others[i].option);
      return -1;
    }
  char why[ERR_LEN];
  if (outfile_check(path, why) == 0) return 0;
  err_set(err, "%s: %s", option, why);
  return -1;
}

/* In place: no O_CREAT (the path exists), O_NONBLOCK so that a FIFO without a reader fails
   at once instead of waiting forever, then blocking writes. */
static int open_in_place(outfile *o, char *err) {
  int fd = open(o->path, O_WRONLY | O_TRUNC | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 || fcntl(fd, F_SETFL, 0) != 0 || !(o->f = fdopen(fd, "wb"))) {
    err_set(err, "cannot write '%s': %s", o->path, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  return 0;
}

/* A temporary file beside the destination, with the mode of the file it replaces. */
static int open_temporary(outfile *o, const struct stat *old, char *err) {
  size_t cap = strlen(o->path) + 32;
  o->tmp = xmalloc(cap);
  snprintf(o->tmp, cap, "%s.tmp.%ld", o->path, (long)getpid());
  int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd >= 0 && old && fchmod(fd, old->st_mode & 07777) != 0) {
    close(fd);
    unlink(o->tmp);
    fd = -1;
  }
  if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
    err_set(err, "cannot write '%s': %s", o->path, strerror(errno));
    if (fd >= 0) {
      close(fd);
      unlink(o->tmp);
    }
    return -1;
  }
  return 0;
}

int outfile_open(outfile *o, const char *path, char *err) {
  memset(o, 0, sizeof *o);
  struct stat st = {0};
  const int exists = *path && lstat(path, &st) == 0; /* the one look at what is there */
  if (check_at(path, exists, &st, err) != 0) return -1;
  o->path = strcpy(xmalloc(strlen(path) + 1), path);
  int rc = exists && !S_ISREG(st.st_mode) ? open_in_place(o, err) : open_temporary(o, exists ? &st : NULL, err);
  if (rc != 0) {
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
  }
  return rc;
}

int outfile_close(outfile *o, int ok, char *err) {
  /* fsync before the rename, so that a crash just after it cannot leave an empty file; a
     device written in place need not (and often cannot) sync */
  int wrote = ok && fflush(o->f) == 0 && !ferror(o->f) && (!o->tmp || fsync(fileno(o->f)) == 0);
  int saved = errno;
  if (fclose(o->f) != 0 && wrote) {
    wrote = 0;
    saved = errno;
  }
  if (wrote && o->tmp && rename(o->tmp, o->path) != 0) {
    wrote = 0;
    saved = errno;
  }
  if (ok && !wrote) err_set(err, "cannot write '%s': %s", o->path, strerror(saved));
  if (!wrote && o->tmp) unlink(o->tmp); /* best effort: the error already set is the one to report */
  free(o->path);
  free(o->tmp);
  memset(o, 0, sizeof *o);
  return wrote ? 0 : -1;
}

int outfile_write(const char *path, const void *data, size_t len, char *err) {
  outfile o;
  if (outfile_open(&o, path, err) != 0) return -1;
  if (len > 0) fwrite(data, 1, len, o.f); /* a short write leaves the stream's error flag set */
  return outfile_close(&o, 1, err);
}
