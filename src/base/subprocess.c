#include "subprocess.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"

extern char **environ; /* POSIX defines it but no header of C11 + POSIX declares it */

int spawn_wait(const char *path, char *const argv[], int stdout_null, char *err) {
  posix_spawn_file_actions_t actions;
  int e = posix_spawn_file_actions_init(&actions);
  if (e == 0 && stdout_null) e = posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  if (e == 0) e = posix_spawn(&pid, path, &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (e != 0) {
    err_set(err, "cannot run '%s': %s", path, strerror(e));
    return -1;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      err_set(err, "cannot wait for '%s': %s", path, strerror(errno));
      return -1;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  err_set(err, "'%s' was killed by signal %d", path, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return -1;
}

int find_in_path(const char *name, char *buf, size_t len) {
  if (strchr(name, '/')) { /* a path, as env takes it: not looked up */
    snprintf(buf, len, "%s", name);
    return access(buf, X_OK) == 0 ? 0 : -1;
  }
  const char *path = getenv("PATH");
  if (!path) path = "/usr/bin:/bin";
  for (const char *p = path;; p++) {
    size_t n = strcspn(p, ":");
    snprintf(buf, len, "%.*s/%s", (int)n, n ? p : ".", name);
    if (access(buf, X_OK) == 0) return 0;
    p += n;
    if (!*p) return -1;
  }
}
