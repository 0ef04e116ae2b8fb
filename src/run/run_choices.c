#include "run_choices.h"

fp2_kernel kernel_auto_pick(const fp2_params *p, int cc_major) {
  const int fits = cc_major == 9 && fp2_sm90_supports_shape(p) == FP2_OK;
  return fits ? FP2_KERNEL_SM90 : FP2_KERNEL_PORTABLE;
}
