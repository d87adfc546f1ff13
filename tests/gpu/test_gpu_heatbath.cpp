// test_gpu_heatbath.cpp: GPU tests (ctest label "gpu") of the device heatbath (src/physics/heatbath_device.hpp)
// against the host path (src/physics/heatbath.hpp, the CPU reference): compound sweeps (heatbath, 4 overrelaxation
// passes, reunitarisation) from a hot and a cold start, and an overrelaxation pass, on one rank. The same per-link
// code runs on both; the GPU contracts multiply-adds and has its own log, exp, sin and cos (within 2 ulps of glibc's),
// so the links agree to rounding: ~1e5 operations feed each link per sweep, each with a relative error ~1e-16, and
// the map is not chaotic over one sweep, so 1e-12 absolute on the O(1) link entries (4500 ulps) and on the
// plaquette. Skipped with a message without a GPU. Run by ctest -L gpu.
#include <gtest/gtest.h>

#include <cmath>

#include "comm/communicator.hpp"
#include "gpu_support.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/heatbath.hpp"
#include "src/physics/heatbath_device.hpp"

namespace emprism::test {
namespace {

const Extents kLat{8, 6, 4, 10};
constexpr double kTol = 1e-12;

// max over every link of the box (halo included) and entry of |a - b|.
double max_diff(const HostGauge& a, const HostGauge& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.storage().size(); ++i)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        d = std::fmax(d, std::fabs(a.storage()[i].e[r][c].re - b.storage()[i].e[r][c].re));
        d = std::fmax(d, std::fabs(a.storage()[i].e[r][c].im - b.storage()[i].e[r][c].im));
      }
  return d;
}

void check_sweeps(HostGauge host, int sweeps) {
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
  EXPECT_LE(max_diff(got, host), kTol);
}

TEST(GpuHeatbath, CompoundSweepFromHotStartMatchesCpu) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  check_sweeps(make_random_gauge(Geometry::single_rank(kLat), 17, 1.0), 1);
}

TEST(GpuHeatbath, CompoundSweepFromColdStartMatchesCpu) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  check_sweeps(make_unit_gauge(Geometry::single_rank(kLat)), 1);
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
  EXPECT_LE(max_diff(got, host), kTol);
}

}  // namespace
}  // namespace emprism::test
