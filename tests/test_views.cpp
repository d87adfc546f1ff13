// test_views.cpp: the partial loads and stores of the field views (chiral halves of a spinor, 6x6 blocks of a
// clover site) read and write exactly the components of the whole-element load and store, in both precisions;
// the block product of the clover term equals the dense hermitian product in both precisions; the tiled layout gives
// every (site, block) its own place inside the padded array, and zero_padding zeroes exactly the rest; Geometry refuses
// local volumes whose sites would not fit its 32-bit site indices.
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/errors.hpp"
#include "kernels/views.hpp"
#include "src/lattice/geometry.hpp"

namespace emprism::test {
namespace {

constexpr int kSites = 37;  // odd, and not a whole number of tiles

template <typename R>
void fill_random(R* p, std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<R>(u(gen));
}

// Random host memory for kSites elements of T (real type R) in the blocked layout.
template <typename T, typename R>
std::vector<BlockOf<T>> random_blocks(unsigned seed) {
  std::vector<BlockOf<T>> mem(static_cast<std::size_t>(BlockedArray<T>::blocks_of(kSites)));
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
  const SpinorView<R> v{BlockedArray<Spinor<R>>::of(mem.data(), kSites)};
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
  const CloverView<R> v{BlockedArray<CloverSite<R>>::of(mem.data(), kSites)};
  for (int cb = 0; cb < kSites; ++cb)
    for (int b = 0; b < 2; ++b) EXPECT_TRUE(same_bits(v.load_block(cb, b), v.load(cb).b[b]));
}

TEST(Views, CloverBlocksAreTheBlocksOfTheWholeLoadSingle) { check_clover_blocks<float>(); }
TEST(Views, CloverBlocksAreTheBlocksOfTheWholeLoadDouble) { check_clover_blocks<double>(); }

// block_mul with the packing of clover_block.hpp equals the dense product with the hermitian matrix it packs (in
// double, from the same R inputs) within 40 epsilon of R: each entry sums 6 terms below 1 in size with at most 11
// roundings on its way (fp64: 8.9e-15, as tight as the former 1e-14). The fp32 product is summed as multiply-add
// chains where kChainedBlock<float> (this backend), the fp64 one as plain sums.
template <typename R>
void check_block_product() {
  CloverBlock<R> m;
  fill_random(m.diag, 6, 14);
  fill_random(&m.lower[0].re, 30, 15);
  std::complex<double> dense[6][6];
  for (int i = 0; i < 6; ++i) {
    dense[i][i] = m.diag[i];
    for (int j = 0; j < i; ++j) {
      const Complex<R> l = m.lower[tri_index(i, j)];
      dense[i][j] = {l.re, l.im};
      dense[j][i] = {l.re, -l.im};
    }
  }
  HalfSpinor<R> x;
  fill_random(&x.h[0].c[0].re, 12, 16);
  const HalfSpinor<R> y = block_mul(m, x);
  const double tol = 40 * std::numeric_limits<R>::epsilon();
  for (int i = 0; i < 6; ++i) {
    std::complex<double> want = 0;
    for (int j = 0; j < 6; ++j)
      want += dense[i][j] * std::complex<double>(x.h[j / 3].c[j % 3].re, x.h[j / 3].c[j % 3].im);
    const Complex<R> got = y.h[i / 3].c[i % 3];
    EXPECT_NEAR(got.re, want.real(), tol);
    EXPECT_NEAR(got.im, want.imag(), tol);
  }
}

TEST(Views, BlockProductEqualsDenseHermitianProductDouble) { check_block_product<double>(); }
TEST(Views, BlockProductEqualsDenseHermitianProductSingle) { check_block_product<float>(); }

// Block k of site i, as an index into the array's blocks.
template <typename T>
std::int64_t block_index(const BlockedArray<T>& a, int k, int i) {
  return &a.at(k, i) - a.data;
}

// Every (site, block) of n sites has its own block inside blocks_of(n), and consecutive sites of a tile read
// consecutive blocks (a warp's loads coalesce), for elements of 16- and 8-byte blocks and several n.
template <typename T>
void check_tiled_layout() {
  for (const int n : {1, kSites, kTileSites, kTileSites + 1, 3 * kTileSites - 1}) {
    std::vector<BlockOf<T>> mem(static_cast<std::size_t>(BlockedArray<T>::blocks_of(n)));
    const BlockedArray<T> a = BlockedArray<T>::of(mem.data(), n);
    std::vector<int> uses(mem.size(), 0);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < BlockedArray<T>::kBlocks; ++k) {
        const std::int64_t b = block_index(a, k, i);
        ASSERT_GE(b, 0);
        ASSERT_LT(b, static_cast<std::int64_t>(mem.size()));
        ++uses[b];
        if ((i + 1) % kTileSites != 0 && i + 1 < n) EXPECT_EQ(block_index(a, k, i + 1), b + 1);
      }
    for (const int u : uses) EXPECT_LE(u, 1);
  }
}

TEST(Views, TiledLayoutGivesEverySiteAndBlockItsOwnPlace) {
  check_tiled_layout<Spinor<float>>();  // 16-byte blocks
  check_tiled_layout<ChiralHalf16>();   // 8-byte blocks
  check_tiled_layout<LinkElement<float, 12>>();
  check_tiled_layout<CloverSite<double>>();
}

// The kernels' 32-bit count of an int's tiled sites (tiled_sites_of) equals the 64-bit one for every count a rank can
// hold (up to kMaxParitySites: small ones all, then in steps of a prime, and the largest).
TEST(Views, TiledSitesOfAnIntEqualsTheInt64Form) {
  long wrong = 0;
  for (int n = 0; n <= 4096; ++n) wrong += tiled_sites_of(n) != tiled_sites(std::int64_t{n});
  for (int n = 4096; n <= kMaxParitySites; n += 997) wrong += tiled_sites_of(n) != tiled_sites(std::int64_t{n});
  const int most = static_cast<int>(kMaxParitySites);
  wrong += tiled_sites_of(most) != tiled_sites(kMaxParitySites);
  EXPECT_EQ(wrong, 0);
}

// zero_padding zeroes exactly the blocks that no site of the array addresses (the staging copies' padding never
// carries uninitialised memory to the device), in arrays that follow one another as the fields' sub-arrays do.
TEST(Views, ZeroPaddingZeroesExactlyTheBlocksNoSiteUses) {
  using T = Spinor<float>;
  constexpr int kArrays = 3;
  const std::int64_t per_array = BlockedArray<T>::blocks_of(kSites);
  std::vector<BlockOf<T>> mem(static_cast<std::size_t>(kArrays * per_array));
  std::memset(mem.data(), 0xff, mem.size() * sizeof(BlockOf<T>));
  std::vector<bool> used(mem.size(), false);
  for (int a = 0; a < kArrays; ++a) {
    const auto arr = BlockedArray<T>::of(mem.data() + a * per_array, kSites);
    arr.zero_padding(kSites);
    for (int i = 0; i < kSites; ++i)
      for (int k = 0; k < BlockedArray<T>::kBlocks; ++k) used[a * per_array + block_index(arr, k, i)] = true;
  }
  BlockOf<T> zero{}, ones;
  std::memset(&ones, 0xff, sizeof(ones));
  for (std::size_t b = 0; b < mem.size(); ++b) EXPECT_TRUE(same_bits(mem[b], used[b] ? ones : zero)) << "block " << b;
}

TEST(Views, GeometryRefusesMoreThan2To26SitesPerParity) {
  const Extents largest{128, 128, 64, 128};  // 2^27 sites: 2^26 per parity, the most the 32-bit block indices allow
  EXPECT_NO_THROW(Geometry(largest, largest, {0, 0, 0, 0}, {}));
  const Extents too_large{128, 128, 64, 130};
  EXPECT_THROW(Geometry(too_large, too_large, {0, 0, 0, 0}, {}), InputError);
}

}  // namespace
}  // namespace emprism::test
