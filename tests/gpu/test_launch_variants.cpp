// test_launch_variants.cpp: GPU test (label gpu) of the launch-bounds variants of the generic kernel
// (kernels/backend/gpu.hpp): a functor launched with an occupancy bound computes bitwise what the unbounded launch
// computes, and the runtime reports at least the bound's occupancy for it. This file launches kernels itself, so nvcc
// builds compile it as device code (tests/CMakeLists.txt). Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_support.hpp"
#include "kernels/backend/runtime.hpp"
#include "kernels/blas.hpp"
#include "kernels/launch.hpp"
#include "src/lattice/fields.hpp"

namespace emprism::test {
namespace {

std::vector<Spinor<double>> random_sites(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Spinor<double>> v(static_cast<std::size_t>(n));
  for (auto& s : v)
    for (auto& c : s.s)
      for (auto& z : c.c) z = {u(gen), u(gen)};
  return v;
}

// y = a x + b y on the device with the given launch variant; returns y and the kernel's resources.
template <int MinOccupancy>
std::vector<Spinor<double>> axpby(const Geometry& g, const std::vector<Spinor<double>>& x0,
                                  const std::vector<Spinor<double>>& y0, KernelResources& res) {
  ParitySpinor<double> x(g), y(g);
  x.upload(x0);
  y.upload(y0);
  run_kernel<MinOccupancy>(x.sites(), AxpbyFunctor<double>{x.view(), y.view(), 0.7, -1.3});
  backend::synchronize();
  res = backend::resources<AxpbyFunctor<double>, MinOccupancy>();
  return y.download();
}

TEST(Gpu, LaunchVariantComputesWhatTheUnboundedLaunchComputes) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  const Extents lat{8, 6, 4, 10};
  const Geometry g(lat, lat, {0, 0, 0, 0}, {});
  const auto x0 = random_sites(g.half_volume(), 401), y0 = random_sites(g.half_volume(), 402);
  KernelResources plain, bounded;
  const auto a = axpby<0>(g, x0, y0, plain);
  const auto b = axpby<4>(g, x0, y0, bounded);  // 4 waves per SIMD (AMD) or 4 blocks per SM (NVIDIA)
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(Spinor<double>)), 0);
  // And it is the axpby (up to the rounding of a fused multiply-add).
  const Complex<double> got = a[5].s[2].c[1], x = x0[5].s[2].c[1], y = y0[5].s[2].c[1];
  EXPECT_NEAR(got.re, 0.7 * x.re - 1.3 * y.re, 1e-15);
  EXPECT_NEAR(got.im, 0.7 * x.im - 1.3 * y.im, 1e-15);
  EXPECT_GT(plain.registers, 0);
  EXPECT_GT(bounded.registers, 0);
  // The bound's guarantee: 4 blocks of 256 per SM (NVIDIA: 1024 of 2048 threads) or 4 waves per SIMD (gfx90a: of 8),
  // half the device's occupancy. (Not fewer registers than the unbounded launch: ptxas may use up to the cap, 64
  // against 58 unbounded for this functor on sm_90 with the tiled field layout, 2026-11-29.)
  EXPECT_GE(bounded.occupancy, 0.5);
}

}  // namespace
}  // namespace emprism::test
