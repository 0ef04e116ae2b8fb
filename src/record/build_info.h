/* Provenance of this build: written by cmake/build_info.cmake on every build (not at
   configure time) into <build>/generated/build_info.c. */
#ifndef FP2_BUILD_INFO_H
#define FP2_BUILD_INFO_H

extern const char *fp2_git_commit; /* full commit id, or "unknown" */
extern int fp2_git_dirty;          /* 1: the tree differs from the commit, 0: clean, -1: unknown */
extern const char *fp2_version;    /* the project's VERSION, or "unversioned" */

#endif
