/* fp2bench plot: renders a result document with the gnuplot script of its experiment,
   plots/<experiment>.gp, run as `gnuplot -c SCRIPT DATA.dat OUT.png`.

   The script declares which row keys become the columns of DATA.dat in a header line
       # columns: len density density_per_head.*
   where "a.b" is field b of object a (or element b of array a) and "a.*" expands to
   a.0 .. a.(n-1) for the longest array a among the rows; a missing, null or non-scalar
   value is NaN, true/false are 1/0, strings are double-quoted. An optional line
       # series: method
   splits the rows into one data block per distinct value of that key (blocks separated
   by two blank lines, in order of first appearance, each opened by a comment naming the
   value and then a line holding the value quoted in every column, so that the script
   can plot `for [i=0:*] ARG1 index i ... title columnheader(1)`). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "error.h"
#include "infile.h"
#include "outfile.h"
#include "report.h"
#include "subprocess.h"


#define PLOT_MAX_COLUMNS 64
#define PLOT_KEY_LEN 128

typedef struct plot_spec {
  int ncols;
  char cols[PLOT_MAX_COLUMNS][PLOT_KEY_LEN]; /* row keys as the script wrote them */
  char series[PLOT_KEY_LEN];                 /* "" when the rows form one block */
} plot_spec;

/* Copies the whitespace-separated words of `line` into words[0..max); -1 when one is too
   long or there are too many. */
static int parse_words(const char *line, char words[][PLOT_KEY_LEN], int max, int *n) {
  *n = 0;
  for (const char *p = line + strspn(line, " \t"); *p; p += strspn(p, " \t\r\n")) {
    size_t len = strcspn(p, " \t\r\n");
    if (len == 0) break;
    if (*n == max || len >= PLOT_KEY_LEN) return -1;
    memcpy(words[*n], p, len);
    words[(*n)++][len] = '\0';
    p += len;
  }
  return 0;
}

/* The "# columns:" and "# series:" lines of a script. */
static int read_spec(const char *script, plot_spec *spec, char *err) {
  memset(spec, 0, sizeof *spec);
  FILE *f = infile_open(script, err);
  if (!f) return -1;
  char *line = NULL;
  size_t cap = 0;
  int bad = 0, nseries = 0;
  char series[1][PLOT_KEY_LEN];
  while (!bad && getline(&line, &cap, f) > 0) {
    if (strncmp(line, "# columns:", 10) == 0)
      bad = parse_words(line + 10, spec->cols, PLOT_MAX_COLUMNS, &spec->ncols) != 0;
    else if (strncmp(line, "# series:", 9) == 0) {
      bad = parse_words(line + 9, series, 1, &nseries) != 0;
      if (nseries) memcpy(spec->series, series[0], PLOT_KEY_LEN);
    }
  }
  int read_failed = ferror(f);
  free(line);
  fclose(f); /* read-only: nothing to lose if closing fails */
  if (read_failed) {
    err_set(err, "cannot read '%s'", script);
    return -1;
  }
  if (bad) {
    err_set(err, "'%s': a '# columns:' or '# series:' line has more than %d keys or a key of %d+ bytes",
            script, PLOT_MAX_COLUMNS, PLOT_KEY_LEN);
    return -1;
  }
  if (spec->ncols == 0) {
    err_set(err, "'%s' declares no columns (a line '# columns: key key ...')", script);
    return -1;
  }
  return 0;
}

/* The value at a dotted key: "a.b" is field b of object a, or element b of array a. */
static const cJSON *lookup(const cJSON *row, const char *key) {
  const cJSON *v = row;
  for (const char *p = key; v; p++) {
    size_t len = strcspn(p, ".");
    char part[PLOT_KEY_LEN];
    snprintf(part, sizeof part, "%.*s", (int)len, p);
    if (cJSON_IsObject(v))
      v = cJSON_GetObjectItemCaseSensitive(v, part);
    else if (cJSON_IsArray(v) && len > 0 && len < 10 && strspn(part, "0123456789") == len)
      v = cJSON_GetArrayItem(v, atoi(part));
    else
      v = NULL;
    p += len;
    if (!*p) break;
  }
  return v;
}

/* "a.*" names the array a: its prefix length, or 0 for a plain key. */
static size_t wildcard_prefix(const char *key) {
  size_t len = strlen(key);
  return len > 2 && strcmp(key + len - 2, ".*") == 0 ? len - 2 : 0;
}

/* Columns each key becomes: 1, or for "a.*" the longest array a among the rows. */
static int column_width(const cJSON *rows, const char *key) {
  size_t prefix = wildcard_prefix(key);
  if (!prefix) return 1;
  char name[PLOT_KEY_LEN];
  snprintf(name, sizeof name, "%.*s", (int)prefix, key);
  int width = 0;
  const cJSON *row;
  cJSON_ArrayForEach(row, rows) {
    const cJSON *a = lookup(row, name);
    if (cJSON_IsArray(a) && cJSON_GetArraySize(a) > width) width = cJSON_GetArraySize(a);
  }
  return width;
}

/* One cell as gnuplot reads it, after `sep`. 15 significant digits give back the
   decimal numbers of the JSON without binary noise. */
static void write_value(FILE *f, const char *sep, const cJSON *v) {
  fputs(sep, f);
  if (cJSON_IsNumber(v)) {
    fprintf(f, "%.15g", v->valuedouble);
  } else if (cJSON_IsBool(v)) {
    fprintf(f, "%d", cJSON_IsTrue(v));
  } else if (cJSON_IsString(v)) {
    /* gnuplot has no escapes inside quotes: a quote or line break becomes a space */
    fputc('"', f);
    for (const char *s = v->valuestring; *s; s++) fputc(strchr("\"\n\r", *s) ? ' ' : *s, f);
    fputc('"', f);
  } else {
    fputs("NaN", f);
  }
}

static void write_row(FILE *f, const cJSON *row, const plot_spec *spec, const int *widths) {
  const char *sep = "";
  for (int c = 0; c < spec->ncols; c++) {
    size_t prefix = wildcard_prefix(spec->cols[c]);
    if (!prefix) {
      write_value(f, sep, lookup(row, spec->cols[c]));
      sep = " ";
    }
    for (int i = 0; prefix && i < widths[c]; i++) {
      char key[PLOT_KEY_LEN + 16];
      snprintf(key, sizeof key, "%.*s.%d", (int)prefix, spec->cols[c], i);
      write_value(f, sep, lookup(row, key));
      sep = " ";
    }
  }
  fputc('\n', f);
}

/* The series value of a row as text: the name of its data block. */
static void series_label(const cJSON *row, const char *key, char *buf, size_t len) {
  const cJSON *v = lookup(row, key);
  if (cJSON_IsString(v))
    snprintf(buf, len, "%s", v->valuestring);
  else if (cJSON_IsNumber(v))
    snprintf(buf, len, "%.15g", v->valuedouble);
  else if (cJSON_IsBool(v))
    snprintf(buf, len, "%s", cJSON_IsTrue(v) ? "true" : "false");
  else
    snprintf(buf, len, "null");
  buf[strcspn(buf, "\"\n\r")] = '\0'; /* it is written inside a comment and quotes */
}

static void write_header(FILE *f, const plot_spec *spec, const int *widths) {
  fputs("#", f);
  for (int c = 0; c < spec->ncols; c++) {
    size_t prefix = wildcard_prefix(spec->cols[c]);
    if (!prefix) fprintf(f, " %s", spec->cols[c]);
    for (int i = 0; prefix && i < widths[c]; i++) fprintf(f, " %.*s.%d", (int)prefix, spec->cols[c], i);
  }
  fputc('\n', f);
}

/* Rows grouped into one block per series value, in order of first appearance. */
static void write_series(FILE *f, const cJSON *rows, const plot_spec *spec, const int *widths, int ncells) {
  int n = cJSON_GetArraySize(rows);
  char(*labels)[PLOT_KEY_LEN] = xcalloc((size_t)n, sizeof *labels);
  for (int i = 0; i < n; i++)
    series_label(cJSON_GetArrayItem(rows, i), spec->series, labels[i], PLOT_KEY_LEN);
  int blocks = 0;
  for (int i = 0; i < n; i++) {
    int first = 1;
    for (int k = 0; k < i && first; k++) first = strcmp(labels[k], labels[i]) != 0;
    if (!first) continue;
    fprintf(f, "%s# %s = %s\n", blocks++ ? "\n\n" : "", spec->series, labels[i]);
    for (int c = 0; c < ncells; c++) fprintf(f, "%s\"%s\"", c ? " " : "", labels[i]);
    fputc('\n', f);
    write_header(f, spec, widths);
    for (int k = i; k < n; k++)
      if (strcmp(labels[k], labels[i]) == 0) write_row(f, cJSON_GetArrayItem(rows, k), spec, widths);
  }
  free(labels);
}

/* The rows of doc as the table the script reads. */
static void write_table(FILE *f, const cJSON *doc, const plot_spec *spec, const char *source) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
  int widths[PLOT_MAX_COLUMNS], ncells = 0;
  for (int c = 0; c < spec->ncols; c++) ncells += widths[c] = column_width(rows, spec->cols[c]);
  fprintf(f, "# fp2bench plot data: experiment %s, from %s\n",
          cJSON_GetObjectItemCaseSensitive(doc, "experiment")->valuestring, source);
  if (spec->series[0]) {
    write_series(f, rows, spec, widths, ncells);
    return;
  }
  write_header(f, spec, widths);
  const cJSON *row;
  cJSON_ArrayForEach(row, rows) write_row(f, row, spec, widths);
}

/* The table, built in memory and written whole. */
static int write_dat(const char *path, const cJSON *doc, const plot_spec *spec, const char *source,
                     char *err) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) {
    err_set(err, "cannot build the table for '%s': %s", path, strerror(errno));
    return -1;
  }
  write_table(f, doc, spec, source);
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
static int run_gnuplot(const char *gnuplot, const char *script, const char *dat, const char *png, char *err) {
  char *args[] = {"gnuplot", "-c", (char *)script, (char *)dat, (char *)png, NULL};
  int status = spawn_wait(gnuplot, args, 1, err);
  if (status == 0) return 0;
  if (status > 0) err_set(err, "gnuplot failed on '%s' (exit status %d)", script, status);
  return -1;
}

/* A temporary file for gnuplot's table (when --dat does not ask to keep it) or image. */
static char *temp_file(char *err) {
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
static int render(const char *gnuplot, const char *script, const char *dat, const char *png, char *err) {
  char *tmp = temp_file(err);
  if (!tmp) return -1;
  size_t len = 0;
  char *image = NULL;
  int ok = run_gnuplot(gnuplot, script, dat, tmp, err) == 0 && (image = read_text_file(tmp, &len, err)) != NULL;
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

/* RESULT.json -> RESULT.png */
static char *default_png(const char *result) {
  size_t len = strlen(result);
  if (len > 5 && strcmp(result + len - 5, ".json") == 0) len -= 5;
  char *png = xmalloc(len + 5);
  memcpy(png, result, len);
  memcpy(png + len, ".png", 5);
  return png;
}

/* Finds the experiment's script, checks what the plot needs, then writes the table and
   the image. Returns an exit code. */
static int plot_result(const cJSON *doc, const char *result, const char *png, const char *keep_dat) {
  const char *experiment = cJSON_GetObjectItemCaseSensitive(doc, "experiment")->valuestring;
  const char *dir = getenv("FP2_PLOTS_DIR");
  char script[4096], gnuplot[4096], err[ERR_LEN];
  snprintf(script, sizeof script, "%s/%s.gp", dir ? dir : FP2_SOURCE_DIR "/plots", experiment);
  if (access(script, R_OK) != 0) {
    fail("plot: no plot script for experiment '%s' ('%s': %s)", experiment, script, strerror(errno));
    return EXIT_USAGE;
  }
  plot_spec spec;
  if (read_spec(script, &spec, err) != 0) {
    fail("plot: %s", err);
    return EXIT_RUNTIME;
  }
  if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "rows")) == 0) {
    fail("plot: '%s' has no rows to plot", result);
    return EXIT_USAGE;
  }
  if (find_in_path("gnuplot", gnuplot, sizeof gnuplot) != 0) {
    fail("plot: gnuplot not found: install gnuplot-nox");
    return EXIT_RUNTIME;
  }
  char *temp = keep_dat ? NULL : temp_file(err);
  const char *table = keep_dat ? keep_dat : temp;
  if (!table) {
    fail("plot: %s", err);
    return EXIT_RUNTIME;
  }
  int ok = write_dat(table, doc, &spec, result, err) == 0 && render(gnuplot, script, table, png, err) == 0;
  if (temp) {
    unlink(temp); /* best effort: a leftover temporary file is harmless */
    free(temp);
  }
  if (!ok) {
    fail("plot: %s", err);
    return EXIT_RUNTIME;
  }
  printf("wrote %s\n", png);
  if (keep_dat) printf("wrote %s\n", keep_dat);
  return EXIT_OK;
}

int cmd_plot(int argc, char **argv) {
  static const char png_default[] = "RESULT.png"; /* shown by --help; replaced below */
  const char *result = NULL, *png = png_default, *keep_dat = NULL;
  const opt_spec specs[] = {
      {"RESULT.json", OPT_POSITIONAL, &result, NULL, "the result document to plot", NULL},
      {"--out", OPT_STRING, &png, "OUT.png", "the image (also -o)", NULL},
      {"--dat", OPT_STRING, &keep_dat, "OUT.dat", "also keep the table given to gnuplot", NULL},
  };
  /* cli_parse knows long options only: spell the usual -o as --out. */
  char **args = xmalloc(((size_t)argc + 1) * sizeof *args);
  for (int i = 0; i <= argc; i++) args[i] = i < argc && strcmp(argv[i], "-o") == 0 ? "--out" : argv[i];
  int rc = cli_parse(argc, args, "plot RESULT.json [-o OUT.png] [--dat OUT.dat]",
                     "Renders a result with plots/<experiment>.gp (gnuplot -c SCRIPT DATA OUT.png).\n"
                     "FP2_PLOTS_DIR overrides the directory of the scripts.",
                     specs, NOPTS(specs));
  free(args); /* the options point into argv, never into args */
  if (rc) return rc == 1 ? EXIT_OK : rc;
  if (!result) {
    fail("plot: missing RESULT.json (see fp2bench plot --help)");
    return EXIT_USAGE;
  }
  cJSON *doc;
  char err[ERR_LEN];
  char *derived = png == png_default ? default_png(result) : NULL;
  const char *image = derived ? derived : png;
  const named_file for_image[] = {{"RESULT.json", result}, {"--dat", keep_dat}}, for_dat[] = {{"RESULT.json", result}};
  if (outfile_check_option("--out", image, for_image, NOPTS(for_image), err) != 0 ||
      outfile_check_option("--dat", keep_dat, for_dat, NOPTS(for_dat), err) != 0) {
    fail("plot: %s", err);
    free(derived);
    return EXIT_USAGE;
  }
  if (report_load(result, &doc, err) != 0) {
    fail("plot: %s", err);
    free(derived);
    return EXIT_USAGE;
  }
  rc = plot_result(doc, result, image, keep_dat);
  free(derived);
  cJSON_Delete(doc);
  return rc;
}
