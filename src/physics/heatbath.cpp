// heatbath.cpp: Cabibbo-Marinari heatbath (Kennedy-Pendleton) and overrelaxation for the Wilson gauge action,
// checkerboarded over (mu, parity) blocks with a halo refresh after each (see heatbath.hpp for the conventions
// and the RNG counters). Collective over the process grid.
#include "src/physics/heatbath.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/lattice/rng.hpp"

namespace emprism {

namespace {

using C = Complex<double>;
using M3 = SU3<double>;

constexpr double kTwoPi = 6.283185307179586476925286766559;
// Below this SU(2) coupling alpha the polar component is drawn from the Haar measure and accepted with
// exp(alpha (x0 - 1)) (acceptance > e^-2alpha); above it by Kennedy-Pendleton (acceptance > ~0.6). Both are exact.
constexpr double kKpMinAlpha = 1.5;
constexpr std::uint32_t kMaxAttempts = 0xffffu;
// Blocks of fewer sites run on one thread: a block is then ~1 ms of work, and the barrier of a parallel region per
// block costs more than it saves, badly so on an oversubscribed machine (CI running tests side by side).
constexpr int kMinSitesForThreads = 4096;

// The SU(2) subgroups (rows/columns i, j).
constexpr int kSub[3][2] = {{0, 1}, {1, 2}, {0, 2}};

// a * b^dag
inline M3 mul_adj(const M3& a, const M3& b) {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r.e[i][j] = a.e[i][0] * conj(b.e[j][0]) + a.e[i][1] * conj(b.e[j][1]) + a.e[i][2] * conj(b.e[j][2]);
  return r;
}

// a^dag * b
inline M3 adj_mul(const M3& a, const M3& b) {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r.e[i][j] = conj_mul(a.e[0][i], b.e[0][j]) + conj_mul(a.e[1][i], b.e[1][j]) + conj_mul(a.e[2][i], b.e[2][j]);
  return r;
}

// 2x2 complex matrix of the quaternion q: q0 + i q.sigma = [[q0 + i q3, q2 + i q1], [-q2 + i q1, q0 - i q3]].
struct M2 {
  C e[2][2];
};

inline M2 su2_of(const double q[4]) {
  M2 m;
  m.e[0][0] = {q[0], q[3]};
  m.e[0][1] = {q[2], q[1]};
  m.e[1][0] = {-q[2], q[1]};
  m.e[1][1] = {q[0], -q[3]};
  return m;
}

inline M2 mul2(const M2& a, const M2& b) {
  M2 r;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) r.e[i][j] = a.e[i][0] * b.e[0][j] + a.e[i][1] * b.e[1][j];
  return r;
}

// U <- R U with R the embedding of r in rows/columns (i, j).
inline void apply_left(M3& u, int i, int j, const M2& r) {
  for (int c = 0; c < 3; ++c) {
    const C ui = u.e[i][c], uj = u.e[j][c];
    u.e[i][c] = r.e[0][0] * ui + r.e[0][1] * uj;
    u.e[j][c] = r.e[1][0] * ui + r.e[1][1] * uj;
  }
}

// The quaternion b of the (i, j) block w of W = U A, defined by Re tr(M(a) w) = 2 a.b for every quaternion a.
inline void block_quaternion(const M3& u, const M3& a, int i, int j, double b[4]) {
  auto w = [&](int r, int c) { return u.e[r][0] * a.e[0][c] + u.e[r][1] * a.e[1][c] + u.e[r][2] * a.e[2][c]; };
  const C wii = w(i, i), wij = w(i, j), wji = w(j, i), wjj = w(j, j);
  b[0] = 0.5 * (wii.re + wjj.re);
  b[1] = -0.5 * (wij.im + wji.im);
  b[2] = 0.5 * (wji.re - wij.re);
  b[3] = 0.5 * (wjj.im - wii.im);
}

inline std::uint32_t rng_index(int mu, int subgroup, std::uint32_t attempt) {
  return (static_cast<std::uint32_t>(mu) << 20) | (static_cast<std::uint32_t>(subgroup) << 16) | attempt;
}

// Draws x0 in [-1, 1] with density sqrt(1 - x0^2) exp(alpha x0) using uniforms (stream, site, index_base +
// attempt), attempt = 1, 2, ...; false if all kMaxAttempts were rejected (never in practice).
bool draw_x0(double alpha, std::uint64_t seed, RngStream stream, std::uint64_t site, std::uint32_t index_base,
             double& x0) {
  for (std::uint32_t attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    double r[4];
    uniform4(seed, stream, site, index_base | attempt, r);
    if (alpha < kKpMinAlpha) {
      // x-coordinate of a uniform point of the unit disk: density ~ sqrt(1 - x^2).
      const double x = std::sqrt(r[0]) * std::cos(kTwoPi * r[1]);
      if (r[2] <= std::exp(alpha * (x - 1.0))) {
        x0 = x;
        return true;
      }
    } else {
      // Kennedy-Pendleton: delta ~ delta^(1/2) exp(-2 alpha delta) (Gamma(3/2) / (2 alpha)), accepted with
      // sqrt(1 - delta); x0 = 1 - 2 delta.
      const double c = std::cos(kTwoPi * r[1]);
      const double delta = -(std::log(r[0]) + c * c * std::log(r[2])) / (2.0 * alpha);
      if (r[3] * r[3] <= 1.0 - delta) {
        x0 = 1.0 - 2.0 * delta;
        return true;
      }
    }
  }
  return false;
}

// Heatbath of one link in its three SU(2) subgroups.
void heatbath_link(HostGauge& u, const int x[4], int mu, double beta, std::uint64_t seed, RngStream stream,
                   std::uint64_t site) {
  const M3 a = wilson_staple(u, x, mu);
  M3 link = u.at(x, mu);
  for (int s = 0; s < 3; ++s) {
    const int i = kSub[s][0], j = kSub[s][1];
    double b[4];
    block_quaternion(link, a, i, j, b);
    const double k = std::sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2] + b[3] * b[3]);
    // Weight exp((beta / 3) Re tr(R W)) = exp((2 beta k / 3) x0) with x = r V, V = M(conj(b) / k).
    const double alpha = 2.0 * beta * k / 3.0;
    double x0;
    if (!draw_x0(alpha, seed, stream, site, rng_index(mu, s, 0), x0)) continue;
    double d[4];
    uniform4(seed, stream, site, rng_index(mu, s, 0), d);
    const double cos_t = 2.0 * d[0] - 1.0;
    const double sin_t = std::sqrt(std::fmax(0.0, 1.0 - cos_t * cos_t));
    const double phi = kTwoPi * d[1];
    const double rad = std::sqrt(std::fmax(0.0, 1.0 - x0 * x0));
    const double q[4] = {x0, rad * sin_t * std::cos(phi), rad * sin_t * std::sin(phi), rad * cos_t};
    M2 r = su2_of(q);
    if (k > 0) {
      const double vdag[4] = {b[0] / k, b[1] / k, b[2] / k, b[3] / k};  // M(b / k) = V^dag
      r = mul2(r, su2_of(vdag));
    }
    apply_left(link, i, j, r);
  }
  u.at(x, mu) = link;
}

// Overrelaxation of one link: in each subgroup R = (V^dag)^2, which keeps Re tr(R W).
void overrelax_link(HostGauge& u, const int x[4], int mu) {
  const M3 a = wilson_staple(u, x, mu);
  M3 link = u.at(x, mu);
  for (int s = 0; s < 3; ++s) {
    const int i = kSub[s][0], j = kSub[s][1];
    double b[4];
    block_quaternion(link, a, i, j, b);
    const double k = std::sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2] + b[3] * b[3]);
    if (!(k > 0)) continue;
    const double vdag[4] = {b[0] / k, b[1] / k, b[2] / k, b[3] / k};
    const M2 v = su2_of(vdag);
    apply_left(link, i, j, mul2(v, v));
  }
  u.at(x, mu) = link;
}

// Calls f(x, global site) for the local sites of one parity (OpenMP over the sites), then refreshes the halo
// copies of the links of direction mu (the only ones f changes).
template <typename F>
void update_block(HostGauge& u, int mu, int parity, const ProcessGrid* grid, F&& f) {
  const Geometry& g = u.geometry();
  const int vh = g.half_volume();
#pragma omp parallel for schedule(static) if (vh >= kMinSitesForThreads)
  for (int cb = 0; cb < vh; ++cb) {
    int x[4];
    g.arg().coords(cb, parity, x);
    f(x, static_cast<std::uint64_t>(g.global_lex(x)));
  }
  refresh_link_halo(u, mu, grid);
}

// The whole halo, as u.fill_halo(grid) (same result, less copying).
void refresh_halo(HostGauge& u, const ProcessGrid* grid) {
  for (int mu = 0; mu < 4; ++mu) refresh_link_halo(u, mu, grid);
}

// One overrelaxation pass (the halo must be filled on entry).
void overrelax_pass(HostGauge& u, const ProcessGrid* grid) {
  for (int mu = 0; mu < 4; ++mu)
    for (int parity = 0; parity < 2; ++parity)
      update_block(u, mu, parity, grid, [&](const int* x, std::uint64_t) { overrelax_link(u, x, mu); });
}

void reunitarise(HostGauge& u, const ProcessGrid* grid) {
  const Geometry& g = u.geometry();
  const std::int64_t vol = g.local_volume();
#pragma omp parallel for schedule(static) if (vol >= 2 * kMinSitesForThreads)
  for (std::int64_t lex = 0; lex < vol; ++lex) {
    int x[4];
    g.local_coords(lex, x);
    for (int mu = 0; mu < 4; ++mu) u.at(x, mu) = project_su3(u.at(x, mu));
  }
  refresh_halo(u, grid);
}

}  // namespace

SU3<double> wilson_staple(const HostGauge& u, const int x[4], int mu) {
  M3 sum{};
  for (int nu = 0; nu < 4; ++nu) {
    if (nu == mu) continue;
    int xp[4] = {x[0], x[1], x[2], x[3]}, xn[4] = {x[0], x[1], x[2], x[3]};
    int xpmn[4] = {x[0], x[1], x[2], x[3]}, xmn[4] = {x[0], x[1], x[2], x[3]};
    xp[mu] += 1;
    xn[nu] += 1;
    xpmn[mu] += 1;
    xpmn[nu] -= 1;
    xmn[nu] -= 1;
    // U_nu(x+mu) U_mu(x+nu)^dag U_nu(x)^dag
    sum = sum + mul_adj(mul_adj(u.at(xp, nu), u.at(xn, mu)), u.at(x, nu));
    // U_nu(x+mu-nu)^dag U_mu(x-nu)^dag U_nu(x-nu) = (U_mu(x-nu) U_nu(x+mu-nu))^dag U_nu(x-nu)
    sum = sum + adj_mul(u.at(xmn, mu) * u.at(xpmn, nu), u.at(xmn, nu));
  }
  return sum;
}

void refresh_link_halo(HostGauge& u, int mu, const ProcessGrid* grid) { u.fill_link_halo(mu, grid); }

void heatbath_sweep(HostGauge& u, const HeatbathParams& p, std::uint64_t sweep_index, const ProcessGrid* grid) {
  if (sweep_index > kMaxHeatbathSweepIndex)
    throw std::invalid_argument("heatbath_sweep: sweep index " + std::to_string(sweep_index) + " exceeds " +
                                std::to_string(kMaxHeatbathSweepIndex));
  if (!(p.beta >= 0)) throw std::invalid_argument("heatbath_sweep: beta must be >= 0");
  const RngStream stream = static_cast<RngStream>(kHeatbathStreamBase | static_cast<std::uint32_t>(sweep_index));
  refresh_halo(u, grid);
  for (int mu = 0; mu < 4; ++mu)
    for (int parity = 0; parity < 2; ++parity)
      update_block(u, mu, parity, grid,
                   [&](const int* x, std::uint64_t site) { heatbath_link(u, x, mu, p.beta, p.seed, stream, site); });
  for (int k = 0; k < p.or_per_sweep; ++k) overrelax_pass(u, grid);
  reunitarise(u, grid);
}

void overrelax_sweep(HostGauge& u, const ProcessGrid* grid) {
  refresh_halo(u, grid);
  overrelax_pass(u, grid);
}

double su2_heatbath_x0(double alpha, std::uint64_t seed, std::uint64_t site) {
  double x0;
  if (!draw_x0(alpha, seed, static_cast<RngStream>(kHeatbathStreamBase), site, 0, x0)) return std::nan("");
  return x0;
}

std::vector<double> thermalise(HostGauge& u, const HeatbathParams& p, int sweeps, const ProcessGrid* grid,
                               Communicator& comm, std::uint64_t first_sweep) {
  std::vector<double> plaq;
  plaq.reserve(static_cast<std::size_t>(sweeps > 0 ? sweeps : 0));
  for (int s = 0; s < sweeps; ++s) {
    heatbath_sweep(u, p, first_sweep + static_cast<std::uint64_t>(s), grid);
    plaq.push_back(plaquette(u, &comm));
  }
  return plaq;
}

}  // namespace emprism
