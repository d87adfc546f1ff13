// Reference Wilson-clover operator and free-field results, for tests only (see reference.hpp).
//
// Every formula is the literal one of docs/conventions.md; speed is not a goal. Conventions:
// site s = x + Lx*(y + Ly*(z + Lz*t)); spinor (s*4 + spin)*3 + colour; links ((s*4 + mu)*3 + row)*3 + col;
// boundary phase exp(+i theta_mu) on a forward hop across the global boundary, exp(-i theta_mu) backward.
// Callers: tests only.
#include "reference/reference.hpp"

#include <cmath>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace emprism::ref {
namespace {

constexpr double kPi = 3.14159265358979323846;
const Cd kI{0.0, 1.0};

using Mat2 = std::array<Cd, 4>;  // row-major 2x2

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("emprism::ref: " + what);
}

void check_extents(const Extents& L) {
  for (int mu = 0; mu < 4; ++mu) require(L[mu] >= 1, "extent must be positive");
}

void check_links(const Extents& L, const std::vector<Cd>& links) {
  require(links.size() == static_cast<std::size_t>(volume(L)) * 36, "links must have size V*4*9");
}

void check_spinor(const Extents& L, const std::vector<Cd>& psi) {
  require(psi.size() == static_cast<std::size_t>(volume(L)) * 12, "spinor must have size V*12");
}

// ---- 3x3 colour matrices ----
Mat3 mat3_mul(const Mat3& a, const Mat3& b) {
  Mat3 c{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) c[i * 3 + j] += a[i * 3 + k] * b[k * 3 + j];
  return c;
}

Mat3 mat3_adjoint(const Mat3& a) {
  Mat3 c{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) c[i * 3 + j] = std::conj(a[j * 3 + i]);
  return c;
}

Mat3 mat3_add(const Mat3& a, const Mat3& b) {
  Mat3 c{};
  for (int i = 0; i < 9; ++i) c[i] = a[i] + b[i];
  return c;
}

Mat3 mat3_mul4(const Mat3& a, const Mat3& b, const Mat3& c, const Mat3& d) {
  return mat3_mul(mat3_mul(mat3_mul(a, b), c), d);
}

Mat3 load_mat3(const std::vector<Cd>& v, std::size_t offset) {
  Mat3 m{};
  for (int i = 0; i < 9; ++i) m[i] = v[offset + i];
  return m;
}

// U_mu at coordinates x (taken modulo L: the gauge field is periodic).
Mat3 link(const Extents& L, const std::vector<Cd>& links, const Coords& x, int mu) {
  return load_mat3(links, (static_cast<std::size_t>(site_index(L, x)) * 4 + mu) * 9);
}

Coords shifted(Coords x, int mu, int step) {
  x[mu] += step;
  return x;
}

// colour vector y = U x
std::array<Cd, 3> mat3_vec(const Mat3& u, const std::array<Cd, 3>& x) {
  std::array<Cd, 3> y{};
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) y[i] += u[i * 3 + k] * x[k];
  return y;
}

// ---- Pauli matrices and 2x2 block construction ----
std::array<Mat2, 3> pauli() {
  return {Mat2{Cd(0), Cd(1), Cd(1), Cd(0)}, Mat2{Cd(0), -kI, kI, Cd(0)}, Mat2{Cd(1), Cd(0), Cd(0), Cd(-1)}};
}

// 4x4 from 2x2 blocks [[a, b], [c, d]].
Mat4 blocks(const Mat2& a, const Mat2& b, const Mat2& c, const Mat2& d) {
  Mat4 m{};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      m[i * 4 + j] = a[i * 2 + j];
      m[i * 4 + j + 2] = b[i * 2 + j];
      m[(i + 2) * 4 + j] = c[i * 2 + j];
      m[(i + 2) * 4 + j + 2] = d[i * 2 + j];
    }
  return m;
}

Mat2 scale2(Cd s, const Mat2& a) {
  Mat2 c{};
  for (int i = 0; i < 4; ++i) c[i] = s * a[i];
  return c;
}

Mat4 mat4_add(const Mat4& a, const Mat4& b, Cd sb) {
  Mat4 c{};
  for (int i = 0; i < 16; ++i) c[i] = a[i] + sb * b[i];
  return c;
}

// Spin-colour: out[spin][colour] += G[spin][spin'] * v[spin'][colour].
void add_spin_mul(const Mat4& g, const std::array<std::array<Cd, 3>, 4>& v, Cd scale,
                  std::array<std::array<Cd, 3>, 4>& out) {
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      const Cd gab = scale * g[a * 4 + b];
      if (gab == Cd(0)) continue;
      for (int c = 0; c < 3; ++c) out[a][c] += gab * v[b][c];
    }
}

using SpinColour = std::array<std::array<Cd, 3>, 4>;

SpinColour load_spinor(const std::vector<Cd>& psi, int s) {
  SpinColour v{};
  for (int a = 0; a < 4; ++a)
    for (int c = 0; c < 3; ++c) v[a][c] = psi[(static_cast<std::size_t>(s) * 4 + a) * 3 + c];
  return v;
}

SpinColour colour_mul(const Mat3& u, const SpinColour& v) {
  SpinColour w{};
  for (int a = 0; a < 4; ++a) w[a] = mat3_vec(u, v[a]);
  return w;
}

// Random SU(3) from a gaussian complex 3x3 matrix: Gram-Schmidt on the rows, then the third row
// multiplied by conj(det) so the determinant is exactly 1 (up to rounding).
Mat3 random_su3(std::mt19937_64& rng) {
  std::normal_distribution<double> gauss(0.0, 1.0);
  Mat3 m{};
  for (auto& z : m) z = Cd(gauss(rng), gauss(rng));
  for (int r = 0; r < 3; ++r) {
    for (int q = 0; q < r; ++q) {
      Cd proj = 0;
      for (int c = 0; c < 3; ++c) proj += std::conj(m[q * 3 + c]) * m[r * 3 + c];
      for (int c = 0; c < 3; ++c) m[r * 3 + c] -= proj * m[q * 3 + c];
    }
    double n = 0;
    for (int c = 0; c < 3; ++c) n += std::norm(m[r * 3 + c]);
    n = std::sqrt(n);
    for (int c = 0; c < 3; ++c) m[r * 3 + c] /= n;
  }
  const Cd det =
      m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
  for (int c = 0; c < 3; ++c) m[6 + c] *= std::conj(det) / std::abs(det);
  return m;
}

// Q_{mu nu}(x): the four leaves, literally as in docs/conventions.md section 4.
Mat3 clover_leaves(const Extents& L, const std::vector<Cd>& U, const Coords& x, int mu, int nu) {
  auto u = [&](int dir, const Coords& y) { return link(L, U, y, dir); };
  auto ud = [&](int dir, const Coords& y) { return mat3_adjoint(link(L, U, y, dir)); };
  const Coords xpm = shifted(x, mu, +1);
  const Coords xpn = shifted(x, nu, +1);
  const Coords xmm = shifted(x, mu, -1);
  const Coords xmn = shifted(x, nu, -1);
  const Coords xmmpn = shifted(xmm, nu, +1);
  const Coords xmmmn = shifted(xmm, nu, -1);
  const Coords xmnpm = shifted(xmn, mu, +1);
  // U_mu(x) U_nu(x+mu) U_mu(x+nu)^dag U_nu(x)^dag
  const Mat3 q1 = mat3_mul4(u(mu, x), u(nu, xpm), ud(mu, xpn), ud(nu, x));
  // U_nu(x) U_mu(x-mu+nu)^dag U_nu(x-mu)^dag U_mu(x-mu)
  const Mat3 q2 = mat3_mul4(u(nu, x), ud(mu, xmmpn), ud(nu, xmm), u(mu, xmm));
  // U_mu(x-mu)^dag U_nu(x-mu-nu)^dag U_mu(x-mu-nu) U_nu(x-nu)
  const Mat3 q3 = mat3_mul4(ud(mu, xmm), ud(nu, xmmmn), u(mu, xmmmn), u(nu, xmn));
  // U_nu(x-nu)^dag U_mu(x-nu) U_nu(x-nu+mu) U_mu(x)^dag
  const Mat3 q4 = mat3_mul4(ud(nu, xmn), u(mu, xmn), u(nu, xmnpm), ud(mu, x));
  return mat3_add(mat3_add(q1, q2), mat3_add(q3, q4));
}

}  // namespace

// ---------------------------------------------------------------- spin algebra
std::array<Mat4, 4> gamma() {
  const auto s = pauli();
  const Mat2 zero{};
  const Mat2 one{Cd(1), Cd(0), Cd(0), Cd(1)};
  std::array<Mat4, 4> g{};
  for (int k = 0; k < 3; ++k) g[k] = blocks(zero, scale2(-kI, s[k]), scale2(kI, s[k]), zero);  // [[0,-i s],[i s,0]]
  g[3] = blocks(zero, one, one, zero);                                                         // [[0,1],[1,0]]
  return g;
}

Mat4 gamma5() {
  const auto g = gamma();
  return mat4_mul(mat4_mul(mat4_mul(g[0], g[1]), g[2]), g[3]);
}

Mat4 sigma(int mu, int nu) {
  const auto g = gamma();
  const Mat4 commutator = mat4_add(mat4_mul(g[mu], g[nu]), mat4_mul(g[nu], g[mu]), Cd(-1));
  Mat4 s{};
  for (int i = 0; i < 16; ++i) s[i] = 0.5 * kI * commutator[i];
  return s;
}

Mat4 mat4_identity() {
  Mat4 m{};
  for (int i = 0; i < 4; ++i) m[i * 5] = 1;
  return m;
}

Mat4 mat4_mul(const Mat4& a, const Mat4& b) {
  Mat4 c{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) c[i * 4 + j] += a[i * 4 + k] * b[k * 4 + j];
  return c;
}

Mat4 mat4_adjoint(const Mat4& a) {
  Mat4 c{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) c[i * 4 + j] = std::conj(a[j * 4 + i]);
  return c;
}

Mat4 mat4_inverse(const Mat4& a) {
  // Gauss-Jordan on [a | 1] with partial pivoting.
  Mat4 m = a;
  Mat4 inv = mat4_identity();
  for (int col = 0; col < 4; ++col) {
    int pivot = col;
    for (int r = col + 1; r < 4; ++r)
      if (std::abs(m[r * 4 + col]) > std::abs(m[pivot * 4 + col])) pivot = r;
    if (std::abs(m[pivot * 4 + col]) == 0.0) throw std::domain_error("emprism::ref::mat4_inverse: singular matrix");
    if (pivot != col)
      for (int j = 0; j < 4; ++j) {
        std::swap(m[col * 4 + j], m[pivot * 4 + j]);
        std::swap(inv[col * 4 + j], inv[pivot * 4 + j]);
      }
    const Cd d = m[col * 4 + col];
    for (int j = 0; j < 4; ++j) {
      m[col * 4 + j] /= d;
      inv[col * 4 + j] /= d;
    }
    for (int r = 0; r < 4; ++r) {
      if (r == col) continue;
      const Cd f = m[r * 4 + col];
      for (int j = 0; j < 4; ++j) {
        m[r * 4 + j] -= f * m[col * 4 + j];
        inv[r * 4 + j] -= f * inv[col * 4 + j];
      }
    }
  }
  return inv;
}

// ---------------------------------------------------------------- geometry
int volume(const Extents& L) { return L[0] * L[1] * L[2] * L[3]; }

int site_index(const Extents& L, const Coords& x) {
  int s = 0;
  for (int mu = 3; mu >= 0; --mu) s = s * L[mu] + ((x[mu] % L[mu]) + L[mu]) % L[mu];
  return s;
}

Coords site_coords(const Extents& L, int s) {
  Coords x{};
  for (int mu = 0; mu < 4; ++mu) {
    x[mu] = s % L[mu];
    s /= L[mu];
  }
  return x;
}

// ---------------------------------------------------------------- fields
std::vector<Cd> unit_links(const Extents& L) {
  check_extents(L);
  std::vector<Cd> u(static_cast<std::size_t>(volume(L)) * 36, Cd(0));
  for (std::size_t m = 0; m < u.size() / 9; ++m)
    for (int i = 0; i < 3; ++i) u[m * 9 + i * 4] = 1;
  return u;
}

std::vector<Cd> random_su3_matrices(int count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<Cd> u(static_cast<std::size_t>(count) * 9);
  for (int m = 0; m < count; ++m) {
    const Mat3 w = random_su3(rng);
    for (int i = 0; i < 9; ++i) u[static_cast<std::size_t>(m) * 9 + i] = w[i];
  }
  return u;
}

std::vector<Cd> random_su3_links(const Extents& L, unsigned seed) {
  check_extents(L);
  return random_su3_matrices(volume(L) * 4, seed);
}

std::vector<Cd> random_gauge_transform(const Extents& L, unsigned seed) {
  check_extents(L);
  return random_su3_matrices(volume(L), seed);
}

std::vector<Cd> random_spinor(const Extents& L, unsigned seed) {
  check_extents(L);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::vector<Cd> psi(static_cast<std::size_t>(volume(L)) * 12);
  for (auto& z : psi) z = Cd(gauss(rng), gauss(rng));
  return psi;
}

Cd inner_product(const std::vector<Cd>& a, const std::vector<Cd>& b) {
  require(a.size() == b.size(), "inner_product: sizes differ");
  Cd sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += std::conj(a[i]) * b[i];
  return sum;
}

double norm2(const std::vector<Cd>& a) {
  double sum = 0;
  for (const Cd& z : a) sum += std::norm(z);
  return sum;
}

std::vector<Cd> apply_gamma5(const std::vector<Cd>& psi) {
  require(psi.size() % 12 == 0, "apply_gamma5: size not a multiple of 12");
  const Mat4 g5 = gamma5();
  std::vector<Cd> out(psi.size(), Cd(0));
  for (std::size_t s = 0; s < psi.size() / 12; ++s)
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        for (int c = 0; c < 3; ++c) out[(s * 4 + a) * 3 + c] += g5[a * 4 + b] * psi[(s * 4 + b) * 3 + c];
  return out;
}

// ---------------------------------------------------------------- gauge field
double plaquette(const Extents& L, const std::vector<Cd>& links) {
  check_extents(L);
  check_links(L, links);
  double sum = 0;
  const int V = volume(L);
  for (int s = 0; s < V; ++s) {
    const Coords x = site_coords(L, s);
    for (int mu = 0; mu < 4; ++mu)
      for (int nu = mu + 1; nu < 4; ++nu) {
        // P_{mu nu}(x) = U_mu(x) U_nu(x+mu) U_mu(x+nu)^dag U_nu(x)^dag
        const Mat3 p =
            mat3_mul4(link(L, links, x, mu), link(L, links, shifted(x, mu, 1), nu),
                      mat3_adjoint(link(L, links, shifted(x, nu, 1), mu)), mat3_adjoint(link(L, links, x, nu)));
        sum += (p[0] + p[4] + p[8]).real() / 3.0;
      }
  }
  return sum / (6.0 * V);
}

int plane_index(int mu, int nu) {
  require(0 <= mu && mu < nu && nu < 4, "plane_index needs 0 <= mu < nu < 4");
  static constexpr int kIndex[4][4] = {{-1, 0, 1, 2}, {-1, -1, 3, 4}, {-1, -1, -1, 5}, {-1, -1, -1, -1}};
  return kIndex[mu][nu];
}

std::vector<Cd> field_strength(const Extents& L, const std::vector<Cd>& links) {
  check_extents(L);
  check_links(L, links);
  const int V = volume(L);
  std::vector<Cd> f(static_cast<std::size_t>(V) * 54);
  for (int s = 0; s < V; ++s) {
    const Coords x = site_coords(L, s);
    for (int mu = 0; mu < 4; ++mu)
      for (int nu = mu + 1; nu < 4; ++nu) {
        const Mat3 q = clover_leaves(L, links, x, mu, nu);
        const Mat3 qd = mat3_adjoint(q);
        const std::size_t base = (static_cast<std::size_t>(s) * 6 + plane_index(mu, nu)) * 9;
        for (int i = 0; i < 9; ++i) f[base + i] = (q[i] - qd[i]) / 8.0;
      }
  }
  return f;
}

std::vector<Cd> gauge_transform_links(const Extents& L, const std::vector<Cd>& links, const std::vector<Cd>& W) {
  check_extents(L);
  check_links(L, links);
  const int V = volume(L);
  require(W.size() == static_cast<std::size_t>(V) * 9, "gauge transform W must have size V*9");
  std::vector<Cd> out(links.size());
  for (int s = 0; s < V; ++s) {
    const Coords x = site_coords(L, s);
    const Mat3 w = load_mat3(W, static_cast<std::size_t>(s) * 9);
    for (int mu = 0; mu < 4; ++mu) {
      const Mat3 wn = load_mat3(W, static_cast<std::size_t>(site_index(L, shifted(x, mu, 1))) * 9);
      const Mat3 u = mat3_mul(mat3_mul(w, link(L, links, x, mu)), mat3_adjoint(wn));
      for (int i = 0; i < 9; ++i) out[(static_cast<std::size_t>(s) * 4 + mu) * 9 + i] = u[i];
    }
  }
  return out;
}

std::vector<Cd> gauge_transform_spinor(const Extents& L, const std::vector<Cd>& psi, const std::vector<Cd>& W) {
  check_extents(L);
  check_spinor(L, psi);
  const int V = volume(L);
  require(W.size() == static_cast<std::size_t>(V) * 9, "gauge transform W must have size V*9");
  std::vector<Cd> out(psi.size());
  for (int s = 0; s < V; ++s) {
    const SpinColour v = colour_mul(load_mat3(W, static_cast<std::size_t>(s) * 9), load_spinor(psi, s));
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) out[(static_cast<std::size_t>(s) * 4 + a) * 3 + c] = v[a][c];
  }
  return out;
}

// ---------------------------------------------------------------- operator
std::vector<Cd> apply_hopping(const Extents& L, const std::vector<Cd>& links, const std::array<double, 4>& theta,
                              const std::vector<Cd>& psi) {
  check_extents(L);
  check_links(L, links);
  check_spinor(L, psi);
  const auto g = gamma();
  const int V = volume(L);
  std::vector<Cd> out(psi.size());
  for (int s = 0; s < V; ++s) {
    const Coords x = site_coords(L, s);
    SpinColour h{};
    for (int mu = 0; mu < 4; ++mu) {
      const Mat4 one_minus = mat4_add(mat4_identity(), g[mu], Cd(-1));
      const Mat4 one_plus = mat4_add(mat4_identity(), g[mu], Cd(1));
      // forward: (1 - gamma_mu) U_mu(x) psi(x+mu), phase exp(i theta) if x+mu crosses the boundary
      const Cd fphase = (x[mu] == L[mu] - 1) ? std::exp(kI * theta[mu]) : Cd(1);
      const SpinColour fwd = colour_mul(link(L, links, x, mu), load_spinor(psi, site_index(L, shifted(x, mu, 1))));
      add_spin_mul(one_minus, fwd, fphase, h);
      // backward: (1 + gamma_mu) U_mu(x-mu)^dag psi(x-mu), phase exp(-i theta) if x-mu crosses the boundary
      const Cd bphase = (x[mu] == 0) ? std::exp(-kI * theta[mu]) : Cd(1);
      const Coords xm = shifted(x, mu, -1);
      const SpinColour bwd = colour_mul(mat3_adjoint(link(L, links, xm, mu)), load_spinor(psi, site_index(L, xm)));
      add_spin_mul(one_plus, bwd, bphase, h);
    }
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) out[(static_cast<std::size_t>(s) * 4 + a) * 3 + c] = h[a][c];
  }
  return out;
}

std::vector<Cd> clover_matrices(const Extents& L, const std::vector<Cd>& links, double kappa, double csw) {
  check_extents(L);
  check_links(L, links);
  const int V = volume(L);
  const std::vector<Cd> f = field_strength(L, links);
  std::array<Mat4, 6> sig{};
  for (int mu = 0; mu < 4; ++mu)
    for (int nu = mu + 1; nu < 4; ++nu) sig[plane_index(mu, nu)] = sigma(mu, nu);
  std::vector<Cd> a(static_cast<std::size_t>(V) * 144, Cd(0));
  for (int s = 0; s < V; ++s) {
    Cd* as = &a[static_cast<std::size_t>(s) * 144];
    for (int i = 0; i < 12; ++i) as[i * 12 + i] = 1;
    // A = 1 + i csw kappa sum_{mu<nu} sigma_{mu nu} (x) F_{mu nu}
    for (int pl = 0; pl < 6; ++pl) {
      const Mat3 fm = load_mat3(f, (static_cast<std::size_t>(s) * 6 + pl) * 9);
      for (int sa = 0; sa < 4; ++sa)
        for (int sb = 0; sb < 4; ++sb)
          for (int ca = 0; ca < 3; ++ca)
            for (int cb = 0; cb < 3; ++cb)
              as[(sa * 3 + ca) * 12 + sb * 3 + cb] += kI * csw * kappa * sig[pl][sa * 4 + sb] * fm[ca * 3 + cb];
    }
  }
  return a;
}

std::vector<Cd> apply_clover_term(const Extents& L, const std::vector<Cd>& links, double kappa, double csw,
                                  const std::vector<Cd>& psi) {
  check_spinor(L, psi);
  const std::vector<Cd> a = clover_matrices(L, links, kappa, csw);
  std::vector<Cd> out(psi.size(), Cd(0));
  for (std::size_t s = 0; s < psi.size() / 12; ++s)
    for (int i = 0; i < 12; ++i)
      for (int j = 0; j < 12; ++j) out[s * 12 + i] += a[s * 144 + i * 12 + j] * psi[s * 12 + j];
  return out;
}

std::vector<Cd> apply_wilson_clover(const Extents& L, const std::vector<Cd>& links, double kappa, double csw,
                                    const std::array<double, 4>& theta, const std::vector<Cd>& psi) {
  std::vector<Cd> out = apply_clover_term(L, links, kappa, csw, psi);
  const std::vector<Cd> h = apply_hopping(L, links, theta, psi);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] -= kappa * h[i];
  return out;
}

std::vector<Cd> dense_wilson_clover(const Extents& L, const std::vector<Cd>& links, double kappa, double csw,
                                    const std::array<double, 4>& theta) {
  check_extents(L);
  const std::size_t n = static_cast<std::size_t>(volume(L)) * 12;
  std::vector<Cd> m(n * n);
  std::vector<Cd> e(n, Cd(0));
  for (std::size_t j = 0; j < n; ++j) {
    e[j] = 1;
    const std::vector<Cd> col = apply_wilson_clover(L, links, kappa, csw, theta, e);
    e[j] = 0;
    for (std::size_t i = 0; i < n; ++i) m[i * n + j] = col[i];
  }
  return m;
}

// ---------------------------------------------------------------- free field
Mat4 free_dirac_momentum(const std::array<double, 4>& p, double kappa) {
  const auto g = gamma();
  double sum_cos = 0;
  for (int mu = 0; mu < 4; ++mu) sum_cos += std::cos(p[mu]);
  Mat4 m{};
  for (int i = 0; i < 4; ++i) m[i * 5] = 1.0 - 2.0 * kappa * sum_cos;
  for (int mu = 0; mu < 4; ++mu) m = mat4_add(m, g[mu], 2.0 * kI * kappa * std::sin(p[mu]));
  return m;
}

namespace {

// Spin matrix of the free propagator S(x; x0) for every site x (colour identity implied):
// S(x) = (1/V) sum_p exp(i p.(x - x0)) M(p)^{-1}.
std::vector<Mat4> free_spin_propagator(const Extents& L, double kappa, const std::array<double, 4>& theta,
                                       const Coords& x0) {
  check_extents(L);
  const int V = volume(L);
  // x and x0 both lie in [0, L): the plane wave exp(i p.x) on that range carries the boundary phases
  // exp(+-i theta_mu) of the hops, so the plain difference x - x0 (not reduced modulo L) is the right one.
  std::vector<Mat4> minv(V);
  for (int k = 0; k < V; ++k) {
    const Coords n = site_coords(L, k);
    std::array<double, 4> p{};
    for (int mu = 0; mu < 4; ++mu) p[mu] = (2.0 * kPi * n[mu] + theta[mu]) / L[mu];
    minv[k] = mat4_inverse(free_dirac_momentum(p, kappa));
  }
  std::vector<Mat4> S(V);
  for (int s = 0; s < V; ++s) {
    const Coords x = site_coords(L, s);
    Mat4 acc{};
    for (int k = 0; k < V; ++k) {
      const Coords n = site_coords(L, k);
      double phase = 0;
      for (int mu = 0; mu < 4; ++mu) phase += (2.0 * kPi * n[mu] + theta[mu]) / L[mu] * (x[mu] - x0[mu]);
      acc = mat4_add(acc, minv[k], std::exp(kI * phase));
    }
    for (auto& z : acc) z /= static_cast<double>(V);
    S[s] = acc;
  }
  return S;
}

}  // namespace

std::vector<Cd> free_point_propagator(const Extents& L, double kappa, const std::array<double, 4>& theta,
                                      const Coords& x0, int spin, int colour) {
  require(0 <= spin && spin < 4 && 0 <= colour && colour < 3, "free_point_propagator: spin or colour out of range");
  for (int mu = 0; mu < 4; ++mu) require(0 <= x0[mu] && x0[mu] < L[mu], "free_point_propagator: x0 outside lattice");
  const std::vector<Mat4> S = free_spin_propagator(L, kappa, theta, x0);
  std::vector<Cd> psi(static_cast<std::size_t>(volume(L)) * 12, Cd(0));
  for (std::size_t s = 0; s < S.size(); ++s)
    for (int a = 0; a < 4; ++a) psi[(s * 4 + a) * 3 + colour] = S[s][a * 4 + spin];
  return psi;
}

std::vector<double> free_pion_correlator(const Extents& L, double kappa, const std::array<double, 4>& theta,
                                         const Coords& x0) {
  for (int mu = 0; mu < 4; ++mu) require(0 <= x0[mu] && x0[mu] < L[mu], "free_pion_correlator: x0 outside lattice");
  const std::vector<Mat4> S = free_spin_propagator(L, kappa, theta, x0);
  std::vector<double> c(L[3], 0.0);
  for (std::size_t s = 0; s < S.size(); ++s) {
    const int t = site_coords(L, static_cast<int>(s))[3];
    const int dt = ((t - x0[3]) % L[3] + L[3]) % L[3];
    double sum = 0;
    for (const Cd& z : S[s]) sum += std::norm(z);
    c[dt] += 3.0 * sum;  // colour diagonal: sum over source and sink colour gives 3 x the spin sum
  }
  return c;
}

}  // namespace emprism::ref
