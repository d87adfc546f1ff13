// context.hpp: what every launcher and collective needs, passed explicitly (no globals): the metrics
// registry of this rank, the communicator and the process grid (default: one rank, nothing partitioned).
// Who may call: anyone holding the objects; the referenced objects must outlive the context.
#pragma once

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "kernels/metrics.hpp"

namespace emprism {

struct Context {
  MetricsRegistry& metrics;
  Communicator& comm;
  ProcessGrid grid{};
};

}  // namespace emprism
