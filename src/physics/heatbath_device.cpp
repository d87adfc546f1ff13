// heatbath_device.cpp: the device heatbath (see heatbath_device.hpp): the order of heatbath.cpp's heatbath_sweep,
// each block one launch of kernels/heatbath.hpp's functors, each halo refresh on the device. Halo bytes counted: the
// halo links of U_mu read and written (periodic wrap), or the four faces of each split direction moved to the host
// and back (exchange). Reunitarisation: ~130 flops per link (Gram-Schmidt of two rows, the cross product), each link
// read and written.
#include "src/physics/heatbath_device.hpp"

#include <algorithm>
#include <chrono>

#include "comm/host_halo.hpp"
#include "kernels/launch.hpp"
#include "src/physics/gauge_device.hpp"

namespace emprism {

namespace {

// exchange_faces's tags: 320 + k (to the backward neighbour), 330 + k (forward); the host's are 300..313.
constexpr int kDeviceLinkHaloTag = 320;
constexpr double kReunitariseFlopsPerLink = 130;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The halo sites of the extended box: all but the local volume.
double halo_sites(const Geometry& g) {
  double box = 1;
  for (int d = 0; d < 4; ++d) box *= g.local()[d] + 2;
  return box - static_cast<double>(g.local_volume());
}

}  // namespace

DeviceHeatbath::DeviceHeatbath(MetricsRegistry& metrics, const HostGauge& u, const ProcessGrid* grid, LinkHaloPath halo)
    : metrics_(metrics),
      geom_(u.geometry()),
      grid_(grid),
      host_halo_(halo == LinkHaloPath::Auto && backend::device_is_host()),
      u_(u.storage().size()),
      observables_(u.geometry()) {
  make_faces();
  const auto t0 = std::chrono::steady_clock::now();
  u_.copy_from_host(u.storage().data());
  metrics_.record("heatbath_upload", seconds_since(t0), 0, static_cast<double>(u_.bytes()));
}

DeviceHeatbath::DeviceHeatbath(MetricsRegistry& metrics, DeviceGauge u, const ProcessGrid* grid, LinkHaloPath halo)
    : metrics_(metrics),
      geom_(u.geometry()),
      grid_(grid),
      host_halo_(halo == LinkHaloPath::Auto && backend::device_is_host()),
      u_(std::move(u.buffer())),
      observables_(u.geometry()) {
  make_faces();
}

void DeviceHeatbath::make_faces() {
  for (int k = 0; k < 4; ++k) split_ = split_ || (grid_ && grid_->dims[k] > 1);
  if (split_ && !host_halo_) {
    for (int k = 0; k < 4; ++k) face_links_ = std::max<std::size_t>(face_links_, LinkSlab{links(), 0, k}.sites());
    for (Buffer<SU3<double>>* b : {&low_, &high_, &from_fwd_, &from_bwd_}) *b = Buffer<SU3<double>>(face_links_);
    stage_ = static_cast<SU3<double>*>(backend::host_alloc_pinned(4 * face_links_ * sizeof(SU3<double>)));
  }
}

DeviceGauge DeviceHeatbath::release() {
  DeviceGauge out(geom_, std::move(u_));
  return out;
}

DeviceHeatbath::~DeviceHeatbath() {
  if (stage_) backend::host_free_pinned(stage_);
}

ExtLinks DeviceHeatbath::links() const {
  ExtLinks v;
  v.u = const_cast<SU3<double>*>(u_.data());
  for (int d = 0; d < 4; ++d) v.e[d] = geom_.local()[d] + 2;
  return v;
}

template <typename F>
void DeviceHeatbath::update_block(const char* row, double flops_per_link, int mu, const F& f) {
  const double vh = geom_.half_volume();
  launch(metrics_, {row, vh * flops_per_link, vh * kHeatbathLinkBytes}, geom_.half_volume(), f);
  refresh(mu);
}

void DeviceHeatbath::sweep(const HeatbathParams& p, std::uint64_t sweep_index) {
  check_heatbath_args(p, sweep_index);
  const std::uint32_t stream = kHeatbathStreamBase | static_cast<std::uint32_t>(sweep_index);
  refresh_all();
  for (int mu = 0; mu < 4; ++mu)
    for (int parity = 0; parity < 2; ++parity)
      update_block("heatbath_update", kHeatbathLinkFlops, mu,
                   HeatbathLinks{LinkBlockArg{geom_.arg(), links(), mu, parity}, p.beta, p.seed, stream});
  for (int k = 0; k < p.or_per_sweep; ++k) overrelax_pass();
  const double n = 4.0 * static_cast<double>(geom_.local_volume());
  launch(metrics_, {"heatbath_reunitarise", n * kReunitariseFlopsPerLink, 2 * n * sizeof(SU3<double>)},
         geom_.local_volume(), ReunitariseLinks{links()});
  refresh_all();
}

void DeviceHeatbath::overrelax_pass() {
  for (int mu = 0; mu < 4; ++mu)
    for (int parity = 0; parity < 2; ++parity)
      update_block("heatbath_overrelax", kOverrelaxLinkFlops, mu,
                   OverrelaxLinks{LinkBlockArg{geom_.arg(), links(), mu, parity}});
}

void DeviceHeatbath::overrelax() {
  refresh_all();
  overrelax_pass();
}

double DeviceHeatbath::plaquette(Communicator& comm) {
  return observables_(metrics_, u_.data(), &comm, "heatbath_plaquette").plaquette;
}

void DeviceHeatbath::download(HostGauge& u) const {
  const auto t0 = std::chrono::steady_clock::now();
  if (backend::device_is_host()) {
    u_.copy_to_host(u.storage().data());
  } else {
    download_links_pinned(u_, u.storage().data());
  }
  metrics_.record("heatbath_download", seconds_since(t0), 0, static_cast<double>(u_.bytes()));
}

void DeviceHeatbath::refresh_all() {
  for (int mu = 0; mu < 4; ++mu) refresh(mu);
}

void DeviceHeatbath::refresh(int mu) {
  const backend::Stream s = backend::compute_stream();
  const int t = metrics_.start_timing(s);
  double bytes = 0;
  if (host_halo_) {  // the host's refresh_link_halo on the buffer (host memory)
    HaloBox box = geom_.halo_box(4 * sizeof(SU3<double>));
    box.offset = static_cast<std::size_t>(mu) * sizeof(SU3<double>);
    box.bytes = sizeof(SU3<double>);
    fill_host_halo(u_.data(), box, grid_, kDeviceLinkHaloTag);
    bytes = 2 * halo_sites(geom_) * sizeof(SU3<double>);
  } else if (!split_) {
    std::int64_t box = 1;
    for (int d = 0; d < 4; ++d) box *= geom_.local()[d] + 2;
    run_kernel(box, LinkHaloWrap{links(), mu});
    bytes = 2 * halo_sites(geom_) * sizeof(SU3<double>);
  } else {
    for (int k = 0; k < 4; ++k) {
      const LinkSlab slab{links(), mu, k};
      if (grid_->dims[k] == 1) {
        run_kernel(slab.sites(), LinkSlabWrap{slab});
        bytes += 4.0 * slab.sites() * sizeof(SU3<double>);
      } else {
        exchange(mu, k);
        bytes += 8.0 * slab.sites() * sizeof(SU3<double>);
      }
    }
  }
  metrics_.stop_timing(t, s, "heatbath_halo", 0, bytes);
}

// Pass k of fill_host_halo for the links of direction mu: pack on the device, swap through the pinned host copies,
// unpack on the device.
void DeviceHeatbath::exchange(int mu, int k) {
  const LinkSlab slab{links(), mu, k};
  const std::size_t n = static_cast<std::size_t>(slab.sites()), bytes = n * sizeof(SU3<double>);
  run_kernel(slab.sites(), LinkSlabPack{slab, low_.data(), high_.data()});
  SU3<double>* const low = stage_;
  SU3<double>* const high = stage_ + face_links_;
  SU3<double>* const fwd = stage_ + 2 * face_links_;
  SU3<double>* const bwd = stage_ + 3 * face_links_;
  backend::copy_to_host(low, low_.data(), bytes);
  backend::copy_to_host(high, high_.data(), bytes);
  exchange_faces(low, high, fwd, bwd, bytes, *grid_, k, kDeviceLinkHaloTag);
  backend::copy_to_device(from_fwd_.data(), fwd, bytes);
  backend::copy_to_device(from_bwd_.data(), bwd, bytes);
  run_kernel(slab.sites(), LinkSlabUnpack{slab, from_fwd_.data(), from_bwd_.data()});
}

std::vector<double> thermalise_on_device(MetricsRegistry& metrics, HostGauge& u, const HeatbathParams& p, int sweeps,
                                         const ProcessGrid* grid, Communicator& comm, std::uint64_t first_sweep,
                                         LinkHaloPath halo) {
  DeviceHeatbath hb(metrics, u, grid, halo);
  std::vector<double> plaq;
  plaq.reserve(static_cast<std::size_t>(sweeps > 0 ? sweeps : 0));
  for (int s = 0; s < sweeps; ++s) {
    hb.sweep(p, first_sweep + static_cast<std::uint64_t>(s));
    plaq.push_back(hb.plaquette(comm));
  }
  hb.download(u);
  return plaq;
}

}  // namespace emprism
