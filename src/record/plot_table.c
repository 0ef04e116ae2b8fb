#include "plot_table.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

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

int plot_spec_parse(const char *text, const char *script, plot_spec *spec, char *err) {
  memset(spec, 0, sizeof *spec);
  int bad = 0, nseries = 0, noptional = 0;
  char series[1][PLOT_KEY_LEN], (*optional)[PLOT_KEY_LEN] = xcalloc(PLOT_MAX_COLUMNS, PLOT_KEY_LEN);
  for (const char *line = text; *line && !bad; line += strcspn(line, "\n"), line += *line == '\n') {
    char buf[PLOT_MAX_COLUMNS * PLOT_KEY_LEN];
    snprintf(buf, sizeof buf, "%.*s", (int)strcspn(line, "\n"), line);
    if (strncmp(buf, "# columns:", 10) == 0)
      bad = parse_words(buf + 10, spec->cols, PLOT_MAX_COLUMNS, &spec->ncols) != 0;
    else if (strncmp(buf, "# optional:", 11) == 0)
      bad = parse_words(buf + 11, optional, PLOT_MAX_COLUMNS, &noptional) != 0;
    else if (strncmp(buf, "# series:", 9) == 0) {
      bad = parse_words(buf + 9, series, 1, &nseries) != 0;
      if (nseries) memcpy(spec->series, series[0], PLOT_KEY_LEN);
    }
  }
  for (int c = 0; c < spec->ncols; c++)
    for (int k = 0; k < noptional; k++) spec->optional[c] |= strcmp(spec->cols[c], optional[k]) == 0;
  free(optional);
  if (bad) {
    err_set(err, "'%s': a '# columns:', '# optional:' or '# series:' line has more than %d keys or a key of %d+ bytes",
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

void plot_write_table(FILE *f, const cJSON *doc, const plot_spec *spec, const char *source) {
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

/* Whether v is a value a cell shows (not NaN for a missing, null or non-scalar one). */
static int has_value(const cJSON *v) { return cJSON_IsNumber(v) || cJSON_IsBool(v) || cJSON_IsString(v); }

int plot_check(const cJSON *doc, const plot_spec *spec, const char *result, const char *script, char *present,
               size_t len, char *err) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
  const char *experiment = cJSON_GetObjectItemCaseSensitive(doc, "experiment")->valuestring;
  size_t used = 0;
  int number = 1;
  present[0] = '\0';
  for (int c = 0; c < spec->ncols; c++) {
    const size_t prefix = wildcard_prefix(spec->cols[c]);
    const int width = column_width(rows, spec->cols[c]);
    int found = 0;
    for (int i = 0; i < (prefix ? width : 1); i++, number++) {
      char key[PLOT_KEY_LEN + 16];
      if (prefix)
        snprintf(key, sizeof key, "%.*s.%d", (int)prefix, spec->cols[c], i);
      else
        snprintf(key, sizeof key, "%s", spec->cols[c]);
      int here = 0;
      const cJSON *row;
      cJSON_ArrayForEach(row, rows) here |= has_value(lookup(row, key));
      if (here && used < len) used += (size_t)snprintf(present + used, len - used, "%s%d", used ? " " : "", number);
      found |= here;
    }
    if (!found && !spec->optional[c]) {
      err_set(err, "'%s' (experiment '%s') has no '%s' in any row, which '%s' draws", result, experiment,
              spec->cols[c], script);
      return -1;
    }
  }
  return 0;
}
