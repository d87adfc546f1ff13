// smearing_device.cpp: the device's link and quark smearing (see smearing_device.hpp). Counted work per step and slice
// site: smearing.hpp's kLinkSmearing*PerSite and kQuarkSmearing*PerSite; the plaquette: 3 planes of 3 SU(3) products
// and a trace, the 3 links of a site read and the per-site term written and read back by the block sums.
#include "src/physics/smearing_device.hpp"

#include <chrono>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "comm/host_halo.hpp"
#include "kernels/launch.hpp"
#include "kernels/link_smearing.hpp"
#include "src/lattice/ordered_sum.hpp"
#include "src/physics/gauge_device.hpp"

namespace emprism {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

ExtGaugeView ext_view(const Geometry& g, const SU3<double>* u) {
  ExtGaugeView v;
  v.u = u;
  for (int k = 0; k < 4; ++k) v.e[k] = g.local()[k] + 2;
  return v;
}

}  // namespace

void make_point_source_device(MetricsRegistry& metrics, const Geometry& g, const std::array<int, 4>& site, int spin,
                              int colour, SpinorField<double>& f) {
  PointSource k{};
  k.lat = g.arg();
  k.here = 1;
  for (int mu = 0; mu < 4; ++mu) {
    k.x[mu] = site[mu] - g.origin()[mu];
    if (k.x[mu] < 0 || k.x[mu] >= g.local()[mu]) k.here = 0;
  }
  if (!k.here) k.x[0] = k.x[1] = k.x[2] = k.x[3] = 0;
  k.component = 3 * spin + colour;
  const double n = g.half_volume();
  for (int p = 0; p < 2; ++p) {
    k.parity = p;
    k.f = f.parity(p).view();
    launch(metrics, {"point_source", 0, n * sizeof(Spinor<double>)}, g.half_volume(), k);
  }
}

SourceSmearing::SourceSmearing(MetricsRegistry& metrics, const Geometry& g, int t0, const SmearingParams& cfg,
                               const ProcessGrid* grid)
    : metrics_(metrics),
      geom_(g),
      cfg_(cfg),
      t0_(t0),
      t_local_(t0 - g.origin()[3]),
      holds_t0_(t_local_ >= 0 && t_local_ < g.local()[3]),
      box_{{g.local()[0], g.local()[1], g.local()[2]}},
      has_grid_(grid != nullptr) {
  if (t0 < 0 || t0 >= g.global()[3])
    throw std::invalid_argument("SourceSmearing: timeslice " + std::to_string(t0) + " outside 0.." +
                                std::to_string(g.global()[3] - 1));
  if (cfg.steps < 0 || cfg.link_steps < 0) throw std::invalid_argument("SourceSmearing: negative step count");
  if (grid) grid_ = *grid;
  staged_halo_ = grid && (grid->dims[0] > 1 || grid->dims[1] > 1 || grid->dims[2] > 1);
  if (holds_t0_) links_ = Buffer<SU3<double>>(static_cast<std::size_t>(box_.sites()) * 3);
}

SourceSmearing::SourceSmearing(MetricsRegistry& metrics, const HostGauge& u, int t0, const SmearingParams& cfg,
                               const ProcessGrid* grid, Communicator* comm)
    : SourceSmearing(metrics, u.geometry(), t0, cfg, grid) {
  if (holds_t0_) {  // the slice (3/4 of a timeslice's links) extracted on the host by the same functor, then uploaded
    const auto t = std::chrono::steady_clock::now();
    std::vector<SU3<double>> host(links_.size(), identity_su3<double>());
    const SliceLinksFromExt f{ext_view(geom_, u.storage().data()), box_, t_local_, host.data()};
    const std::int64_t n = geom_.slice_volume();
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < n; ++k) f(static_cast<int>(k));
    links_.from_host(host);
    metrics_.record("smearing_slice_links", seconds_since(t), 0, static_cast<double>(n) * 2 * 3 * sizeof(SU3<double>));
  }
  smear_links(comm);
}

SourceSmearing::SourceSmearing(MetricsRegistry& metrics, const SU3<double>* ext, const Geometry& g, int t0,
                               const SmearingParams& cfg, const ProcessGrid* grid, Communicator* comm)
    : SourceSmearing(metrics, g, t0, cfg, grid) {
  if (holds_t0_) {
    const double n = static_cast<double>(geom_.slice_volume());
    launch(metrics_, {"smearing_slice_links", 0, n * 2 * 3 * sizeof(SU3<double>)}, geom_.slice_volume(),
           SliceLinksFromExt{ext_view(geom_, ext), box_, t_local_, links_.data()});
  }
  smear_links(comm);
}

// The links' halo, link_steps smearing steps, and the spatial plaquette (collective over comm).
void SourceSmearing::smear_links(Communicator* comm) {
  double v[2] = {0.0, 0.0};
  if (holds_t0_) {
    fill_link_halo(links_);
    const std::int64_t n = geom_.slice_volume();
    const double slice = static_cast<double>(n);
    if (cfg_.link_kind != LinkSmearingKind::None && cfg_.link_steps > 0) {
      Buffer<SU3<double>> next(links_.size());
      const HaloBox hb = geom_.slice_halo_box();
      for (int s = 0; s < cfg_.link_steps; ++s) {
        const backend::Stream st = backend::compute_stream();
        const int t = metrics_.start_timing(st);
        run_kernel(3 * n, link_step_functor(hb, cfg_, links_.data(), next.data()));  // a link per thread
        fill_link_halo(next);
        metrics_.stop_timing(t, st, "link_smearing", slice * kLinkSmearingFlopsPerSite,
                             slice * kLinkSmearingBytesPerSite);
        std::swap(links_, next);
      }
    }
    Buffer<double> terms(static_cast<std::size_t>(n));
    Buffer<double> blocks(static_cast<std::size_t>((n + kOrderedSumBlock - 1) / kOrderedSumBlock));
    const backend::Stream st = backend::compute_stream();
    const int t = metrics_.start_timing(st);
    run_kernel(n, SlicePlaquetteSite{box_, links_.data(), terms.data()});
    v[0] = ordered_device_sum(terms, blocks, n);
    metrics_.stop_timing(t, st, "smearing_plaquette", slice * 3 * (3 * 198 + 2),
                         slice * (3 * sizeof(SU3<double>) + 2 * sizeof(double)));
    v[1] = slice;
  }
  if (comm) comm->sum(v, 2);
  plaquette_ = v[1] > 0 ? v[0] / (3.0 * v[1]) : std::numeric_limits<double>::quiet_NaN();
}

void SourceSmearing::fill_link_halo(Buffer<SU3<double>>& links) const {
  if (!staged_halo_) {
    run_kernel(box_.sites(), SliceHaloWrapOf<SU3<double>, 3>{box_, links.data()});
    return;
  }
  std::unique_ptr<SU3<double>[]> host(new SU3<double>[links.size()]);
  links.copy_to_host(host.get());
  fill_host_halo(host.get(), geom_.slice_halo_box(3 * sizeof(SU3<double>)), &grid_, kSmearingLinkTag);
  links.copy_from_host(host.get());
}

std::vector<SU3<double>> SourceSmearing::download_links() const {
  std::vector<SU3<double>> host(links_.size());
  if (!host.empty()) links_.copy_to_host(host.data());
  return host;
}

void SourceSmearing::fill_halo(Buffer<Spinor<double>>& box) const {
  if (!staged_halo_) {
    run_kernel(box_.sites(), SliceHaloWrap{box_, box.data()});
    return;
  }
  std::unique_ptr<Spinor<double>[]> host(new Spinor<double>[box.size()]);
  box.copy_to_host(host.get());
  fill_host_halo(host.get(), geom_.slice_halo_box(sizeof(Spinor<double>)), &grid_, kSmearingFieldTag);
  box.copy_from_host(host.get());
}

void SourceSmearing::apply(SpinorField<double>& field) const {
  const SmearingParams& cfg = cfg_;
  if (cfg.kind == QuarkSmearingKind::None || !holds_t0_ || cfg.steps == 0) return;
  const std::size_t sites = static_cast<std::size_t>(box_.sites());
  Buffer<Spinor<double>> psi0(sites), psi(sites), next(sites);
  const int n = static_cast<int>(geom_.slice_volume());
  SliceTransfer in{geom_.arg(), box_, t_local_, {field.even.view(), field.odd.view()}, psi0.data(), 1};
  run_kernel(n, in);
  in.slice = psi.data();
  run_kernel(n, in);
  const double slice = static_cast<double>(n);
  for (int step = 0; step < cfg.steps; ++step) {
    const backend::Stream s = backend::compute_stream();
    const int t = metrics_.start_timing(s);
    fill_halo(psi);
    run_kernel(n, quark_step_functor(geom_.slice_halo_box(), cfg, psi.data(), psi0.data(), next.data(), links_.data()));
    metrics_.stop_timing(t, s, "quark_smearing", slice * kQuarkSmearingFlopsPerSite,
                         slice * kQuarkSmearingBytesPerSite);
    std::swap(psi, next);
  }
  SliceTransfer out = in;
  out.slice = psi.data();
  out.to_box = 0;
  run_kernel(n, out);
}

}  // namespace emprism
