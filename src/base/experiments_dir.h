/* The experiments/ folder beside the sources: the specs' paper values and the helper scripts
   (peers.py) the program reads at run time. */
#ifndef FP2_EXPERIMENTS_DIR_H
#define FP2_EXPERIMENTS_DIR_H

#include <stddef.h>

/* experiments/<file> (FP2_EXPERIMENTS_DIR overrides the folder) into buf. */
const char *experiment_file(const char *file, char *buf, size_t len);

#endif
