#include "gpu_info.h"

#include <ctype.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

int gpu_probe(char *why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    /* Without any driver the runtime says "driver version is insufficient": name the
       real cause in that case. */
    if (gpu_driver_version() == 0)
      err_set(why, "no NVIDIA driver is installed");
    else
      err_set(why, "%s", cudaGetErrorString(e));
    cudaGetLastError(); /* clear it, so that no later CUDA check reports this error */
    return 0;
  }
  if (n == 0) err_set(why, "the driver reports no device");
  return n;
}

int gpu_count(void) { return gpu_probe(NULL); }

int gpu_current(void) {
  int device;
  if (gpu_count() == 0 || cudaGetDevice(&device) != cudaSuccess) return -1;
  return device;
}

/* -1 with err naming what could not be read, and the error cleared, so that no later
   CUDA check reports it. */
static int describe_failed(cudaError_t e, const char *what, int device, char *err) {
  err_set(err, "cannot read the %s of cuda device %d: %s", what, device, cudaGetErrorString(e));
  cudaGetLastError();
  return -1;
}

int gpu_describe(int device, gpu_desc *out, char *err) {
  memset(out, 0, sizeof *out);
  struct cudaDeviceProp prop;
  cudaError_t e = cudaGetDeviceProperties(&prop, device);
  if (e != cudaSuccess) return describe_failed(e, "properties", device, err);
  snprintf(out->name, sizeof out->name, "%s", prop.name);
  out->sm_count = prop.multiProcessorCount;
  out->cc_major = prop.major;
  out->cc_minor = prop.minor;
  out->memory_bytes = (int64_t)prop.totalGlobalMem;
  out->l2_bytes = prop.l2CacheSize;
  /* The peak clocks left cudaDeviceProp in CUDA 13; the attributes still hold them (kHz). */
  int sm_khz, mem_khz;
  if ((e = cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device)) != cudaSuccess)
    return describe_failed(e, "sm clock", device, err);
  if ((e = cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device)) != cudaSuccess)
    return describe_failed(e, "memory clock", device, err);
  out->clock_max_sm_mhz = sm_khz / 1000;
  out->clock_max_mem_mhz = mem_khz / 1000;
  e = cudaDeviceGetPCIBusId(out->pci_bus_id, (int)sizeof out->pci_bus_id, device);
  if (e != cudaSuccess) return describe_failed(e, "pci bus id", device, err);
  return 0;
}

/* The few NVML declarations we use (nvml.h is not needed at build time). */
typedef int nvml_return;                 /* nvmlReturn_t; 0 is NVML_SUCCESS */
typedef struct nvml_device *nvml_device; /* nvmlDevice_t */
enum { NVML_SUCCESS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

static struct {
  int tried, ok;
  nvml_return (*by_pci_bus_id)(const char *bus_id, nvml_device *device);
  nvml_return (*clock_info)(nvml_device device, int type, unsigned int *mhz);
} nvml;

/* Loads and initializes NVML once per process; it stays loaded until exit, as the
   result document reads clocks at its start and again at its end. Returns 1 when usable. */
static int nvml_ready(void) {
  if (nvml.tried) return nvml.ok;
  nvml.tried = 1;
  void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return 0;
  nvml_return (*init)(void) = (nvml_return(*)(void))dlsym(lib, "nvmlInit_v2");
  nvml.by_pci_bus_id =
      (nvml_return(*)(const char *, nvml_device *))dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
  nvml.clock_info = (nvml_return(*)(nvml_device, int, unsigned int *))dlsym(lib, "nvmlDeviceGetClockInfo");
  if (!init || !nvml.by_pci_bus_id || !nvml.clock_info || init() != NVML_SUCCESS) {
    dlclose(lib);
    return 0;
  }
  nvml.ok = 1;
  return 1;
}

gpu_clocks gpu_clocks_now(const gpu_desc *d) {
  gpu_clocks c = {-1, -1};
  /* By PCI bus id, not by index: NVML numbers every GPU of the machine, while CUDA's
     numbering follows CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER. */
  nvml_device dev;
  if (!nvml_ready() || nvml.by_pci_bus_id(d->pci_bus_id, &dev) != NVML_SUCCESS) return c;
  unsigned int mhz;
  if (nvml.clock_info(dev, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS) c.sm_mhz = (int)mhz;
  if (nvml.clock_info(dev, NVML_CLOCK_MEM, &mhz) == NVML_SUCCESS) c.mem_mhz = (int)mhz;
  return c;
}

int gpu_runtime_version(void) {
  int v = 0;
  return cudaRuntimeGetVersion(&v) == cudaSuccess ? v : 0;
}

int gpu_driver_version(void) {
  int v = 0;
  return cudaDriverGetVersion(&v) == cudaSuccess ? v : 0;
}

void gpu_version_string(int version, char *buf, size_t len) {
  snprintf(buf, len, "%d.%d", version / 1000, version % 1000 / 10);
}

void gpu_name_slug(const char *name, char *buf, size_t len) {
  const char *w = strrchr(name, ' ');
  snprintf(buf, len, "%.60s", w ? w + 1 : name);
  for (char *c = buf; *c; c++) *c = isalnum((unsigned char)*c) ? (char)tolower((unsigned char)*c) : '-';
}

void gpu_slug(char *buf, size_t len) {
  gpu_desc d;
  char err[ERR_LEN];
  int dev = gpu_current();
  if (dev < 0 || gpu_describe(dev, &d, err) != 0) {
    snprintf(buf, len, "cpu");
    return;
  }
  gpu_name_slug(d.name, buf, len);
}
