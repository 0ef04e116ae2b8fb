/* libFuzzer target C: what `fp2bench plot` reads and writes. The input is one byte choosing
   what stands at the two paths, then a gnuplot script's text up to the first NUL byte, then
   a result document. The script goes to plot_spec_parse; the result, at a path in a sandbox
   folder that is a regular file, a symlink to one, a FIFO or a folder (byte & 3), to
   report_load; a spec and a result that load go to plot_check and plot_write_table, the table
   through outfile.c to a destination that does not exist yet, is a regular file, a symlink
   to one, a FIFO without a reader or a folder ((byte >> 2) % 5). Each step either succeeds
   with what it promises or fails at once with a message naming its file: only a regular
   file (or a link to one) is read, a FIFO never blocks, a table replaces a regular file
   whole keeping its mode, goes through a link into its target and is refused by a FIFO
   without a reader or a folder, which stay what they were.
   Built by tests/fuzz/run.sh (clang, -fsanitize=fuzzer,address,undefined);
   tests/test_fuzz_regressions.c runs this same entry point on the committed inputs. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "fuzz_expect.h"
#include "infile.h"
#include "outfile.h"
#include "plot_table.h"
#include "report.h"

enum { PL_REGULAR, PL_SYMLINK, PL_FIFO, PL_FOLDER, PL_NONE };

static char pl_dir[512], pl_result[600], pl_out[600], pl_target[600];

/* Empties the sandbox (it holds only plain files, links, FIFOs and empty folders). */
static void pl_clear(void) {
  DIR *d = opendir(pl_dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", pl_dir, e->d_name);
    if (unlink(path) != 0) rmdir(path);
  }
  closedir(d);
}

static void pl_remove_sandbox(void) {
  pl_clear();
  rmdir(pl_dir);
}

/* A sandbox folder under $TMPDIR (or /tmp), unique to this process, removed at exit. */
static void pl_init_paths(void) {
  if (pl_dir[0]) return;
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  snprintf(pl_dir, sizeof pl_dir, "%s/fp2fuzz-plot-%ld", tmp, (long)getpid());
  FUZZ_EXPECT(mkdir(pl_dir, 0700) == 0, "cannot create the sandbox '%s'", pl_dir);
  snprintf(pl_result, sizeof pl_result, "%s/result.json", pl_dir);
  snprintf(pl_out, sizeof pl_out, "%s/out.dat", pl_dir);
  snprintf(pl_target, sizeof pl_target, "%s/target", pl_dir);
  atexit(pl_remove_sandbox);
}

static void pl_write(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  FUZZ_EXPECT(f != NULL, "cannot create '%s'", path);
  FUZZ_EXPECT(size == 0 || fwrite(data, 1, size, f) == size, "cannot write '%s'", path);
  FUZZ_EXPECT(fclose(f) == 0, "cannot write '%s'", path);
}

/* Puts a thing of the given kind at path (a symlink points to pl_target, holding data). */
static void pl_make(int kind, const char *path, const void *data, size_t size) {
  switch (kind) {
    case PL_REGULAR: pl_write(path, data, size); break;
    case PL_SYMLINK:
      pl_write(pl_target, data, size);
      FUZZ_EXPECT(symlink("target", path) == 0, "cannot link '%s'", path);
      break;
    case PL_FIFO: FUZZ_EXPECT(mkfifo(path, 0600) == 0, "cannot make the fifo '%s'", path); break;
    case PL_FOLDER: FUZZ_EXPECT(mkdir(path, 0700) == 0, "cannot make the folder '%s'", path); break;
  }
}

static mode_t pl_type(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0 ? st.st_mode : 0;
}

/* The file at path holds exactly len bytes of want. */
static void pl_expect_content(const char *path, const char *want, size_t len) {
  char err[ERR_LEN] = "";
  size_t got_len = 0;
  char *got = read_text_file(path, &got_len, err);
  FUZZ_EXPECT(got != NULL, "the table cannot be read back: %s", err);
  FUZZ_EXPECT(got_len == len && memcmp(got, want, len) == 0, "'%s' holds %zu bytes, not the table's %zu", path,
              got_len, len);
  free(got);
}

/* plot_check's promise: present lists ascending column numbers and, where no column is a
   wildcard (a.*, one number per element), every column that is not optional among them. */
static void pl_expect_present(const plot_spec *spec, const char *present) {
  unsigned char listed[PLOT_MAX_COLUMNS + 1] = {0};
  int wildcards = 0;
  for (int c = 0; c < spec->ncols; c++) wildcards |= strchr(spec->cols[c], '*') != NULL;
  long last = 0;
  for (const char *p = present; *p;) {
    char *end;
    long c = strtol(p, &end, 10);
    FUZZ_EXPECT(end != p && c > last && (wildcards || c <= spec->ncols), "present '%.80s' is not ascending in 1..%d",
                present, spec->ncols);
    FUZZ_EXPECT(*end == ' ' || *end == '\0', "present '%.80s' is not space-separated", present);
    if (c <= PLOT_MAX_COLUMNS) listed[c] = 1;
    last = c;
    p = *end ? end + 1 : end;
  }
  for (int c = 0; c < spec->ncols && !wildcards; c++)
    FUZZ_EXPECT(spec->optional[c] || listed[c + 1], "column '%s' passed the check without a value", spec->cols[c]);
}

/* The table written through outfile.c to a destination of the given kind. */
static void pl_write_table(int kind, const cJSON *doc, const plot_spec *spec) {
  char *want = NULL;
  size_t want_len = 0;
  FILE *mem = open_memstream(&want, &want_len);
  FUZZ_EXPECT(mem != NULL, "cannot open a memory stream");
  plot_write_table(mem, doc, spec, "result.json");
  FUZZ_EXPECT(fclose(mem) == 0, "cannot build the table in memory");

  static const char old[] = "an older table\n";
  pl_make(kind, pl_out, old, sizeof old - 1);
  if (kind == PL_REGULAR) FUZZ_EXPECT(chmod(pl_out, 0640) == 0, "cannot chmod '%s'", pl_out);
  const mode_t before = pl_type(pl_out);
  char err[ERR_LEN] = "";
  outfile o;
  const int checked = outfile_check(pl_out, err) == 0;
  const int opened = checked && outfile_open(&o, pl_out, err) == 0;
  if (opened) {
    plot_write_table(o.f, doc, spec, "result.json");
    FUZZ_EXPECT(outfile_close(&o, 1, err) == 0, "writing the table failed: %s", err);
  }
  switch (kind) {
    case PL_NONE:
    case PL_REGULAR:
      FUZZ_EXPECT(opened, "a table to a new or regular file was refused: %s", err);
      FUZZ_EXPECT(S_ISREG(pl_type(pl_out)), "'%s' is no longer a regular file", pl_out);
      if (kind == PL_REGULAR) FUZZ_EXPECT((pl_type(pl_out) & 07777) == 0640, "the file's mode was not kept");
      pl_expect_content(pl_out, want, want_len);
      break;
    case PL_SYMLINK:
      FUZZ_EXPECT(opened, "a table through a symlink was refused: %s", err);
      FUZZ_EXPECT(S_ISLNK(pl_type(pl_out)), "the symlink '%s' was replaced", pl_out);
      pl_expect_content(pl_target, want, want_len);
      break;
    case PL_FIFO:
    case PL_FOLDER:
      FUZZ_EXPECT(!opened, "a table was written to a %s", kind == PL_FIFO ? "fifo without a reader" : "folder");
      fuzz_expect_message("outfile", err, pl_out);
      FUZZ_EXPECT(pl_type(pl_out) == before, "'%s' changed type", pl_out);
      break;
  }
  free(want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  pl_init_paths();
  pl_clear();
  const int in_kind = data[0] & 3, out_kind = (data[0] >> 2) % 5;
  const char *body = (const char *)data + 1;
  const size_t body_len = size - 1;
  const char *nul = memchr(body, '\0', body_len);
  const size_t script_len = nul ? (size_t)(nul - body) : body_len;
  char *script = xmalloc(script_len + 1);
  memcpy(script, body, script_len);
  script[script_len] = '\0';
  const char *json = nul ? nul + 1 : body + body_len;

  char err[ERR_LEN] = "";
  plot_spec spec;
  const int parsed = plot_spec_parse(script, "x.gp", &spec, err) == 0;
  if (parsed)
    FUZZ_EXPECT(spec.ncols >= 1 && spec.ncols <= PLOT_MAX_COLUMNS, "a spec of %d columns", spec.ncols);
  else
    fuzz_expect_message("plot_spec_parse", err, "x.gp");
  free(script);

  pl_make(in_kind, pl_result, json, (size_t)(body + body_len - json));
  cJSON *doc = NULL;
  err[0] = '\0';
  if (report_load(pl_result, &doc, err) != 0) {
    fuzz_expect_message("report_load", err, pl_result);
    FUZZ_EXPECT(doc == NULL, "a failed report_load left a document");
  } else {
    FUZZ_EXPECT(in_kind == PL_REGULAR || in_kind == PL_SYMLINK, "report_load read a %s",
                in_kind == PL_FIFO ? "fifo" : "folder");
  }
  if (parsed && doc) {
    /* Room for every number: a column per element of an array, each at least 2 input bytes. */
    const size_t len = 8 * size + 8 * PLOT_MAX_COLUMNS;
    char *present = xmalloc(len);
    err[0] = '\0';
    if (plot_check(doc, &spec, "result.json", "x.gp", present, len, err) == 0)
      pl_expect_present(&spec, present);
    else
      fuzz_expect_message("plot_check", err, "result.json");
    free(present);
    pl_write_table(out_kind, doc, &spec);
  }
  cJSON_Delete(doc);
  return 0;
}
