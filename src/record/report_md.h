/* REPORT.md (fp2bench reproduce) from result documents (report.h): a section per result. */
#ifndef FP2_REPORT_MD_H
#define FP2_REPORT_MD_H

#include <cjson/cJSON.h>
#include <stdio.h>

/* A section's heading: the title and, from its result where there is one (doc may be NULL),
   the lengths and heads it ran at (a --small run's are not the paper's). */
void report_md_heading(FILE *f, const char *title, const cJSON *doc);

/* The body of one section: provenance (command, GPU, commit, date; the result's `<file>.json`
   and plot `<file>.png`), the table of the row keys in columns (space-separated; a.b for a
   nested field; len and chunk written as sizes), and the paper's statements, each once. */
void report_md_section(FILE *f, const char *file, const char *columns, const cJSON *doc);

#endif
