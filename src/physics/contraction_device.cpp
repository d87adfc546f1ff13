// contraction_device.cpp: launchers of the meson contraction on the device (see contraction_device.hpp).
// Counted work: "meson_contractions" contraction_cost's flops without the momentum phases, bytes the 12 columns read
// (2304 per site) and the channel values written; "meson_planes" per site, channel and momentum 3 complex products
// and one addition (26 flops), bytes the channel values read once per momentum.
#include "src/physics/contraction_device.hpp"

#include <chrono>

#include "kernels/launch.hpp"
#include "src/lattice/field_io.hpp"

namespace emprism {

namespace {

int mod_of(std::int64_t a, int n) { return static_cast<int>(((a % n) + n) % n); }

std::vector<MesonPair> device_pairs(const std::vector<const MesonChannel*>& chans, std::vector<int>& first) {
  std::vector<MesonPair> pairs;
  for (const MesonChannel* c : chans) {
    first.push_back(static_cast<int>(pairs.size()));
    for (const auto& [snk, src] : c->pairs) {
      MesonPair p{};
      for (int r = 0; r < 4; ++r) {
        p.snk_col[r] = snk.column[r];
        p.src_col[r] = src.column[r];
        p.snk_phase[r] = {snk.phase[r].real(), snk.phase[r].imag()};
        p.src_phase[r] = {src.phase[r].real(), src.phase[r].imag()};
      }
      pairs.push_back(p);
    }
  }
  first.push_back(static_cast<int>(pairs.size()));
  return pairs;
}

template <typename T>
Buffer<T> upload(const std::vector<T>& v) {
  Buffer<T> b(v.size());
  b.from_host(v);
  return b;
}

}  // namespace

DevicePropagator::DevicePropagator(const Geometry& g) : geom_(g) {
  columns_.reserve(12);
  for (int k = 0; k < 12; ++k) columns_.emplace_back(g);
}

PropagatorViews DevicePropagator::views() const {
  PropagatorViews v;
  for (int k = 0; k < 12; ++k)
    for (int p = 0; p < 2; ++p) v.col[k][p] = column(k).parity(p).view();
  return v;
}

Propagator DevicePropagator::download(MetricsRegistry& metrics) const {
  const auto t0 = std::chrono::steady_clock::now();
  Propagator prop;
  for (int k = 0; k < 12; ++k) prop.columns[static_cast<std::size_t>(k)] = spinor_to_natural(geom_, column(k));
  metrics.record("propagator_download", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0,
                 12.0 * 192.0 * static_cast<double>(geom_.local_volume()));
  return prop;
}

std::vector<Correlator> meson_correlators_device(MetricsRegistry& metrics, const Geometry& g, const DevicePropagator& s,
                                                 const std::array<int, 4>& source_site,
                                                 const std::vector<std::string>& channels,
                                                 const std::vector<std::array<int, 3>>& momenta, Communicator* comm) {
  check_source_site(g.global(), source_site);
  const std::vector<const MesonChannel*> chans = select_meson_channels(channels);
  const int nch = static_cast<int>(chans.size()), nmom = static_cast<int>(momenta.size());
  std::vector<int> first_host;
  const std::vector<MesonPair> pairs_host = device_pairs(chans, first_host);
  const Buffer<MesonPair> pairs = upload(pairs_host);
  const Buffer<int> first = upload(first_host);
  const PhaseTable pht = phase_table(g.global(), momenta);
  std::vector<Complex<double>> phase_host(pht.phase.size());
  for (std::size_t i = 0; i < phase_host.size(); ++i) phase_host[i] = {pht.phase[i].real(), pht.phase[i].imag()};
  const Buffer<Complex<double>> phase = upload(phase_host);

  const std::int64_t vol = g.local_volume();
  Buffer<Complex<double>> vals(static_cast<std::size_t>(vol) * nch);
  const double n = static_cast<double>(vol);
  double npairs = 0;
  for (const MesonChannel* c : chans) npairs += static_cast<double>(c->pairs.size());
  launch(metrics, {"meson_contractions", n * 1376.0 * npairs, n * (2304.0 + 16.0 * nch)}, vol,
         MesonSites{g.arg(), s.views(), pairs.data(), first.data(), nch, vals.data()});

  const Extents& lo = g.local();
  const std::int64_t nplanes = std::int64_t{lo[3]} * lo[2];
  const std::int64_t stride = std::int64_t{nch} * nmom;
  Buffer<Complex<double>> partial(static_cast<std::size_t>(nplanes * stride));
  MesonPlanes f{};
  for (int d = 0; d < 4; ++d) f.l[d] = lo[d];
  for (int d = 0; d < 3; ++d) {
    f.gl[d] = g.global()[d];
    f.k0[d] = mod_of(std::int64_t{g.origin()[d]} - source_site[d], f.gl[d]);
  }
  f.nch = nch;
  f.nmom = nmom;
  f.lmax = pht.lmax;
  f.vals = vals.data();
  f.phase = phase.data();
  f.partial = partial.data();
  launch(metrics, {"meson_planes", n * nch * nmom * 26.0, n * nch * nmom * 16.0}, nplanes * stride, f);

  std::vector<Complex<double>> part_host(partial.size());
  if (!part_host.empty()) partial.copy_to_host(part_host.data());
  std::vector<std::complex<double>> part(part_host.size());
  for (std::size_t i = 0; i < part.size(); ++i) part[i] = {part_host[i].re, part_host[i].im};
  return correlators_from_planes(g, source_site, chans, momenta, part, comm);
}

}  // namespace emprism
