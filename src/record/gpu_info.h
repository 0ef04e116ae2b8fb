/* What the machine's CUDA GPUs are and how fast they are clocked right now, for `info`
   and for the provenance of every result. Static properties come from the CUDA runtime;
   current clocks from NVML, loaded at run time so that the program needs no NVML at
   build time and still runs where the library is missing. Clocks are read, never set. */
#ifndef FP2_GPU_INFO_H
#define FP2_GPU_INFO_H

#include <stddef.h>
#include <stdint.h>

typedef struct gpu_desc {
  char name[256];
  char pci_bus_id[32]; /* "0000:19:00.0": how NVML finds the same device */
  int sm_count;
  int cc_major, cc_minor; /* compute capability, 9.0 on Hopper */
  int64_t memory_bytes;   /* global memory */
  int64_t l2_bytes;
  int clock_max_sm_mhz; /* peak clocks the runtime reports */
  int clock_max_mem_mhz;
} gpu_desc;

typedef struct gpu_clocks {
  int sm_mhz, mem_mhz; /* -1: unavailable (no NVML, or NVML does not know the device) */
} gpu_clocks;

/* CUDA devices visible to this process; 0 when there is no driver or no GPU (any error
   of cudaGetDeviceCount means 0). gpu_probe also says why in `why` (ERR_LEN bytes, may
   be NULL) when it returns 0, e.g. a driver older than the runtime. */
int gpu_count(void);
int gpu_probe(char *why);

/* The device the runtime will use (cudaGetDevice), or -1 when there is none. */
int gpu_current(void);

/* Static description of device `device`; 0, or -1 with the CUDA error in err. */
int gpu_describe(int device, gpu_desc *out, char *err);

/* Current SM and memory clocks of the device described by `d` (-1 when unknown). */
gpu_clocks gpu_clocks_now(const gpu_desc *d);

/* CUDA versions as the runtime encodes them (13000 for 13.0), 0 when unavailable
   (cudaDriverGetVersion says 0 when no driver is installed). */
int gpu_runtime_version(void);
int gpu_driver_version(void);

/* 13000 -> "13.0" into buf. */
void gpu_version_string(int version, char *buf, size_t len);

/* The folder name of results/<gpu>/ (tests/lib/gpu_slug.sh spells the same rule in shell):
   "NVIDIA H200" -> "h200", the last word of the name in lower case with anything but a letter
   or digit as '-'. gpu_slug: the current device's, or "cpu" without one. */
void gpu_name_slug(const char *name, char *buf, size_t len);
void gpu_slug(char *buf, size_t len);

#endif
