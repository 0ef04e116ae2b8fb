/* gpu_info without assuming a GPU: probing never fails, versions format as "13.0", a GPU's
   name gives its results folder as reproduce names it ("NVIDIA H200" -> "h200"), a
   device that does not exist is an error with a reason, and clocks of a device NVML does
   not know are unavailable (-1), not invented. With a GPU, device 0 is described. */
#include <string.h>

#include "error.h"
#include "gpu_info.h"
#include "testing.h"

int main(void) {
  char buf[32];
  gpu_version_string(13000, buf, sizeof buf);
  EXPECT_MSG(strcmp(buf, "13.0") == 0, "13000 is '%s'", buf);
  gpu_version_string(12080, buf, sizeof buf);
  EXPECT_MSG(strcmp(buf, "12.8") == 0, "12080 is '%s'", buf);
  EXPECT(gpu_runtime_version() >= 12000); /* the runtime we link knows its own version */
  gpu_name_slug("NVIDIA H200", buf, sizeof buf);
  EXPECT_MSG(strcmp(buf, "h200") == 0, "'NVIDIA H200' is '%s'", buf);
  gpu_name_slug("NVIDIA GeForce RTX 4090", buf, sizeof buf);
  EXPECT_MSG(strcmp(buf, "4090") == 0, "'NVIDIA GeForce RTX 4090' is '%s'", buf);
  gpu_name_slug("A100-SXM4_80GB", buf, sizeof buf);
  EXPECT_MSG(strcmp(buf, "a100-sxm4-80gb") == 0, "'A100-SXM4_80GB' is '%s'", buf);

  char why[ERR_LEN] = "";
  int n = gpu_probe(why);
  EXPECT(n >= 0 && n == gpu_count());
  EXPECT_MSG(n > 0 || why[0] != '\0', "no GPU and no reason");
  EXPECT((n == 0) == (gpu_current() < 0));

  gpu_desc d;
  char err[ERR_LEN] = "";
  EXPECT(gpu_describe(n + 7, &d, err) == -1);
  EXPECT_MSG(strstr(err, "cuda device") != NULL, "err: %s", err);

  memset(&d, 0, sizeof d);
  snprintf(d.pci_bus_id, sizeof d.pci_bus_id, "ffff:ff:1f.7");
  gpu_clocks c = gpu_clocks_now(&d);
  EXPECT(c.sm_mhz == -1 && c.mem_mhz == -1);

  if (n > 0) {
    EXPECT_MSG(gpu_describe(0, &d, err) == 0, "%s", err);
    EXPECT(d.name[0] && d.sm_count > 0 && d.cc_major > 0 && d.memory_bytes > 0 && d.l2_bytes > 0);
    EXPECT(d.clock_max_sm_mhz > 0 && d.clock_max_mem_mhz > 0 && d.pci_bus_id[0]);
    EXPECT(gpu_driver_version() > 0);
  }
  return test_result("test_gpu_info");
}
