// test_views.cpp: the partial loads and stores of the field views (chiral halves of a spinor, 6x6 blocks of a
// clover site) read and write exactly the components of the whole-element load and store, in both precisions;
// the block product of the clover term equals the dense hermitian product; Geometry refuses local volumes whose
// field rows would not fit 32-bit byte offsets.
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/errors.hpp"
#include "kernels/views.hpp"
#include "src/lattice/geometry.hpp"

namespace emprism::test {
namespace {

constexpr int kSites = 37;  // odd, so element k and row k start at unaligned site counts

template <typename R>
void fill_random(R* p, std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<R>(u(gen));
}

// Random host memory for kSites elements of T (real type R) in the blocked layout.
template <typename T, typename R>
std::vector<BlockOf<T>> random_blocks(unsigned seed) {
  std::vector<BlockOf<T>> mem(static_cast<std::size_t>(BlockedArray<T>::kBlocks) * kSites);
  fill_random(reinterpret_cast<R*>(mem.data()), mem.size() * sizeof(BlockOf<T>) / sizeof(R), seed);
  return mem;
}

template <typename T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename R>
void check_spinor_halves() {
  auto mem = random_blocks<Spinor<R>, R>(11);
  const SpinorView<R> v{{mem.data(), kSites}};
  for (int cb = 0; cb < kSites; ++cb)
    for (int b = 0; b < 2; ++b) EXPECT_TRUE(same_bits(v.load_half(cb, b), chiral_half(v.load(cb), b)));
  // store_half replaces exactly its half of its site.
  const Spinor<R> before = v.load(5), left = v.load(4), right = v.load(6);
  HalfSpinor<R> x;
  fill_random(&x.h[0].c[0].re, 12, 12);
  v.store_half(5, 1, x);
  const Spinor<R> after = v.load(5);
  EXPECT_TRUE(same_bits(chiral_half(after, 0), chiral_half(before, 0)));
  EXPECT_TRUE(same_bits(chiral_half(after, 1), x));
  EXPECT_TRUE(same_bits(v.load(4), left));
  EXPECT_TRUE(same_bits(v.load(6), right));
}

TEST(Views, SpinorHalvesAreTheChiralHalvesOfTheWholeLoadSingle) { check_spinor_halves<float>(); }
TEST(Views, SpinorHalvesAreTheChiralHalvesOfTheWholeLoadDouble) { check_spinor_halves<double>(); }

template <typename R>
void check_clover_blocks() {
  auto mem = random_blocks<CloverSite<R>, R>(13);
  const CloverView<R> v{{mem.data(), kSites}};
  for (int cb = 0; cb < kSites; ++cb)
    for (int b = 0; b < 2; ++b) EXPECT_TRUE(same_bits(v.load_block(cb, b), v.load(cb).b[b]));
}

TEST(Views, CloverBlocksAreTheBlocksOfTheWholeLoadSingle) { check_clover_blocks<float>(); }
TEST(Views, CloverBlocksAreTheBlocksOfTheWholeLoadDouble) { check_clover_blocks<double>(); }

// block_mul with the packing of clover_block.hpp equals the dense product with the hermitian matrix it packs.
TEST(Views, BlockProductEqualsDenseHermitianProduct) {
  CloverBlock<double> m;
  fill_random(m.diag, 6, 14);
  fill_random(&m.lower[0].re, 30, 15);
  std::complex<double> dense[6][6];
  for (int i = 0; i < 6; ++i) {
    dense[i][i] = m.diag[i];
    for (int j = 0; j < i; ++j) {
      const Complex<double> l = m.lower[tri_index(i, j)];
      dense[i][j] = {l.re, l.im};
      dense[j][i] = {l.re, -l.im};
    }
  }
  HalfSpinor<double> x;
  fill_random(&x.h[0].c[0].re, 12, 16);
  const HalfSpinor<double> y = block_mul(m, x);
  for (int i = 0; i < 6; ++i) {
    std::complex<double> want = 0;
    for (int j = 0; j < 6; ++j)
      want += dense[i][j] * std::complex<double>(x.h[j / 3].c[j % 3].re, x.h[j / 3].c[j % 3].im);
    const Complex<double> got = y.h[i / 3].c[i % 3];
    EXPECT_NEAR(got.re, want.real(), 1e-14);
    EXPECT_NEAR(got.im, want.imag(), 1e-14);
  }
}

TEST(Views, GeometryRefusesRowsBeyond32BitOffsets) {
  const Extents largest{128, 128, 128, 256};  // 2^29 sites: 2^28 per parity, the most a row holds
  EXPECT_NO_THROW(Geometry(largest, largest, {0, 0, 0, 0}, {}));
  const Extents too_large{128, 128, 128, 258};
  EXPECT_THROW(Geometry(too_large, too_large, {0, 0, 0, 0}, {}), InputError);
}

}  // namespace
}  // namespace emprism::test
