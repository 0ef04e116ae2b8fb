/* Rendering a result document with its experiment's gnuplot script (fp2bench plot). */
#ifndef FP2_PLOT_RENDER_H
#define FP2_PLOT_RENDER_H

#include <cjson/cJSON.h>

#include "plot_table.h"

/* The table of spec's columns from doc (plot_write_table), built in memory and written whole to
   path (outfile_write). 0, or -1 with err. */
int plot_write_dat(const char *path, const cJSON *doc, const plot_spec *spec, const char *source, char *err);

/* A temporary file's name (TMPDIR or /tmp), reserved; the caller frees it. NULL with err. */
char *plot_temp_file(char *err);

/* gnuplot (the path of the binary) runs `gnuplot -c script dat IMAGE present` into a temporary
   image, which is checked and then written to png as a whole (a regular file replaced
   atomically, anything else written in place). 0, or -1 with err. */
int plot_render(const char *gnuplot, const char *script, const char *dat, const char *png, const char *present,
                char *err);

#endif
