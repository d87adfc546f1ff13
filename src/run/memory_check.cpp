// memory_check.cpp: the memory estimates and the check of memory_check.hpp.
#include "src/run/memory_check.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "kernels/backend/runtime.hpp"
#include "kernels/wilson_clover.hpp"
#include "src/run/tasks.hpp"

namespace emprism::run {

namespace {

double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

std::string fmt_gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", gib(bytes));
  return buf;
}

// MemAvailable of /proc/meminfo in bytes, else the free pages (sysconf), else 0 (unknown: no check).
double host_available() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    std::istringstream s(line);
    std::string key;
    double kib = 0;
    if (s >> key >> kib && key == "MemAvailable:") return kib * 1024.0;
  }
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * page : 0.0;
}

}  // namespace

double memory_estimate(const Config& cfg, std::int64_t volume) {
  const double vh = volume / 2.0;
  auto per_precision = [&](double r) {
    const double gauge = 8 * vh * 18 * r, clover = 4 * vh * 72 * r, spinors = 16 * vh * 24 * r;
    // fp32: A compressed too, what its kernels read (kernels/clover_dynamic.hpp)
    const double compressed = r == 4 && kCloverDynamic<float> ? 2 * vh * sizeof(CloverSiteC) : 0;
    return gauge + clover + compressed + spinors;
  };
  switch (cfg.solver.precision) {
    case Precision::Single:
      return per_precision(4);
    case Precision::Double:
      return per_precision(8);
    case Precision::Mixed:
      return per_precision(4) + per_precision(8);
  }
  return 0;
}

MemoryNeed memory_need(const Config& cfg, std::int64_t local_volume) {
  MemoryNeed need;
  need.device = memory_estimate(cfg, local_volume);
  const double v = static_cast<double>(local_volume);
  const double gauge = 4 * 18 * 8 * v * 1.25, clover = 2 * 72 * 8 * v, spinors = 3 * 24 * 8 * v;
  double task = 0;
  double task_device = 0;
  for (const auto& t : make_tasks(cfg)) {
    task = std::max(task, t->host_bytes(local_volume));
    task_device = std::max(task_device, t->device_bytes(local_volume));
  }
  // Without [generate] the field is made on the device (a file read there a timeslice at a time) and stays there in
  // double with its halo for the whole run (gauge_setup.hpp's RunGauge); the host holds a copy of the block only with
  // [generate], or when the links are written (output.write_gauge) or checked on the host (dirac.reconstruct).
  const bool on_device = !cfg.generate.enabled;
  const bool host_copy = !on_device || cfg.output.write_gauge || cfg.dirac.reconstruct != 18;
  need.host = (host_copy ? gauge : 0) + clover + spinors + task;
  need.device += task_device + (on_device ? gauge : 0);
  return need;
}

MemoryHave memory_have(int ranks_on_node) {
  MemoryHave have;
  have.host = host_available() / std::max(1, ranks_on_node);
  have.device = static_cast<double>(backend::device_memory_bytes());
  return have;
}

std::string memory_refusal(const MemoryNeed& need, const MemoryHave& have, const std::string& local_lattice) {
  if (have.host <= 0) return "";         // unknown
  const bool shared = have.device <= 0;  // CPU backend: the device memory is host memory
  const double host_need = shared ? need.host + need.device : need.host;
  std::string why;
  if (host_need > have.host)
    why = "host memory: needs about " + fmt_gib(host_need) + " per rank, " + fmt_gib(have.host) + " available";
  else if (!shared && need.device > have.device)
    why = "device memory: needs about " + fmt_gib(need.device) + " per rank, the device has " + fmt_gib(have.device);
  if (why.empty()) return "";
  return "lattice.extents: the local lattice " + local_lattice + " does not fit in " + why +
         "; use more ranks (or a smaller lattice or precision)";
}

std::string memory_summary(const MemoryNeed& need, const MemoryHave& have) {
  std::string s = "estimated memory per rank: host " + fmt_gib(need.host) + ", device " + fmt_gib(need.device) +
                  "; available per rank: host " + (have.host > 0 ? fmt_gib(have.host) : std::string("unknown"));
  s += have.device > 0 ? ", device " + fmt_gib(have.device) : std::string(" (shared with the device)");
  return s;
}

}  // namespace emprism::run
