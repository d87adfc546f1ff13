// memory_check.hpp: the memory a run needs per rank (host and device), what a rank has, and the refusal before any
// allocation when it does not fit (issue 15). Estimates count the large allocations: on the device the gauge field,
// the clover term (fp32: also its compressed form) and 16 spinor fields of each precision the solver uses (mixed:
// both); on the host the gauge field with its halo and the clover term in double, three spinors in natural order, and
// the largest task's own host memory (a propagator's 12 columns). What a rank has: the host's MemAvailable
// (/proc/meminfo) shared by the ranks of its node, and the device's memory (on the CPU backend the device memory is
// host memory, so both estimates are compared with the host's).
// Who may call: the driver, on every rank after the process grid is made (local; the caller agrees on the outcome).
#pragma once

#include <cstdint>
#include <string>

#include "src/run/config.hpp"

namespace emprism::run {

struct MemoryNeed {
  double host = 0, device = 0;  // bytes per rank
};
struct MemoryHave {
  double host = 0, device = 0;  // bytes per rank; device 0: the device memory is the host's
};

// Bytes of device memory the solver needs for a rank's block of local_volume sites.
double memory_estimate(const Config& cfg, std::int64_t local_volume);
MemoryNeed memory_need(const Config& cfg, std::int64_t local_volume);
// This rank's share of the node's available host memory (ranks_on_node ranks) and its device's memory.
MemoryHave memory_have(int ranks_on_node);
// "" when need fits in have; otherwise the reason, as the one-line InputError text naming lattice.extents.
std::string memory_refusal(const MemoryNeed& need, const MemoryHave& have, const std::string& local_lattice);
// One line for the log: the estimate and what is available.
std::string memory_summary(const MemoryNeed& need, const MemoryHave& have);

}  // namespace emprism::run
