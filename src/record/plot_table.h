/* The table that `fp2bench plot` gives a gnuplot script, built from a result document.

   The script declares which row keys become the columns of the table in a header line
       # columns: len density density_per_head.*
   where "a.b" is field b of object a (or element b of array a) and "a.*" expands to
   a.0 .. a.(n-1) for the longest array a among the rows; a missing, null or non-scalar
   value is NaN, true/false are 1/0, strings are double-quoted. Every column must have a
   value in at least one row (else the result is not what the script draws), except those
   also named on a line
       # optional: speedup_fa2 speedup_flex
   (a peer that did not run). An optional line
       # series: method
   splits the rows into one data block per distinct value of that key (blocks separated
   by two blank lines, in order of first appearance, each opened by a comment naming the
   value and then a line holding the value quoted in every column, so that the script
   can plot `for [i=0:*] ARG1 index i ... title columnheader(1)`). */
#ifndef FP2_PLOT_TABLE_H
#define FP2_PLOT_TABLE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

#define PLOT_MAX_COLUMNS 64
#define PLOT_KEY_LEN 128

typedef struct plot_spec {
  int ncols;
  char cols[PLOT_MAX_COLUMNS][PLOT_KEY_LEN]; /* row keys as the script wrote them */
  unsigned char optional[PLOT_MAX_COLUMNS];  /* 1: may have no value in any row */
  char series[PLOT_KEY_LEN];                 /* "" when the rows form one block */
} plot_spec;

/* The "# columns:", "# optional:" and "# series:" lines of a script's text; `script` names
   it in messages. 0, or -1 with err. */
int plot_spec_parse(const char *text, const char *script, plot_spec *spec, char *err);

/* Checks that doc is what the script draws: every column that is not optional has a value
   in some row (-1 with err naming the first that has none). Writes into present the table's
   column numbers (1-based, space-separated) that hold a value in some row, for the script
   to leave out the others (gnuplot's ARG3). */
int plot_check(const cJSON *doc, const plot_spec *spec, const char *result, const char *script, char *present,
               size_t len, char *err);

/* The rows of doc as the table the script reads; `source` names the result in its comment. */
void plot_write_table(FILE *f, const cJSON *doc, const plot_spec *spec, const char *source);

#endif
