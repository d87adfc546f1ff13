// context.hpp: what every launcher and collective needs, passed explicitly (no globals): the metrics
// registry of this rank, the communicator, the process grid (default: one rank, nothing partitioned) and the kernel
// tuner of the hot kernels' launches (kernels/tune.hpp; null: every launch uses its default variant).
// Who may call: anyone holding the objects; the referenced objects must outlive the context.
#pragma once

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "kernels/metrics.hpp"
#include "kernels/tune.hpp"

namespace emprism {

struct Context {
  MetricsRegistry& metrics;
  Communicator& comm;
  ProcessGrid grid{};
  Tuner* tuner = nullptr;
};

}  // namespace emprism
