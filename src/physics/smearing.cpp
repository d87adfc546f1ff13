// smearing.cpp: source smearing (see smearing.hpp for the conventions and who may call what).
//   SourceSmearer        slice links, link smearing, spatial plaquette, Wuppertal / Jacobi steps (the per-site steps
//                        are the functors of kernels/link_smearing.hpp and kernels/quark_smearing.hpp)
#include "src/physics/smearing.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "comm/host_halo.hpp"
#include "kernels/quark_smearing.hpp"
#include "src/lattice/ordered_sum.hpp"

namespace emprism {

namespace {

using M3 = SU3<double>;

constexpr int kLinkTag = kSmearingLinkTag;
constexpr int kFieldTag = kSmearingFieldTag;

template <typename F>
void for_box3(const std::array<int, 3>& lo, const std::array<int, 3>& hi, F&& f) {
  int x[3];
  for (x[2] = lo[2]; x[2] < hi[2]; ++x[2])
    for (x[1] = lo[1]; x[1] < hi[1]; ++x[1])
      for (x[0] = lo[0]; x[0] < hi[0]; ++x[0]) f(x);
}

}  // namespace

SourceSmearer::SourceSmearer(const HostGauge& u, int t0, const SmearingParams& cfg, const ProcessGrid* grid,
                             Communicator* comm)
    : cfg_(cfg), t0_(t0), has_grid_(grid != nullptr), geom_(u.geometry()) {
  const Geometry& g = u.geometry();
  if (t0 < 0 || t0 >= g.global()[3])
    throw std::invalid_argument("SourceSmearer: timeslice " + std::to_string(t0) + " outside 0.." +
                                std::to_string(g.global()[3] - 1));
  if (cfg.steps < 0 || cfg.link_steps < 0) throw std::invalid_argument("SourceSmearer: negative step count");
  if (grid) grid_ = *grid;
  local_ = g.local();
  box_ = g.slice_halo_box();
  t_local_ = t0 - g.origin()[3];
  holds_t0_ = t_local_ >= 0 && t_local_ < local_[3];

  double v[2] = {0.0, 0.0};
  if (holds_t0_) {
    links_.assign(box_.sites() * 3, identity_su3<double>());
    for_box3({0, 0, 0}, {local_[0], local_[1], local_[2]}, [&](const int* x) {
      const int x4[4] = {x[0], x[1], x[2], t_local_};
      for (int i = 0; i < 3; ++i) links_[site(x) * 3 + static_cast<std::size_t>(i)] = u.at(x4, i);
    });
    fill_link_halo();
    if (cfg_.link_kind != LinkSmearingKind::None)
      for (int s = 0; s < cfg_.link_steps; ++s) smear_links_once();

    const std::int64_t n = geom_.slice_volume();
    const SlicePlaquetteSite p{SliceBoxArg{{local_[0], local_[1], local_[2]}}, links_.data(), nullptr};
    v[0] = ordered_sum(n, [&](std::int64_t k) {
      int x[3];
      geom_.slice_coords(k, x);
      return p.term(x);
    });
    v[1] = static_cast<double>(n);
  }
  if (comm) comm->sum(v, 2);
  plaquette_ = v[1] > 0 ? v[0] / (3.0 * v[1]) : std::numeric_limits<double>::quiet_NaN();
}

void SourceSmearer::fill_link_halo() {
  HaloBox box = box_;
  box.site_bytes = 3 * sizeof(M3);
  fill_host_halo(links_.data(), box, has_grid_ ? &grid_ : nullptr, kLinkTag);
}

void SourceSmearer::smear_links_once() {
  std::vector<M3> next(links_.size(), identity_su3<double>());
  const LinkSmearStep f = link_step_functor(box_, cfg_, links_.data(), next.data());
  const std::int64_t n = 3 * geom_.slice_volume();  // one link per call
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < n; ++k) f(static_cast<int>(k));
  links_.swap(next);
  fill_link_halo();
}

LinkSmearStep link_step_functor(const HaloBox& box, const SmearingParams& cfg, const SU3<double>* in,
                                SU3<double>* out) {
  return LinkSmearStep{SliceBoxArg{{box.local[0], box.local[1], box.local[2]}}, in, out,
                       cfg.link_kind == LinkSmearingKind::Ape ? 1 : 0, cfg.link_weight};
}

QuarkSmearStep quark_step_functor(const HaloBox& box, const SmearingParams& cfg, const Spinor<double>* psi,
                                  const Spinor<double>* psi0, Spinor<double>* out, const SU3<double>* links) {
  QuarkSmearStep f;
  f.box = SliceBoxArg{{box.local[0], box.local[1], box.local[2]}};
  f.links = links;
  f.psi = psi;
  f.psi0 = psi0;
  f.out = out;
  f.wuppertal = cfg.kind == QuarkSmearingKind::Wuppertal ? 1 : 0;
  f.weight = {cfg.weight, 0.0};
  f.norm = {1.0 / (1.0 + 6.0 * cfg.weight), 0.0};
  return f;
}

void SourceSmearer::quark_step(const std::vector<Spinor<double>>& psi, const std::vector<Spinor<double>>& psi0,
                               std::vector<Spinor<double>>& out) const {
  const QuarkSmearStep f = quark_step_functor(box_, cfg_, psi.data(), psi0.data(), out.data(), links_.data());
  const std::int64_t n = geom_.slice_volume();
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < n; ++k) f(static_cast<int>(k));
}

void SourceSmearer::apply(std::vector<std::complex<double>>& field) const {
  const std::size_t vol = static_cast<std::size_t>(geom_.local_volume());
  if (field.size() != vol * 12)
    throw std::invalid_argument("SourceSmearer::apply: field has " + std::to_string(field.size()) +
                                " entries, expected " + std::to_string(vol * 12));
  if (cfg_.kind == QuarkSmearingKind::None || !holds_t0_ || cfg_.steps == 0) return;

  const auto lex = [&](const int* x) {  // local natural index of (x, y, z) on timeslice t0
    const int x4[4] = {x[0], x[1], x[2], t_local_};
    return static_cast<std::size_t>(geom_.local_lex(x4));
  };
  std::vector<Spinor<double>> psi0(box_.sites(), zero_spinor<double>());
  const std::array<int, 3> hi{local_[0], local_[1], local_[2]};
  for_box3({0, 0, 0}, hi, [&](const int* x) {
    Spinor<double>& p = psi0[site(x)];
    for (int s = 0; s < 4; ++s)
      for (int c = 0; c < 3; ++c) {
        const std::complex<double> z = field[lex(x) * 12 + static_cast<std::size_t>(s * 3 + c)];
        p.s[s].c[c] = {z.real(), z.imag()};
      }
  });
  std::vector<Spinor<double>> psi = psi0, next(box_.sites(), zero_spinor<double>());
  HaloBox field_box = box_;
  field_box.site_bytes = sizeof(Spinor<double>);
  for (int step = 0; step < cfg_.steps; ++step) {
    fill_host_halo(psi.data(), field_box, has_grid_ ? &grid_ : nullptr, kFieldTag);
    quark_step(psi, psi0, next);
    psi.swap(next);
  }
  for_box3({0, 0, 0}, hi, [&](const int* x) {
    const Spinor<double>& p = psi[site(x)];
    for (int s = 0; s < 4; ++s)
      for (int c = 0; c < 3; ++c)
        field[lex(x) * 12 + static_cast<std::size_t>(s * 3 + c)] = {p.s[s].c[c].re, p.s[s].c[c].im};
  });
}

}  // namespace emprism
