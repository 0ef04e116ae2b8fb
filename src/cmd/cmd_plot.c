/* fp2bench plot: renders a result document with the gnuplot script of its experiment,
   plots/<experiment>.gp, run as `gnuplot -c SCRIPT DATA.dat OUT.png PRESENT` after checking
   that the result holds what the script draws (plot_table.h: its columns, and PRESENT, the
   columns that hold data). */
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
#include "plot_render.h"
#include "plot_table.h"
#include "report.h"
#include "subprocess.h"

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
  size_t len;
  char *text = read_text_file(script, &len, err);
  plot_spec spec;
  const int spec_ok = text && plot_spec_parse(text, script, &spec, err) == 0;
  free(text);
  if (!spec_ok) {
    fail("plot: %s", err);
    return EXIT_RUNTIME;
  }
  if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "rows")) == 0) {
    fail("plot: '%s' has no rows to plot", result);
    return EXIT_USAGE;
  }
  char present[PLOT_MAX_COLUMNS * 8];
  if (plot_check(doc, &spec, result, script, present, sizeof present, err) != 0) {
    fail("plot: %s", err);
    return EXIT_USAGE;
  }
  if (find_in_path("gnuplot", gnuplot, sizeof gnuplot) != 0) {
    fail("plot: gnuplot not found: install gnuplot-nox");
    return EXIT_RUNTIME;
  }
  char *temp = keep_dat ? NULL : plot_temp_file(err);
  const char *table = keep_dat ? keep_dat : temp;
  if (!table) {
    fail("plot: %s", err);
    return EXIT_RUNTIME;
  }
  int ok = plot_write_dat(table, doc, &spec, result, err) == 0 && plot_render(gnuplot, script, table, png, present, err) == 0;
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
