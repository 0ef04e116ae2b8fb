/* Reading result files back (plot, reproduce, regress): apart from the writer in report.c,
   which needs the GPU's description, so that the fuzz targets can build this alone. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "infile.h"

/* Experiment names become file names (plots/<experiment>.gp), so nothing else passes. */
static int is_name(const char *s) {
  return *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(s);
}

/* Member `key` of the document with the type that is_type checks; -1 with err naming it. */
static int expect_member(const cJSON *doc, const char *key, cJSON_bool (*is_type)(const cJSON *),
                         const char *type, const char *path, char *err) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(doc, key);
  if (!item) {
    err_set(err, "'%s' has no '%s': not an fp2bench result", path, key);
    return -1;
  }
  if (!is_type(item)) {
    err_set(err, "'%s': '%s' is not %s", path, key, type);
    return -1;
  }
  return 0;
}

static int check_shape(const cJSON *doc, const char *path, char *err) {
  if (!cJSON_IsObject(doc)) {
    err_set(err, "'%s' is not a json object: not an fp2bench result", path);
    return -1;
  }
  if (expect_member(doc, "schema", cJSON_IsString, "a string", path, err) != 0) return -1;
  const char *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema")->valuestring;
  if (strcmp(schema, REPORT_SCHEMA) != 0) {
    err_set(err, "'%s' has schema '%s', expected '%s'", path, schema, REPORT_SCHEMA);
    return -1;
  }
  if (expect_member(doc, "experiment", cJSON_IsString, "a string", path, err) != 0 ||
      expect_member(doc, "provenance", cJSON_IsObject, "an object", path, err) != 0 ||
      expect_member(doc, "config", cJSON_IsObject, "an object", path, err) != 0 ||
      expect_member(doc, "rows", cJSON_IsArray, "an array", path, err) != 0)
    return -1;
  const char *experiment = cJSON_GetObjectItemCaseSensitive(doc, "experiment")->valuestring;
  if (!is_name(experiment)) {
    err_set(err, "'%s': experiment '%s' is not a name (letters, digits, '_', '-')", path, experiment);
    return -1;
  }
  int i = 0;
  const cJSON *row;
  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(doc, "rows")) {
    if (!cJSON_IsObject(row)) {
      err_set(err, "'%s': rows[%d] is not an object", path, i);
      return -1;
    }
    i++;
  }
  return 0;
}

int report_load(const char *path, cJSON **doc, char *err) {
  *doc = NULL;
  size_t len;
  char *text = read_text_file(path, &len, err);
  if (!text) return -1;
  /* len + 1 takes in the NUL, so that require_null_terminated rejects trailing text. */
  const char *end = NULL;
  cJSON *d = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
  if (!d) {
    int line = 1;
    for (const char *p = text; end && p < end; p++) line += *p == '\n';
    err_set(err, "'%s' is not valid json (line %d)", path, line);
    free(text);
    return -1;
  }
  free(text);
  if (check_shape(d, path, err) != 0) {
    cJSON_Delete(d);
    return -1;
  }
  *doc = d;
  return 0;
}
