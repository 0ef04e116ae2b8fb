/* What --dtype, --backend and --kernel choose, spelled once: the option's choices, the enums
   in their order, and the names results record. */
#ifndef FP2_RUN_CHOICES_H
#define FP2_RUN_CHOICES_H

#include "fp2.h"

/* --dtype: "bf16" or "fp8" (fp2_dtype's order), as options take them and results record them. */
#define DTYPE_CHOICES "bf16|fp8"
static inline const char *dtype_name(int dtype) { return dtype == FP2_FP8 ? "fp8" : "bf16"; }

/* --backend: auto resolves to cpu or gpu (opts_backend). */
enum { BACKEND_AUTO, BACKEND_CPU, BACKEND_GPU };
#define BACKEND_CHOICES "auto|cpu|gpu"

/* --kernel: auto picks sm90 where it applies (kernel_auto_pick), portable elsewhere. Results
   record the kernel that ran by kernel_name (the cpu backend's rows: KERNEL_NAME_ORACLE), and
   config.kernel the choice by its name here. */
#define KERNEL_NAME_PORTABLE "portable"
#define KERNEL_NAME_SM90 "sm90"
#define KERNEL_NAME_ORACLE "oracle" /* the fp64 oracle attended, on the cpu */
enum { KERNEL_AUTO, KERNEL_PORTABLE, KERNEL_SM90 };
#define KERNEL_CHOICES "auto|" KERNEL_NAME_PORTABLE "|" KERNEL_NAME_SM90

/* The library's kernel for a --kernel choice other than auto (auto gives portable here; the
   gpu backend picks per GPU with kernel_auto_pick). */
static inline fp2_kernel kernel_of_choice(int choice) {
  return choice == KERNEL_SM90 ? FP2_KERNEL_SM90 : FP2_KERNEL_PORTABLE;
}

/* "sm90" or "portable", as results record them. */
static inline const char *kernel_name(fp2_kernel k) {
  return k == FP2_KERNEL_SM90 ? KERNEL_NAME_SM90 : KERNEL_NAME_PORTABLE;
}

/* The kernel --kernel auto runs for p on a GPU of compute capability cc_major.x: sm90 on
   sm_90 for a shape it takes (fp2_sm90_supports_shape), portable otherwise. */
fp2_kernel kernel_auto_pick(const fp2_params *p, int cc_major);

#endif
