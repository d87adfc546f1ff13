// test_clover_dynamic.cpp: the fp32 operator's compressed clover term (kernels/clover_dynamic.hpp) against the host
// clover term of make_clover in double (src/physics/clover.hpp, built and inverted without the compressed form):
// the structure the compression relies on, the round trip, the in-register solve against the stored inverse, and the
// field the set-up kernel writes, read back as A and as A^-1.
// Tolerances: every entry of the compressed form is one fp32 rounding of a sum or difference of two double entries
// (c: of six), so the expanded block is within 2 ulps of fp32 of the block's largest entry; the LDL^dag solve of these
// well-conditioned blocks (condition number below 3 at kappa 0.13, csw 1.7 on a random field) loses a few more.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <complex>
#include <random>

#include "kernels/clover_dynamic.hpp"
#include "operator_fixture.hpp"
#include "src/physics/clover_device.hpp"

namespace emprism::test {
namespace {

const Extents kLat{4, 4, 4, 8};
const double kKappa = 0.13, kCsw = 1.7;

HostClover random_clover(double width) {
  const Geometry geom(kLat, kLat, {0, 0, 0, 0}, {});
  HostGauge u = make_random_gauge(geom, 29, width);
  u.fill_halo();
  return make_clover(u, kKappa, kCsw);
}

double max_entry(const CloverBlock<double>& a) {
  double m = 0;
  for (int i = 0; i < 6; ++i) m = std::fmax(m, std::fabs(a.diag[i]));
  for (int k = 0; k < 15; ++k) m = std::fmax(m, std::hypot(a.lower[k].re, a.lower[k].im));
  return m;
}

// max |a - b| over the entries of a block, relative to the largest entry of b.
double block_diff(const CloverBlock<float>& a, const CloverBlock<double>& b) {
  double d = 0;
  for (int i = 0; i < 6; ++i) d = std::fmax(d, std::fabs(a.diag[i] - b.diag[i]));
  for (int k = 0; k < 15; ++k)
    d = std::fmax(d, std::hypot(a.lower[k].re - b.lower[k].re, a.lower[k].im - b.lower[k].im));
  return d / max_entry(b);
}

// A_b(i, j) of a packed block.
std::complex<double> entry(const CloverBlock<double>& a, int i, int j) {
  if (i == j) return a.diag[i];
  if (i > j) return {a.lower[tri_index(i, j)].re, a.lower[tri_index(i, j)].im};
  return std::conj(entry(a, j, i));
}

// y = M x in double for a packed block.
std::array<std::complex<double>, 6> mat_vec(const CloverBlock<double>& m,
                                            const std::array<std::complex<double>, 6>& x) {
  std::array<std::complex<double>, 6> y{};
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) y[i] += entry(m, i, j) * x[j];
  return y;
}

TEST(CloverDynamic, CloverBlocksHaveTheCompressedStructure) {
  // In the chiral basis the spin part of sigma_{mu nu} F_{mu nu} is traceless in each block: the lower right 3x3 is
  // 2c - the upper left (c: the mean of the diagonal), to double rounding.
  const HostClover h = random_clover(1.0);
  double worst = 0;
  for (int p = 0; p < 2; ++p)
    for (const CloverSite<double>& s : h.a[p])
      for (const CloverBlock<double>& a : s.b) {
        double c = 0;
        for (int i = 0; i < 6; ++i) c += a.diag[i] / 6;
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            worst = std::fmax(worst, std::abs(entry(a, i, j) + entry(a, i + 3, j + 3) - (i == j ? 2 * c : 0.0)));
      }
  EXPECT_LE(worst, 64 * DBL_EPSILON);
}

TEST(CloverDynamic, CompressedBlockExpandsToTheCloverBlock) {
  const HostClover h = random_clover(1.0);
  double worst = 0;
  for (int p = 0; p < 2; ++p)
    for (const CloverSite<double>& s : h.a[p])
      for (const CloverBlock<double>& a : s.b) worst = std::fmax(worst, block_diff(expand_block(compress_block(a)), a));
  EXPECT_LE(worst, 2 * FLT_EPSILON);
  EXPECT_GT(worst, 0.0);  // (the form is fp32: not the double block)
}

TEST(CloverDynamic, BlockWithoutTheStructureDoesNotSurvive) {
  // What the round trip above would see if the structure did not hold: a hermitian block whose lower right 3x3 is not
  // 2c - the upper left loses it (the compression keeps only the structured part).
  CloverBlock<double> a = random_clover(1.0).a[0][0].b[0];
  a.diag[4] += 0.05;
  EXPECT_GT(block_diff(expand_block(compress_block(a)), a), 1e-3);
}

TEST(CloverDynamic, SolveMatchesTheDoubleInverse) {
  const HostClover h = random_clover(1.0);
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g;
  double worst = 0;
  for (int p = 0; p < 2; ++p)
    for (std::size_t cb = 0; cb < h.a[p].size(); ++cb)
      for (int b = 0; b < 2; ++b) {
        std::array<std::complex<double>, 6> y;
        HalfSpinor<float> yf;
        for (int i = 0; i < 6; ++i) {
          y[i] = {g(rng), g(rng)};
          yf.h[i / 3].c[i % 3] = {float(y[i].real()), float(y[i].imag())};
          y[i] = {double(yf.h[i / 3].c[i % 3].re), double(yf.h[i / 3].c[i % 3].im)};  // the fp32 input exactly
        }
        const std::array<std::complex<double>, 6> x = mat_vec(h.a_inv[p][cb].b[b], y);
        const HalfSpinor<float> xf = block_mul(CloverBlockDyn{compress_block(h.a[p][cb].b[b]), true}, yf);
        double err = 0, norm = 0;
        for (int i = 0; i < 6; ++i) {
          const Complex<float> v = xf.h[i / 3].c[i % 3];
          err += std::norm(std::complex<double>(v.re, v.im) - x[i]);
          norm += std::norm(x[i]);
        }
        worst = std::fmax(worst, std::sqrt(err / norm));
      }
  EXPECT_LE(worst, 16 * FLT_EPSILON);
}

// The set-up path: A in fp32 from the set-up kernels, compressed by compress_clover, read back through the view as
// A (the expanded block) and as A^-1 (solved column by column).
TEST(CloverDynamic, FieldReadsAsAAndAsItsInverse) {
  DeviceFieldsSetup<float> s(kLat, 29, 1.0, kKappa, kCsw);
  const HostClover& ref = s.host;
  for (int p = 0; p < 2; ++p) {
    CloverField<CloverDynamic> dyn(s.geom);
    compress_clover(s.ctx, s.a[p], dyn);
    const std::vector<CloverSite<float>> fa = dyn.download(false), fi = dyn.download(true);
    double worst_a = 0, worst_inv = 0;
    for (std::size_t cb = 0; cb < fa.size(); ++cb)
      for (int b = 0; b < 2; ++b) {
        worst_a = std::fmax(worst_a, block_diff(fa[cb].b[b], ref.a[p][cb].b[b]));
        worst_inv = std::fmax(worst_inv, block_diff(fi[cb].b[b], ref.a_inv[p][cb].b[b]));
      }
    EXPECT_LE(worst_a, 4 * FLT_EPSILON) << "A, parity " << p;
    EXPECT_LE(worst_inv, 16 * FLT_EPSILON) << "A^-1, parity " << p;
  }
}

}  // namespace
}  // namespace emprism::test
