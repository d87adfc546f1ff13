// peak.cpp: empirical bandwidth measurement (see peak.hpp).
#include "src/physics/peak.hpp"

#include <algorithm>

#include "kernels/launch.hpp"
#include "kernels/stream.hpp"
#include "src/lattice/fields.hpp"

namespace emprism {

PeakBandwidth measure_peak_bandwidth(std::size_t elements, int repetitions) {
  if (elements == 0) elements = backend::device_is_host() ? (std::size_t(1) << 24) : (std::size_t(1) << 26);
  Buffer<double> a(elements), b(elements), c(elements);
  MetricsRegistry scratch;
  const auto n = static_cast<std::int64_t>(elements);
  const double e = static_cast<double>(elements);
  launch(scratch, {"init", 0, 0}, n, TriadStream{a.data(), b.data(), c.data(), 1.0});  // touch all pages
  for (int r = 0; r < repetitions; ++r) {
    launch(scratch, {"copy", 0, 16 * e}, n, CopyStream{a.data(), b.data()});
    launch(scratch, {"triad", 2 * e, 24 * e}, n, TriadStream{a.data(), b.data(), c.data(), 0.5});
    launch_reduce<1>(scratch, {"read", e, 8 * e}, n, ReadStream{c.data()});
  }
  PeakBandwidth p;
  for (const auto& row : scratch.table()) {
    const double gbs = row.min_s > 0 ? row.bytes / row.calls / row.min_s / 1e9 : 0;
    if (row.name == "copy") p.copy_gbs = gbs;
    if (row.name == "triad") p.triad_gbs = gbs;
    if (row.name == "read") p.read_gbs = gbs;
  }
  p.peak_gbs = std::max({p.copy_gbs, p.triad_gbs, p.read_gbs});
  p.measured = true;
  return p;
}

}  // namespace emprism
