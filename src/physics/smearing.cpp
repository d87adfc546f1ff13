// smearing.cpp: source smearing (see smearing.hpp for the conventions and who may call what).
//   exp_i_su3            Cayley-Hamilton exponential of Morningstar-Peardon, Taylor series for small Q
//   project_su3_maxtrace polar factor + det phase + Cabibbo-Marinari sweeps
//   SourceSmearer        slice links, link smearing, spatial plaquette, Wuppertal / Jacobi steps
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

using C = Complex<double>;
using M3 = SU3<double>;

constexpr int kLinkTag = 700;  // links: 700 + mu (to bwd), 710 + mu (to fwd) (comm/host_halo.hpp)
constexpr int kFieldTag = kSmearingFieldTag;

M3 zero_m3() {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.e[i][j] = {0.0, 0.0};
  return r;
}
M3 scale(C s, const M3& a) {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.e[i][j] = s * a.e[i][j];
  return r;
}
M3 scale(double s, const M3& a) { return scale(C{s, 0.0}, a); }
M3 add_identity(C s, M3 a) {
  for (int i = 0; i < 3; ++i) a.e[i][i] += s;
  return a;
}
double frob2(const M3& a) {
  double n = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) n += norm2(a.e[i][j]);
  return n;
}
C det3(const M3& a) {
  return a.e[0][0] * (a.e[1][1] * a.e[2][2] - a.e[1][2] * a.e[2][1]) -
         a.e[0][1] * (a.e[1][0] * a.e[2][2] - a.e[1][2] * a.e[2][0]) +
         a.e[0][2] * (a.e[1][0] * a.e[2][1] - a.e[1][1] * a.e[2][0]);
}
C inverse_of(C z) {
  const double n = norm2(z);
  return {z.re / n, -z.im / n};
}
// a^-1 = adj(a) / det(a).
M3 inverse3(const M3& a, C det) {
  M3 adj;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
      adj.e[i][j] = a.e[r0][c0] * a.e[r1][c1] - a.e[r0][c1] * a.e[r1][c0];
    }
  return scale(inverse_of(det), adj);
}
// |traceless anti-hermitian part of M|_F.
double traceless_antihermitian_norm(const M3& m) {
  const M3 a = scale(0.5, m - dagger(m));
  const C t = trace(a);
  return std::sqrt(frob2(add_identity(C{-t.re / 3.0, -t.im / 3.0}, a)));
}

// The unitary polar factor of a non-singular w by the Newton iteration X <- (g X + X^-dag / g) / 2 with Higham's
// Frobenius-norm scaling g while far from convergence. Returns false for a singular (or non-finite) w.
bool polar_unitary(const M3& w, M3& x) {
  x = w;
  bool scaled = true;
  double last = 1.0;
  for (int it = 0; it < 100; ++it) {
    const C d = det3(x);
    if (!(norm2(d) > 1e-280) || !std::isfinite(d.re) || !std::isfinite(d.im)) return false;
    const M3 xi = inverse3(x, d);
    const double g = scaled ? std::sqrt(std::sqrt(frob2(xi) / frob2(x))) : 1.0;
    const M3 next = scale(0.5, scale(g, x) + scale(1.0 / g, dagger(xi)));
    const double diff = std::sqrt(frob2(next - x));
    x = next;
    if (diff < 1e-2) scaled = false;
    if (diff < 1e-15 || last < 1e-7) break;  // quadratic convergence: one step after 1e-7 reaches rounding
    last = diff;
  }
  return true;
}

template <typename F>
void for_box3(const std::array<int, 3>& lo, const std::array<int, 3>& hi, F&& f) {
  int x[3];
  for (x[2] = lo[2]; x[2] < hi[2]; ++x[2])
    for (x[1] = lo[1]; x[1] < hi[1]; ++x[1])
      for (x[0] = lo[0]; x[0] < hi[0]; ++x[0]) f(x);
}

// sin(w) / w, by its series for small w (Morningstar-Peardon eq. 33).
double xi0(double w) {
  if (std::fabs(w) < 0.05) {
    const double w2 = w * w;
    return 1.0 - w2 / 6.0 * (1.0 - w2 / 20.0 * (1.0 - w2 / 42.0));
  }
  return std::sin(w) / w;
}

}  // namespace

SU3<double> exp_i_su3(const SU3<double>& q) {
  const M3 q2 = q * q;
  const double c1 = 0.5 * trace(q2).re;
  if (c1 < 0.01) {
    // |Q|_F = sqrt(2 c1) < 0.15: sum_n (iQ)^n / n! converges to rounding within ~15 terms.
    M3 sum = identity_su3<double>(), term = identity_su3<double>();
    for (int n = 1; n < 40; ++n) {
      term = scale(C{0.0, 1.0 / n}, term * q);
      sum = sum + term;
      if (frob2(term) < 1e-40) break;
    }
    return sum;
  }
  const double c0 = det3(q).re;
  const double c0max = 2.0 * std::pow(c1 / 3.0, 1.5);
  const double ratio = std::fmin(std::fabs(c0) / c0max, 1.0);
  const double theta = std::acos(ratio);
  const double u = std::sqrt(c1 / 3.0) * std::cos(theta / 3.0);
  const double w = std::sqrt(c1) * std::sin(theta / 3.0);
  const double u2 = u * u, w2 = w * w, cw = std::cos(w), xi = xi0(w);
  const C e2iu{std::cos(2.0 * u), std::sin(2.0 * u)};
  const C emiu{std::cos(u), -std::sin(u)};
  const C h0 = (u2 - w2) * e2iu + emiu * C{8.0 * u2 * cw, 2.0 * u * (3.0 * u2 + w2) * xi};
  const C h1 = 2.0 * u * e2iu - emiu * C{2.0 * u * cw, -(3.0 * u2 - w2) * xi};
  const C h2 = e2iu - emiu * C{cw, 3.0 * u * xi};
  const double inv = 1.0 / (9.0 * u2 - w2);  // >= 2 c1 > 0 for 0 <= theta <= pi / 2
  C f0 = inv * h0, f1 = inv * h1, f2 = inv * h2;
  if (c0 < 0) {  // f_j(-c0) = (-1)^j conj(f_j(c0))
    f0 = conj(f0);
    f1 = -conj(f1);
    f2 = conj(f2);
  }
  return add_identity(f0, scale(f1, q) + scale(f2, q2));
}

SU3<double> project_su3_maxtrace(const SU3<double>& w) {
  M3 x = identity_su3<double>();
  M3 polar;
  if (polar_unitary(w, polar)) {
    // polar is the U(3) maximiser; of the three cube roots of conj(det), take the one with the largest functional.
    const C d = det3(polar);
    const double phi = std::atan2(d.im, d.re);
    const C t = trace(dagger(w) * polar);
    double best = -std::numeric_limits<double>::infinity();
    C phase{1.0, 0.0};
    for (int k = 0; k < 3; ++k) {
      const double a = -(phi + 2.0 * 3.14159265358979323846 * k) / 3.0;
      const C p{std::cos(a), std::sin(a)};
      const double v = (p * t).re;
      if (v > best) {
        best = v;
        phase = p;
      }
    }
    x = project_su3(scale(phase, polar));  // unitarity and det 1 to rounding
  }
  // Cabibbo-Marinari: X <- A X with A in the SU(2) subgroup (p, q) maximising Re tr(A X W^dag) exactly.
  const double tol = 1e-14 * std::sqrt(frob2(w));
  constexpr int kSub[3][2] = {{0, 1}, {1, 2}, {0, 2}};
  for (int sweep = 0; sweep < 200; ++sweep) {
    if (traceless_antihermitian_norm(x * dagger(w)) <= tol) break;
    for (const auto& pq : kSub) {
      const int p = pq[0], q = pq[1];
      const M3 m = x * dagger(w);
      // Re tr(A m) = a . r for A = [[a0 + i a3, a2 + i a1], [-a2 + i a1, a0 - i a3]] on rows/columns p, q.
      const double r[4] = {m.e[p][p].re + m.e[q][q].re, -(m.e[q][p].im + m.e[p][q].im), m.e[q][p].re - m.e[p][q].re,
                           -(m.e[p][p].im - m.e[q][q].im)};
      const double n = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
      if (!(n > 0)) continue;
      const double a0 = r[0] / n, a1 = r[1] / n, a2 = r[2] / n, a3 = r[3] / n;
      const C app{a0, a3}, apq{a2, a1}, aqp{-a2, a1}, aqq{a0, -a3};
      for (int j = 0; j < 3; ++j) {
        const C xp = x.e[p][j], xq = x.e[q][j];
        x.e[p][j] = app * xp + apq * xq;
        x.e[q][j] = aqp * xp + aqq * xq;
      }
    }
  }
  return x;
}

SU3<double> ape_link(const SU3<double>& v, const SU3<double>& staples, double alpha) {
  return project_su3_maxtrace(scale(1.0 - alpha, v) + scale(alpha / 4.0, staples));
}

SU3<double> stout_link(const SU3<double>& v, const SU3<double>& staples, double rho) {
  const M3 omega = scale(rho, staples) * dagger(v);
  const M3 a = dagger(omega) - omega;  // anti-hermitian
  const C t = trace(a);
  // Q = (i/2) A - (i/6) tr(A)
  const M3 q = add_identity(C{t.im / 6.0, -t.re / 6.0}, scale(C{0.0, 0.5}, a));
  return exp_i_su3(q) * v;
}

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
    v[0] = ordered_sum(n, [&](std::int64_t k) {
      int x[3];
      geom_.slice_coords(k, x);
      double s = 0;
      for (int i = 0; i < 3; ++i)
        for (int j = i + 1; j < 3; ++j) {
          int xi[3] = {x[0], x[1], x[2]}, xj[3] = {x[0], x[1], x[2]};
          ++xi[i];
          ++xj[j];
          const M3 p = link(x, i) * link(xi, j) * dagger(link(xj, i)) * dagger(link(x, j));
          s += trace(p).re / 3.0;
        }
      return s;
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
  const std::int64_t n = geom_.slice_volume();
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < n; ++k) {
    int x[3];
    geom_.slice_coords(k, x);
    for (int i = 0; i < 3; ++i) {
      // sum_{j != i} V_j(x) V_i(x+j) V_j(x+i)^dag + V_j(x-j)^dag V_i(x-j) V_j(x-j+i)
      M3 staples = zero_m3();
      for (int j = 0; j < 3; ++j) {
        if (j == i) continue;
        int xpi[3] = {x[0], x[1], x[2]}, xpj[3] = {x[0], x[1], x[2]}, xmj[3] = {x[0], x[1], x[2]};
        ++xpi[i];
        ++xpj[j];
        --xmj[j];
        int xmjpi[3] = {xmj[0], xmj[1], xmj[2]};
        ++xmjpi[i];
        staples = staples + link(x, j) * link(xpj, i) * dagger(link(xpi, j));
        staples = staples + dagger(link(xmj, j)) * link(xmj, i) * link(xmjpi, j);
      }
      const M3& v = link(x, i);
      next[site(x) * 3 + static_cast<std::size_t>(i)] = cfg_.link_kind == LinkSmearingKind::Ape
                                                            ? ape_link(v, staples, cfg_.link_weight)
                                                            : stout_link(v, staples, cfg_.link_weight);
    }
  }
  links_.swap(next);
  fill_link_halo();
}

void SourceSmearer::quark_step(const std::vector<Spinor<double>>& psi, const std::vector<Spinor<double>>& psi0,
                               std::vector<Spinor<double>>& out) const {
  const QuarkSmearStep f = step_functor(psi.data(), psi0.data(), out.data());
  const std::int64_t n = geom_.slice_volume();
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < n; ++k) f(static_cast<int>(k));
}

QuarkSmearStep SourceSmearer::step_functor(const Spinor<double>* psi, const Spinor<double>* psi0, Spinor<double>* out,
                                           const SU3<double>* links) const {
  QuarkSmearStep f;
  f.box = SliceBoxArg{{local_[0], local_[1], local_[2]}};
  f.links = links ? links : links_.data();
  f.psi = psi;
  f.psi0 = psi0;
  f.out = out;
  f.wuppertal = cfg_.kind == QuarkSmearingKind::Wuppertal ? 1 : 0;
  f.weight = {cfg_.weight, 0.0};
  f.norm = {1.0 / (1.0 + 6.0 * cfg_.weight), 0.0};
  return f;
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
