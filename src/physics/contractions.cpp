// contractions.cpp: meson two-point functions, effective and PCAC masses (see contractions.hpp for the
// conventions: C_{Gsnk,Gsrc}(p, t) = sum_x exp(-i p.(x - x0)) tr[Gsnk S(x) Gsrc g5 S(x)^dag g5], gamma matrices of
// docs/conventions.md section 3). Host code; the contraction is an OpenMP loop over local (t, z) planes whose
// partial sums are added in a fixed order, so the result does not depend on the number of threads.
// Who may call: see contractions.hpp (meson_correlators is collective over the communicator).
#include "src/physics/contractions.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace emprism {

namespace {

using Cd = std::complex<double>;

constexpr double kTwoPi = 6.283185307179586476925286766559;

// One (Gsnk, Gsrc) pair in the form the site loop uses.
struct SparsePair {
  std::array<int, 4> snk_col, src_col;
  std::array<Cd, 4> snk_phase, src_phase;
};

// tr[Gsnk S Gsrc g5 S^dag g5] at one site, with B = conj(g5 S g5) elementwise (B[a][b] = g5(a) g5(b) S[a][b]^*):
//   sum_{alpha, gamma} Gsnk[alpha][pi(alpha)] Gsrc[gamma][sigma(gamma)] S[pi(alpha)][gamma] B[alpha][sigma(gamma)]
// where alpha, gamma run over spin and colour and the permutations act on the spin only.
inline Cd site_trace(const SparsePair& p, const Cd (&s)[12][12], const Cd (&b)[12][12]) {
  Cd total = 0;
  for (int sa = 0; sa < 4; ++sa) {
    const int row_s = 3 * p.snk_col[sa], row_b = 3 * sa;
    for (int sg = 0; sg < 4; ++sg) {
      const int col_s = 3 * sg, col_b = 3 * p.src_col[sg];
      Cd block = 0;
      for (int ca = 0; ca < 3; ++ca)
        for (int cg = 0; cg < 3; ++cg) block += s[row_s + ca][col_s + cg] * b[row_b + ca][col_b + cg];
      total += p.snk_phase[sa] * p.src_phase[sg] * block;
    }
  }
  return total;
}

int mod(std::int64_t a, int n) { return static_cast<int>(((a % n) + n) % n); }

// log cosh(x) and log sinh(x) (x > 0), accurate for small and large x.
double log_cosh(double x) {
  x = std::fabs(x);
  if (x < 1) {
    const double h = std::sinh(0.5 * x);
    return std::log1p(2 * h * h);
  }
  return x + std::log1p(std::exp(-2 * x)) - std::log(2.0);
}
double log_sinh(double x) {
  if (x < 1) return std::log(std::sinh(x));
  return x + std::log1p(-std::exp(-2 * x)) - std::log(2.0);
}

}  // namespace

Gamma gamma_unit() { return Gamma{{0, 1, 2, 3}, {1.0, 1.0, 1.0, 1.0}}; }

// gamma_k = [[0, -i s_k], [i s_k, 0]], gamma_4 = [[0, 1], [1, 0]] (docs/conventions.md section 3), row by row.
Gamma gamma_mu(int mu) {
  const Cd i(0, 1);
  switch (mu) {
    case 0:
      return Gamma{{3, 2, 1, 0}, {-i, -i, i, i}};
    case 1:
      return Gamma{{3, 2, 1, 0}, {-1.0, 1.0, 1.0, -1.0}};
    case 2:
      return Gamma{{2, 3, 0, 1}, {-i, i, i, -i}};
    case 3:
      return Gamma{{2, 3, 0, 1}, {1.0, 1.0, 1.0, 1.0}};
    default:
      throw std::invalid_argument("gamma_mu: mu = " + std::to_string(mu) + " is not 0..3");
  }
}

Gamma gamma_5() { return gamma_mu(0) * gamma_mu(1) * gamma_mu(2) * gamma_mu(3); }

// (a b)[r][c] = a[r][k] b[k][c] with k = a.column[r]: column b.column[k], value a.phase[r] b.phase[k].
Gamma operator*(const Gamma& a, const Gamma& b) {
  Gamma c{};
  for (int r = 0; r < 4; ++r) {
    const int k = a.column[r];
    c.column[r] = b.column[k];
    c.phase[r] = a.phase[r] * b.phase[k];
  }
  return c;
}

const std::vector<MesonChannel>& meson_channels() {
  static const std::vector<MesonChannel> table = [] {
    const Gamma one = gamma_unit(), g4 = gamma_mu(3), g5 = gamma_5(), g4g5 = g4 * g5;
    auto spatial = [](auto&& make) {
      std::vector<std::pair<Gamma, Gamma>> pairs;
      for (int i = 0; i < 3; ++i) pairs.emplace_back(make(gamma_mu(i)), make(gamma_mu(i)));
      return pairs;
    };
    std::vector<MesonChannel> t;
    t.push_back({"pion", {{g5, g5}}, +1, "g5", "g5"});
    t.push_back({"axial", {{g4g5, g5}}, -1, "g4g5", "g5"});
    t.push_back({"axial_axial", {{g4g5, g4g5}}, +1, "g4g5", "g4g5"});
    t.push_back({"rho", spatial([](const Gamma& gi) { return gi; }), +1, "gi", "gi"});
    t.push_back({"rho_t", spatial([&](const Gamma& gi) { return gi * g4; }), +1, "gig4", "gig4"});
    t.push_back({"a0", {{one, one}}, +1, "1", "1"});
    t.push_back({"a1", spatial([&](const Gamma& gi) { return gi * g5; }), +1, "gig5", "gig5"});
    return t;
  }();
  return table;
}

const MesonChannel* find_meson_channel(const std::string& name) {
  for (const MesonChannel& c : meson_channels())
    if (c.name == name) return &c;
  return nullptr;
}

void check_source_site(const Extents& gl, const std::array<int, 4>& source_site) {
  for (int mu = 0; mu < 4; ++mu)
    if (source_site[mu] < 0 || source_site[mu] >= gl[mu])
      throw std::invalid_argument("meson_correlators: source site outside the lattice");
}

std::vector<const MesonChannel*> select_meson_channels(const std::vector<std::string>& channels) {
  std::vector<const MesonChannel*> chans;
  if (channels.empty()) {
    for (const MesonChannel& c : meson_channels()) chans.push_back(&c);
    return chans;
  }
  for (const std::string& name : channels) {
    const MesonChannel* c = find_meson_channel(name);
    if (!c) throw std::invalid_argument("meson_correlators: unknown channel '" + name + "'");
    chans.push_back(c);
  }
  return chans;
}

// phase[(m * 3 + d) * lmax + k] = exp(-2 pi i ((n_d k) mod L_d) / L_d), k = (x_d - x0_d) mod L_d.
PhaseTable phase_table(const Extents& gl, const std::vector<std::array<int, 3>>& momenta) {
  PhaseTable t;
  t.lmax = std::max(gl[0], std::max(gl[1], gl[2]));
  const int nmom = static_cast<int>(momenta.size());
  t.phase.resize(static_cast<std::size_t>(nmom) * 3 * t.lmax);
  for (int m = 0; m < nmom; ++m)
    for (int d = 0; d < 3; ++d)
      for (int k = 0; k < gl[d]; ++k) {
        const double angle = kTwoPi * mod(std::int64_t(momenta[m][d]) * k, gl[d]) / gl[d];
        t.phase[(static_cast<std::size_t>(m) * 3 + d) * t.lmax + k] = Cd(std::cos(angle), -std::sin(angle));
      }
  return t;
}

namespace {

// The (sink, source) pairs of the channels in sparse form: those of channel k are [first[k], first[k + 1]).
struct PairTable {
  std::vector<SparsePair> pairs;
  std::vector<int> first;
};

PairTable pair_table(const std::vector<const MesonChannel*>& chans) {
  PairTable t;
  for (const MesonChannel* c : chans) {
    t.first.push_back(static_cast<int>(t.pairs.size()));
    for (const auto& [snk, src] : c->pairs) t.pairs.push_back({snk.column, src.column, snk.phase, src.phase});
  }
  t.first.push_back(static_cast<int>(t.pairs.size()));
  return t;
}

// Partial sums of the local (t, z) planes, [plane][channel][momentum].
std::vector<Cd> plane_sums(const Geometry& g, const Propagator& s, const std::array<int, 4>& source_site,
                           const PairTable& pt, int nch, const PhaseTable& pht, int nmom) {
  const Extents& gl = g.global();
  const Extents& lo = g.local();
  const Extents& org = g.origin();
  const int nplanes = lo[3] * lo[2];
  const int lmax = pht.lmax;
  const std::size_t stride = static_cast<std::size_t>(nch) * nmom;
  std::vector<Cd> partial(static_cast<std::size_t>(nplanes) * stride, Cd(0));
#pragma omp parallel for schedule(static)
  for (int plane = 0; plane < nplanes; ++plane) {
    Cd sm[12][12], bm[12][12];
    std::vector<Cd> vals(static_cast<std::size_t>(nch));
    Cd* acc = &partial[static_cast<std::size_t>(plane) * stride];
    int x[4];
    x[2] = plane % lo[2];
    x[3] = plane / lo[2];
    const int kz = mod(std::int64_t(org[2]) + x[2] - source_site[2], gl[2]);
    for (x[1] = 0; x[1] < lo[1]; ++x[1]) {
      const int ky = mod(std::int64_t(org[1]) + x[1] - source_site[1], gl[1]);
      for (x[0] = 0; x[0] < lo[0]; ++x[0]) {
        const int kx = mod(std::int64_t(org[0]) + x[0] - source_site[0], gl[0]);
        const std::size_t base = static_cast<std::size_t>(g.local_lex(x)) * 12;
        for (int src = 0; src < 12; ++src) {
          const Cd* column = &s.columns[static_cast<std::size_t>(src)][base];
          for (int snk = 0; snk < 12; ++snk) {
            sm[snk][src] = column[snk];
            const Cd c = std::conj(column[snk]);
            bm[snk][src] = ((snk < 6) == (src < 6)) ? c : -c;  // g5 = diag(1, 1, -1, -1) on spin = index / 3
          }
        }
        for (int k = 0; k < nch; ++k) {
          Cd v = 0;
          for (int p = pt.first[k]; p < pt.first[k + 1]; ++p) v += site_trace(pt.pairs[p], sm, bm);
          vals[k] = v / double(pt.first[k + 1] - pt.first[k]);
        }
        for (int m = 0; m < nmom; ++m) {
          const Cd* ph = &pht.phase[static_cast<std::size_t>(m) * 3 * lmax];
          const Cd e = ph[kx] * ph[lmax + ky] * ph[2 * lmax + kz];
          for (int k = 0; k < nch; ++k) acc[static_cast<std::size_t>(k) * nmom + m] += e * vals[k];
        }
      }
    }
  }
  return partial;
}

}  // namespace

std::vector<Correlator> meson_correlators(const Geometry& g, const Propagator& s, const std::array<int, 4>& source_site,
                                          const std::vector<std::string>& channels,
                                          const std::vector<std::array<int, 3>>& momenta, Communicator* comm) {
  const Extents& gl = g.global();
  check_source_site(gl, source_site);
  const std::size_t col_size = static_cast<std::size_t>(g.local_volume()) * 12;
  for (const auto& col : s.columns)
    if (col.size() != col_size) throw std::invalid_argument("meson_correlators: propagator column of the wrong size");

  const std::vector<const MesonChannel*> chans = select_meson_channels(channels);
  const int nch = static_cast<int>(chans.size());
  const int nmom = static_cast<int>(momenta.size());
  const std::vector<Cd> partial = plane_sums(g, s, source_site, pair_table(chans), nch, phase_table(gl, momenta), nmom);
  return correlators_from_planes(g, source_site, chans, momenta, partial, comm);
}

std::vector<Correlator> correlators_from_planes(const Geometry& g, const std::array<int, 4>& source_site,
                                                const std::vector<const MesonChannel*>& chans,
                                                const std::vector<std::array<int, 3>>& momenta,
                                                const std::vector<std::complex<double>>& partial, Communicator* comm) {
  const Extents& lo = g.local();
  const Extents& org = g.origin();
  const int nch = static_cast<int>(chans.size());
  const int nmom = static_cast<int>(momenta.size());
  const int lt_global = g.global()[3];
  // Planes in a fixed order into [channel][momentum][t]; zeros for the timeslices other ranks hold.
  const int nplanes = lo[3] * lo[2];
  const std::size_t stride = static_cast<std::size_t>(nch) * nmom;
  std::vector<double> buf(stride * lt_global * 2, 0.0);
  for (int plane = 0; plane < nplanes; ++plane) {
    const int t = mod(std::int64_t(org[3]) + plane / lo[2] - source_site[3], lt_global);
    for (std::size_t km = 0; km < stride; ++km) {
      const Cd v = partial[static_cast<std::size_t>(plane) * stride + km];
      buf[(km * lt_global + t) * 2] += v.real();
      buf[(km * lt_global + t) * 2 + 1] += v.imag();
    }
  }
  if (comm) comm->sum(buf.data(), static_cast<int>(buf.size()));

  std::vector<Correlator> out;
  out.reserve(stride);
  for (int k = 0; k < nch; ++k)
    for (int m = 0; m < nmom; ++m) {
      Correlator c{chans[k]->name, momenta[m], std::vector<Cd>(static_cast<std::size_t>(lt_global))};
      const std::size_t km = static_cast<std::size_t>(k) * nmom + m;
      for (int t = 0; t < lt_global; ++t)
        c.values[t] = Cd(buf[(km * lt_global + t) * 2], buf[(km * lt_global + t) * 2 + 1]);
      out.push_back(std::move(c));
    }
  return out;
}

std::vector<double> effective_mass(const std::vector<double>& c, int time_parity) {
  if (time_parity != 1 && time_parity != -1)
    throw std::invalid_argument("effective_mass: time parity must be +1 or -1");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int lt = static_cast<int>(c.size());
  std::vector<double> m(c.size(), nan);
  for (int t = 0; t + 1 < lt; ++t) {
    const double ratio = c[t] / c[t + 1];
    if (!std::isfinite(ratio) || !(ratio > 0)) continue;  // zero, sign change, inf or NaN
    const double y = std::log(ratio);
    // f(m, t) proportional to cosh(m a) or sinh(m a), a = Lt/2 - t; r(m) = f(m, a) / f(m, b), b = a - 1.
    const double a = 0.5 * lt - t, b = a - 1;
    double low_limit;  // log r(m -> 0)
    if (time_parity == 1) {
      if (std::fabs(a) == std::fabs(b)) continue;
      low_limit = 0;
    } else {
      if (a == 0 || b == 0 || (a > 0) != (b > 0)) continue;
      low_limit = std::log(std::fabs(a) / std::fabs(b));
    }
    const double aa = std::fabs(a), ab = std::fabs(b);
    const bool rising = aa > ab;  // log r(m) rises to +infinity (else falls to -infinity)
    if (rising ? !(y > low_limit) : !(y < low_limit)) continue;
    auto log_r = [&](double mass) {
      return time_parity == 1 ? log_cosh(mass * aa) - log_cosh(mass * ab) : log_sinh(mass * aa) - log_sinh(mass * ab);
    };
    // g(mass) = +-(log r(mass) - y) is increasing, negative at 0 and positive at large mass.
    auto g = [&](double mass) { return rising ? log_r(mass) - y : y - log_r(mass); };
    double lo = 0, hi = 1;
    for (int i = 0; i < 64 && g(hi) <= 0; ++i) {
      lo = hi;
      hi *= 2;
    }
    if (g(hi) <= 0) continue;  // beyond any representable ratio
    for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; ++i) {
      const double mid = 0.5 * (lo + hi);
      if (mid <= lo || mid >= hi) break;
      (g(mid) > 0 ? hi : lo) = mid;
    }
    m[t] = 0.5 * (lo + hi);
  }
  return m;
}

std::vector<double> pcac_mass(const std::vector<double>& axial, const std::vector<double>& pion) {
  if (axial.size() != pion.size() || pion.empty())
    throw std::invalid_argument("pcac_mass: axial and pion correlators of different or zero length");
  const int lt = static_cast<int>(pion.size());
  std::vector<double> m(pion.size());
  for (int t = 0; t < lt; ++t)
    m[t] = pion[t] == 0 ? std::numeric_limits<double>::quiet_NaN()
                        : (axial[(t + 1) % lt] - axial[(t - 1 + lt) % lt]) / (4 * pion[t]);
  return m;
}

}  // namespace emprism

namespace emprism {

ContractionCost contraction_cost(std::int64_t sites, const std::vector<std::string>& channels, int momenta) {
  double pairs = 0, nch = 0;
  for (const std::string& name : channels) {
    if (const MesonChannel* c = find_meson_channel(name)) {
      pairs += static_cast<double>(c->pairs.size());
      nch += 1;
    }
  }
  const double n = static_cast<double>(sites);
  return {n * (1376.0 * pairs + 8.0 * nch * momenta), n * 144.0 * 16.0};
}

}  // namespace emprism
