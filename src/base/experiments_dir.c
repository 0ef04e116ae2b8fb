#include "experiments_dir.h"

#include <stdio.h>
#include <stdlib.h>

const char *experiment_file(const char *file, char *buf, size_t len) {
  const char *dir = getenv("FP2_EXPERIMENTS_DIR");
  snprintf(buf, len, "%s/%s", dir ? dir : FP2_SOURCE_DIR "/experiments", file);
  return buf;
}
