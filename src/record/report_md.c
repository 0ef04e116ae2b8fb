/* REPORT.md's sections: one result document as Markdown beside the paper's statements. */
#include "report_md.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "text_format.h"

static const cJSON *field(const cJSON *row, const char *key) {
  char first[64];
  const char *dot = strchr(key, '.');
  if (!dot) return cJSON_GetObjectItemCaseSensitive(row, key);
  snprintf(first, sizeof first, "%.*s", (int)(dot - key), key);
  return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, first), dot + 1);
}

/* A table cell; size: the column is a sequence length or chunk, written as 16K. */
static void cell(FILE *f, const cJSON *x, int size) {
  if (cJSON_IsNumber(x) && fabs(x->valuedouble) < 1e15 && x->valuedouble == floor(x->valuedouble)) {
    char buf[32];
    if (size)
      format_size(buf, sizeof buf, (int64_t)x->valuedouble, 1);
    else
      snprintf(buf, sizeof buf, "%lld", (long long)x->valuedouble); /* counts and bytes in full */
    fprintf(f, " %s |", buf);
  } else if (cJSON_IsNumber(x))
    fprintf(f, " %.4g |", x->valuedouble);
  else if (cJSON_IsString(x))
    fprintf(f, " %s |", x->valuestring);
  else if (cJSON_IsBool(x))
    fprintf(f, " %s |", cJSON_IsTrue(x) ? "yes" : "no");
  else
    fprintf(f, " - |");
}

/* A paper value's statement: its quote, else its statement; NULL when it has neither. */
static const char *statement(const cJSON *v) {
  const cJSON *q = cJSON_GetObjectItemCaseSensitive(v, "quote");
  if (!cJSON_IsString(q)) q = cJSON_GetObjectItemCaseSensitive(v, "statement");
  return cJSON_IsString(q) ? q->valuestring : NULL;
}

/* A statement as Markdown: the LaTeX the quotes keep verbatim (experiments/README.md) as the
   characters it stands for. */
static void put_statement(FILE *f, const char *s) {
  static const struct { const char *tex, *text; } symbols[] = {
      {"\\times", "×"}, {"\\alpha", "α"}, {"\\rho", "ρ"}, {"\\%", "%"},
  };
  while (*s) {
    size_t i = 0;
    while (i < sizeof symbols / sizeof symbols[0] && strncmp(s, symbols[i].tex, strlen(symbols[i].tex)) != 0) i++;
    if (i < sizeof symbols / sizeof symbols[0]) {
      fputs(symbols[i].text, f);
      s += strlen(symbols[i].tex);
    } else {
      fputc(*s++, f);
    }
  }
}

/* Whether v's statement is said by another value: the same words by an earlier one (several
   values quote one sentence), or inside a longer statement (a clause quoted on its own). */
static int said_elsewhere(const cJSON *values, const cJSON *v) {
  const char *mine = statement(v);
  int before = 1;
  const cJSON *e;
  cJSON_ArrayForEach(e, values) {
    if (e == v) {
      before = 0;
      continue;
    }
    const char *other = statement(e);
    if (!other) continue;
    if (strcmp(other, mine) == 0 ? before : strstr(other, mine) != NULL) return 1;
  }
  return 0;
}

void report_md_section(FILE *f, const char *file, const char *columns, const cJSON *doc) {
  const cJSON *prov = cJSON_GetObjectItemCaseSensitive(doc, "provenance");
  const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(prov, "gpu");
  const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(prov, "command");
  const cJSON *commit = cJSON_GetObjectItemCaseSensitive(prov, "git_commit");
  const cJSON *date = cJSON_GetObjectItemCaseSensitive(prov, "date_utc");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(gpu, "name");
  fprintf(f, "`%s` — %s, commit %.12s, %s. Data: `%s.json`, plot: `%s.png`.\n\n", cJSON_IsString(cmd) ? cmd->valuestring : "?", cJSON_IsString(name) ? name->valuestring : "no GPU",
          cJSON_IsString(commit) ? commit->valuestring : "?", cJSON_IsString(date) ? date->valuestring : "?", file,
          file);
  char cols[512];
  snprintf(cols, sizeof cols, "%s", columns);
  const char *names[32];
  int n = 0;
  for (char *t = strtok(cols, " "); t && n < 32; t = strtok(NULL, " ")) names[n++] = t;
  fprintf(f, "|");
  for (int i = 0; i < n; i++) fprintf(f, " %s |", names[i]);
  fprintf(f, "\n|");
  for (int i = 0; i < n; i++) fprintf(f, "---|");
  fprintf(f, "\n");
  const cJSON *row;
  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(doc, "rows")) {
    fprintf(f, "|");
    for (int i = 0; i < n; i++) cell(f, field(row, names[i]), strcmp(names[i], "len") == 0 || strcmp(names[i], "chunk") == 0);
    fprintf(f, "\n");
  }
  const cJSON *paper = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "config"), "paper");
  const cJSON *values = cJSON_GetObjectItemCaseSensitive(paper, "paper_values"), *v;
  if (cJSON_GetArraySize(values) > 0) {
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(paper, "source"), *pg = cJSON_GetObjectItemCaseSensitive(paper, "gpu");
    fprintf(f, "\nThe paper (%s, %s):\n\n", cJSON_IsString(src) ? src->valuestring : "?",
            cJSON_IsString(pg) ? pg->valuestring : "?");
    cJSON_ArrayForEach(v, values) {
      if (statement(v) && !said_elsewhere(values, v)) {
        fputs("- ", f);
        put_statement(f, statement(v));
        fputc('\n', f);
      }
    }
  }
  fprintf(f, "\n");
}

void report_md_heading(FILE *f, const char *title, const cJSON *doc) {
  const cJSON *config = cJSON_GetObjectItemCaseSensitive(doc, "config");
  const cJSON *lens = cJSON_GetObjectItemCaseSensitive(config, "len");
  const cJSON *hq = cJSON_GetObjectItemCaseSensitive(config, "hq"), *hkv = cJSON_GetObjectItemCaseSensitive(config, "hkv");
  const cJSON *first = cJSON_GetArrayItem(lens, 0), *last = cJSON_GetArrayItem(lens, cJSON_GetArraySize(lens) - 1);
  fprintf(f, "## %s", title);
  if (cJSON_IsNumber(first) && cJSON_IsNumber(last)) {
    char a[32], b[32];
    format_size(a, sizeof a, (int64_t)first->valuedouble, 1);
    format_size(b, sizeof b, (int64_t)last->valuedouble, 1);
    fprintf(f, first == last ? " at %s" : " at %s to %s", a, b);
  }
  if (cJSON_IsNumber(hq) && cJSON_IsNumber(hkv)) fprintf(f, ", %d:%d heads", hq->valueint, hkv->valueint);
  fprintf(f, "\n\n");
}
