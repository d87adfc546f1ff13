// contraction_device.hpp: the propagator kept on the device and its meson contractions there (kernels/
// meson_contract.hpp): only the per-plane sums (local Lt x Lz x channels x momenta complex numbers) come back to the
// host, which adds them per timeslice and over ranks exactly as meson_correlators does (src/physics/contractions.hpp
// has the conventions). On the CPU backend the correlators have meson_correlators' bits.
// Metrics rows: "meson_contractions" (the per-site traces), "meson_planes" (the momentum sums per plane),
// "propagator_download" (the columns copied to the host, only for output.fields).
// Who may call: meson_correlators_device is collective over comm (one Communicator::sum); the rest is rank-local.
#pragma once

#include <array>
#include <complex>
#include <string>
#include <vector>

#include "kernels/meson_contract.hpp"
#include "kernels/metrics.hpp"
#include "src/lattice/fields.hpp"
#include "src/physics/contractions.hpp"
#include "src/physics/propagator.hpp"

namespace emprism {

// The 12 columns S(.; x0)[.][k], k = 3 * source spin + source colour, each a full double-precision field.
class DevicePropagator {
 public:
  explicit DevicePropagator(const Geometry& g);
  SpinorField<double>& column(int k) { return columns_[static_cast<std::size_t>(k)]; }
  const SpinorField<double>& column(int k) const { return columns_[static_cast<std::size_t>(k)]; }
  PropagatorViews views() const;
  // The host propagator (local natural order, propagator.hpp), for output.fields and the tests.
  Propagator download(MetricsRegistry& metrics) const;

 private:
  const Geometry& geom_;
  std::vector<SpinorField<double>> columns_;
};

// meson_correlators of the device propagator (same arguments, same exceptions, same result).
std::vector<Correlator> meson_correlators_device(MetricsRegistry& metrics, const Geometry& g, const DevicePropagator& s,
                                                 const std::array<int, 4>& source_site,
                                                 const std::vector<std::string>& channels,
                                                 const std::vector<std::array<int, 3>>& momenta, Communicator* comm);

}  // namespace emprism
