#include "sm90_shape.h"

#include "status.h"

fp2_status fp2_sm90_shape_check(const fp2_params *p, const char *prefix) {
  if (p->dim != FP2_SM90_DIM || p->block != FP2_SM90_TILE || p->qtile != FP2_SM90_TILE)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "%sthe sm90 kernel takes --dim %d --block %d --qtile %d (got %d, %d, %d)",
                    prefix, FP2_SM90_DIM, FP2_SM90_TILE, FP2_SM90_TILE, p->dim, p->block, p->qtile);
  return FP2_OK;
}

fp2_status fp2_sm90_supports_shape(const fp2_params *p) { return fp2_sm90_shape_check(p, ""); }
