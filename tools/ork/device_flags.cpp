#include "device_flags.h"

namespace ork::cli {

const std::vector<OptionSpec> kSimOptions = {
    {{"--sim-window-mb"}, true, "simulated IOVA window per domain in MiB (ORK_SIM_WINDOW_MB, default 4096)"},
    {{"--sim-domains"}, true, "simulated IOMMU domains (ORK_SIM_DOMAINS, default 16)"},
    {{"--sim-cores"}, true, "simulated NPU cores (ORK_SIM_CORES, default 3)"},
};

npu::DeviceOptions device_options(const Args& args, const std::string& def) {
  npu::DeviceOptions o = npu::DeviceOptions::from_env();
  o.kind = args.get_or("--device", def);
  o.sim_window_bytes =
      uint64_t(args.get_int("--sim-window-mb", int64_t(o.sim_window_bytes >> 20), 1, 4096)) << 20;
  o.sim_domains = uint32_t(args.get_int("--sim-domains", o.sim_domains, 1, 16));
  o.sim_cores = uint32_t(args.get_int("--sim-cores", o.sim_cores, 1, 3));
  return o;
}

}  // namespace ork::cli
