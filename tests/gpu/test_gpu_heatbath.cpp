// test_gpu_heatbath.cpp: GPU tests (ctest label "gpu") of the device heatbath (src/physics/heatbath_device.hpp)
// against the host path (src/physics/heatbath.hpp, the CPU reference): compound sweeps (heatbath, 4 overrelaxation
// passes, reunitarisation) from a hot and a cold start, and an overrelaxation pass, on one rank. The same per-link
// code runs on both; the GPU contracts multiply-adds and has its own log, exp, sin and cos (within 2 ulps of glibc's),
// so the links agree to rounding, amplified by the conditioning of the update: each SU(2) step divides by the norm
// |a| of the subgroup's staple projection. From the cold start (staples near 6, |a| = O(1)) that is ~1e5 operations
// of relative error ~1e-16 per link: 1e-12 absolute on the O(1) link entries. From a hot start (Haar-random links)
// the staples nearly cancel at some links, so |a| is small and the rounding is multiplied by its inverse: the bound
// is set from measurement with margin, 1e-7 (max 5.8e-9 on an H100, 2026-11-24); an overrelaxation pass of a random
// field (width 0.5): 1e-10 (max 2.2e-12 there). A wrong update or a wrong halo link moves a link by far more than
// either. The plaquettes agree to 1e-12 in every case.
// Skipped with a message without a GPU. Run by ctest -L gpu.
#include <gtest/gtest.h>

#include <cmath>

#include "comm/communicator.hpp"
#include "gpu_support.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/heatbath.hpp"
#include "src/physics/heatbath_device.hpp"
#include "tests/support/gauge_compare.hpp"

namespace emprism::test {
namespace {

const Extents kLat{8, 6, 4, 10};
constexpr double kTol = 1e-12;    // cold start, and every plaquette
constexpr double kHotTol = 1e-7;  // links after a sweep from a hot start
constexpr double kOrTol = 1e-10;  // links after an overrelaxation pass of a random field

void check_sweeps(HostGauge host, int sweeps, double link_tol) {
  const Geometry& geom = host.geometry();
  Communicator comm;
  MetricsRegistry metrics;
  HeatbathParams p;
  p.beta = 6.0;
  p.or_per_sweep = 4;
  p.seed = 2026;
  HostGauge got(geom);
  DeviceHeatbath dev(metrics, host, nullptr);
  for (int s = 0; s < sweeps; ++s) {
    heatbath_sweep(host, p, static_cast<std::uint64_t>(s), nullptr);
    dev.sweep(p, static_cast<std::uint64_t>(s));
    EXPECT_NEAR(dev.plaquette(comm), plaquette(host, &comm), kTol) << "sweep " << s;
  }
  dev.download(got);
  EXPECT_LE(test::max_link_diff(got, host), link_tol);
}

TEST(GpuHeatbath, CompoundSweepFromHotStartMatchesCpu) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  check_sweeps(make_random_gauge(Geometry::single_rank(kLat), 17, 1.0), 1, kHotTol);
}

TEST(GpuHeatbath, CompoundSweepFromColdStartMatchesCpu) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  check_sweeps(make_unit_gauge(Geometry::single_rank(kLat)), 1, kTol);
}

TEST(GpuHeatbath, OverrelaxationMatchesCpu) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  const Geometry geom = Geometry::single_rank(kLat);
  MetricsRegistry metrics;
  HostGauge host = make_random_gauge(geom, 18, 0.5), got(geom);
  DeviceHeatbath dev(metrics, host, nullptr);
  overrelax_sweep(host, nullptr);
  dev.overrelax();
  dev.download(got);
  EXPECT_LE(test::max_link_diff(got, host), kOrTol);
}

}  // namespace
}  // namespace emprism::test
