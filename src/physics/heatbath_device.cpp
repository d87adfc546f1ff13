// heatbath_device.cpp: the device heatbath (see heatbath_device.hpp): the order of heatbath.cpp's heatbath_sweep,
// each block one launch of kernels/heatbath.hpp's functors on the SoaLinks working copy, each halo refresh of a split
// direction on the device. Halo bytes counted: the four faces of each split direction moved to the host and back.
// Reunitarisation: ~130 flops per link (Gram-Schmidt of two rows, the cross product), each link read and written.
// Upload and download: the host field's extended layout through a device buffer of that layout, reordered there.
#include "src/physics/heatbath_device.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "comm/host_halo.hpp"
#include "kernels/launch.hpp"
#include "src/lattice/ordered_sum.hpp"
#include "src/physics/gauge_device.hpp"

namespace emprism {

namespace {

// exchange_faces's tags: 320 + k (to the backward neighbour), 330 + k (forward); the host's are 300..313.
constexpr int kDeviceLinkHaloTag = 320;
constexpr double kReunitariseFlopsPerLink = 130;
// The plaquette's per-site work (gauge_device.cpp's count): 6 plaquettes of 3 SU(3) products and their traces.
constexpr double kPlaquetteFlopsPerSite = 6 * (3 * 198 + 2);

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::int64_t box_sites(const Geometry& g) {
  std::int64_t box = 1;
  for (int d = 0; d < 4; ++d) box *= g.local()[d] + 2;
  return box;
}

}  // namespace

DeviceHeatbath::DeviceHeatbath(MetricsRegistry& metrics, const HostGauge& u, const ProcessGrid* grid, LinkHaloPath)
    : metrics_(metrics), geom_(u.geometry()), grid_(grid) {
  allocate();
  const auto t0 = std::chrono::steady_clock::now();
  Buffer<SU3<double>> ext(u.storage().size());
  ext.copy_from_host(u.storage().data());
  upload_ext(ext);
  metrics_.record("heatbath_upload", seconds_since(t0), 0, static_cast<double>(ext.bytes() + u_.bytes()));
}

DeviceHeatbath::DeviceHeatbath(MetricsRegistry& metrics, DeviceGauge u, const ProcessGrid* grid, LinkHaloPath)
    : metrics_(metrics), geom_(u.geometry()), grid_(grid) {
  allocate();
  Buffer<SU3<double>> ext(std::move(u.buffer()));
  const auto t0 = std::chrono::steady_clock::now();
  upload_ext(ext);
  metrics_.record("heatbath_reorder", seconds_since(t0), 0, static_cast<double>(ext.bytes() + u_.bytes()));
}

// The working copy, the plaquette's buffers and (with a split direction) the face buffers.
void DeviceHeatbath::allocate() {
  sites_ = 1;
  for (int k = 0; k < 4; ++k) {
    split_[k] = grid_ && grid_->dims[k] > 1 ? 1 : 0;
    any_split_ = any_split_ || split_[k] != 0;
    sites_ *= geom_.local()[k] + 2 * split_[k];
  }
  u_ = Buffer<Complex<double>>(static_cast<std::size_t>(links().padded_sites()) * 4 * 9);
  const std::int64_t vol = geom_.local_volume();
  plaq_terms_ = Buffer<double>(static_cast<std::size_t>(vol));
  plaq_blocks_ = Buffer<double>(static_cast<std::size_t>((vol + kOrderedSumBlock - 1) / kOrderedSumBlock));
  if (any_split_) {
    for (int k = 0; k < 4; ++k) face_links_ = std::max<std::size_t>(face_links_, LinkSlab{links(), 0, k}.sites());
    for (Buffer<SU3<double>>* b : {&low_, &high_, &from_fwd_, &from_bwd_}) *b = Buffer<SU3<double>>(face_links_);
    stage_ = static_cast<SU3<double>*>(backend::host_alloc_pinned(4 * face_links_ * sizeof(SU3<double>)));
  }
}

// ext (a device field in the host's extended layout) reordered into the working copy.
void DeviceHeatbath::upload_ext(Buffer<SU3<double>>& ext) {
  run_kernel(box_sites(geom_), LinksToSoa{ext_links(ext), links()});
  backend::synchronize();
}

DeviceGauge DeviceHeatbath::release() {
  const auto t0 = std::chrono::steady_clock::now();
  Buffer<SU3<double>> ext(static_cast<std::size_t>(box_sites(geom_)) * 4);
  run_kernel(box_sites(geom_), LinksFromSoa{links(), ext_links(ext)});
  backend::synchronize();
  metrics_.record("heatbath_reorder", seconds_since(t0), 0, static_cast<double>(ext.bytes() + u_.bytes()));
  u_ = Buffer<Complex<double>>();
  return DeviceGauge(geom_, std::move(ext));
}

DeviceHeatbath::~DeviceHeatbath() {
  if (stage_) backend::host_free_pinned(stage_);
}

SoaLinks DeviceHeatbath::links() const {
  SoaLinks v;
  v.u = const_cast<Complex<double>*>(u_.data());
  for (int d = 0; d < 4; ++d) {
    v.l[d] = geom_.local()[d];
    v.h[d] = split_[d];
  }
  v.sites = sites_;
  return v;
}

ExtLinks DeviceHeatbath::ext_links(Buffer<SU3<double>>& ext) const {
  ExtLinks v;
  v.u = ext.data();
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
                   HeatbathLinks<SoaLinks>{{geom_.arg(), links(), mu, parity}, p.beta, p.seed, stream});
  for (int k = 0; k < p.or_per_sweep; ++k) overrelax_pass();
  const double n = 4.0 * static_cast<double>(geom_.local_volume());
  launch(metrics_, {"heatbath_reunitarise", n * kReunitariseFlopsPerLink, 2 * n * sizeof(SU3<double>)},
         geom_.local_volume(), ReunitariseLinks<SoaLinks>{links()});
  refresh_all();
}

void DeviceHeatbath::overrelax_pass() {
  for (int mu = 0; mu < 4; ++mu)
    for (int parity = 0; parity < 2; ++parity)
      update_block("heatbath_overrelax", kOverrelaxLinkFlops, mu,
                   OverrelaxLinks<SoaLinks>{{geom_.arg(), links(), mu, parity}});
}

void DeviceHeatbath::overrelax() {
  refresh_all();
  overrelax_pass();
}

// The host's plaquette(): the per-site terms of site_plaquettes summed in ordered_sum's order, then over comm.
double DeviceHeatbath::plaquette(Communicator& comm) {
  const std::int64_t vol = geom_.local_volume();
  const double n = static_cast<double>(vol);
  const backend::Stream s = backend::compute_stream();
  const int t = metrics_.start_timing(s);
  run_kernel(vol, SoaPlaquetteSites{links(), plaq_terms_.data()});
  double p[2] = {ordered_device_sum(plaq_terms_, plaq_blocks_, vol), n};
  metrics_.stop_timing(t, s, "heatbath_plaquette", n * kPlaquetteFlopsPerSite,
                       n * (4 * sizeof(SU3<double>) + 2 * sizeof(double)));
  comm.sum(p, 2);
  return p[0] / (6.0 * p[1]);
}

void DeviceHeatbath::download(HostGauge& u) const {
  const auto t0 = std::chrono::steady_clock::now();
  Buffer<SU3<double>> ext(u.storage().size());
  run_kernel(box_sites(geom_), LinksFromSoa{links(), ext_links(ext)});
  if (backend::device_is_host()) {
    ext.copy_to_host(u.storage().data());
  } else {
    download_links_pinned(ext, u.storage().data());
  }
  metrics_.record("heatbath_download", seconds_since(t0), 0, static_cast<double>(ext.bytes() + u_.bytes()));
}

void DeviceHeatbath::refresh_all() {
  for (int mu = 0; mu < 4; ++mu) refresh(mu);
}

// The halo layers of U_mu in the split directions, in fill_host_halo's pass order (an unsplit direction: nothing, the
// view wraps).
void DeviceHeatbath::refresh(int mu) {
  if (!any_split_) return;
  const backend::Stream s = backend::compute_stream();
  const int t = metrics_.start_timing(s);
  double bytes = 0;
  for (int k = 0; k < 4; ++k) {
    if (split_[k] == 0) continue;
    exchange(mu, k);
    bytes += 8.0 * LinkSlab{links(), mu, k}.sites() * sizeof(SU3<double>);
  }
  metrics_.stop_timing(t, s, "heatbath_halo", 0, bytes);
}

// Pass k of the refresh for the links of direction mu: pack on the device, swap through the pinned host copies,
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
