// context.hpp: what every launcher and collective needs, passed explicitly (no globals): the metrics
// registry of this rank and the communicator.
// Who may call: anyone holding the objects; the referenced objects must outlive the context.
#pragma once

#include "comm/communicator.hpp"
#include "src/metrics.hpp"

namespace emprism {

struct Context {
  MetricsRegistry& metrics;
  Communicator& comm;
};

}  // namespace emprism
