/* A result's plot: its table written whole, gnuplot run on it into a temporary image, the
   image written whole. */
#include "plot_render.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "infile.h"
#include "outfile.h"
#include "subprocess.h"

/* The table, built in memory and written whole. */
int plot_write_dat(const char *path, const cJSON *doc, const plot_spec *spec, const char *source, char *err) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) {
    err_set(err, "cannot build the table for '%s': %s", path, strerror(errno));
    return -1;
  }
  plot_write_table(f, doc, spec, source);
  int ok = !ferror(f);
  if (fclose(f) != 0 || !ok) { /* only memory can run out here */
    err_set(err, "cannot build the table for '%s': out of memory", path);
    free(text);
    return -1;
  }
  int rc = outfile_write(path, text, len, err);
  free(text);
  return rc;
}

/* Runs `gnuplot -c script dat png` without a shell (file names are passed as they are)
   and waits for it. gnuplot's stdout goes to /dev/null: if it cannot open the output it
   falls back to writing the image there. Its error messages stay on stderr. */
static int run_gnuplot(const char *gnuplot, const char *script, const char *dat, const char *png, const char *present,
                       char *err) {
  char *args[] = {"gnuplot", "-c", (char *)script, (char *)dat, (char *)png, (char *)present, NULL};
  int status = spawn_wait(gnuplot, args, 1, err);
  if (status == 0) return 0;
  if (status > 0) err_set(err, "gnuplot failed on '%s' (exit status %d)", script, status);
  return -1;
}

/* A temporary file for gnuplot's table (when --dat does not ask to keep it) or image. */
char *plot_temp_file(char *err) {
  const char *dir = getenv("TMPDIR");
  size_t cap = strlen(dir ? dir : "/tmp") + 32;
  char *path = xmalloc(cap);
  snprintf(path, cap, "%s/fp2plot-XXXXXX", dir ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) {
    err_set(err, "cannot create a temporary file in '%s': %s", dir ? dir : "/tmp", strerror(errno));
    free(path);
    return NULL;
  }
  close(fd); /* it only reserves the name: the writer replaces it */
  return path;
}

/* gnuplot draws into a temporary file, which is checked and then written to png as a whole
   (outfile_write: a regular file is replaced atomically, anything else written in place). */
int plot_render(const char *gnuplot, const char *script, const char *dat, const char *png, const char *present,
                char *err) {
  char *tmp = plot_temp_file(err);
  if (!tmp) return -1;
  size_t len = 0;
  char *image = NULL;
  int ok = run_gnuplot(gnuplot, script, dat, tmp, present, err) == 0 && (image = read_text_file(tmp, &len, err)) != NULL;
  if (ok && len == 0) {
    err_set(err, "gnuplot wrote no image with '%s'", script);
    ok = 0;
  }
  unlink(tmp); /* best effort: a leftover temporary file is harmless */
  free(tmp);
  ok = ok && outfile_write(png, image, len, err) == 0;
  free(image);
  return ok ? 0 : -1;
}
