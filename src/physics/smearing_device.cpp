// smearing_device.cpp: the device's quark smearing (see smearing_device.hpp). Counted work per step and slice site:
// smearing.hpp's kQuarkSmearingFlopsPerSite and kQuarkSmearingBytesPerSite, as the host's row counted it.
#include "src/physics/smearing_device.hpp"

#include <chrono>
#include <memory>
#include <utility>

#include "comm/host_halo.hpp"
#include "kernels/launch.hpp"

namespace emprism {

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

SourceSmearing::SourceSmearing(MetricsRegistry& metrics, const SourceSmearer& s, const Geometry& g)
    : metrics_(metrics), smearer_(s), geom_(g), box_{{g.local()[0], g.local()[1], g.local()[2]}} {
  const ProcessGrid* grid = s.grid();
  staged_halo_ = grid && (grid->dims[0] > 1 || grid->dims[1] > 1 || grid->dims[2] > 1);
  if (!s.holds_timeslice() || s.params().kind == QuarkSmearingKind::None) return;
  const auto t0 = std::chrono::steady_clock::now();
  links_ = Buffer<SU3<double>>(s.links().size());
  links_.from_host(s.links());
  metrics_.record("smearing_links_upload", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                  0, static_cast<double>(links_.bytes()));
}

void SourceSmearing::fill_halo(Buffer<Spinor<double>>& box) const {
  if (!staged_halo_) {
    run_kernel(box_.sites(), SliceHaloWrap{box_, box.data()});
    return;
  }
  std::unique_ptr<Spinor<double>[]> host(new Spinor<double>[box.size()]);
  box.copy_to_host(host.get());
  fill_host_halo(host.get(), geom_.slice_halo_box(sizeof(Spinor<double>)), smearer_.grid(), kSmearingFieldTag);
  box.copy_from_host(host.get());
}

void SourceSmearing::apply(SpinorField<double>& field) const {
  const SmearingParams& cfg = smearer_.params();
  if (cfg.kind == QuarkSmearingKind::None || !smearer_.holds_timeslice() || cfg.steps == 0) return;
  const std::size_t sites = static_cast<std::size_t>(box_.sites());
  Buffer<Spinor<double>> psi0(sites), psi(sites), next(sites);
  const int n = static_cast<int>(geom_.slice_volume());
  SliceTransfer in{geom_.arg(), box_, smearer_.timeslice() - geom_.origin()[3], {field.even.view(), field.odd.view()},
                   psi0.data(), 1};
  run_kernel(n, in);
  in.slice = psi.data();
  run_kernel(n, in);
  const double slice = static_cast<double>(n);
  for (int step = 0; step < cfg.steps; ++step) {
    const backend::Stream s = backend::compute_stream();
    const int t = metrics_.start_timing(s);
    fill_halo(psi);
    run_kernel(n, smearer_.step_functor(psi.data(), psi0.data(), next.data(), links_.data()));
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
