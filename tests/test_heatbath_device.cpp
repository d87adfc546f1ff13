// test_heatbath_device.cpp: the device heatbath (src/physics/heatbath_device.hpp) on one rank against the host's
// (src/physics/heatbath.hpp): on the CPU backend the device path runs the same per-site code in the same order on its
// own layout (periodic wrap instead of halo copies), so a compound sweep, an overrelaxation pass and the plaquette
// have the host's bits (every link of the box, halo included: the download fills the host field's halo with the
// periodic images); on a GPU the comparison to rounding is tests/gpu/test_gpu_heatbath.cpp, and the distributed
// device path (halo layers of split directions) is tests/mpi/test_heatbath_mpi.cpp. Also: every step of a sweep is a
// row of the metrics with its work. Single rank.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "comm/communicator.hpp"
#include "kernels/backend/runtime.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/heatbath.hpp"
#include "src/physics/heatbath_device.hpp"

namespace emprism {
namespace {

const Extents kLat{4, 6, 4, 8};

bool box_bitwise_equal(const HostGauge& a, const HostGauge& b) {
  return a.storage().size() == b.storage().size() &&
         std::memcmp(a.storage().data(), b.storage().data(), a.storage().size() * sizeof(SU3<double>)) == 0;
}

HeatbathParams params() {
  HeatbathParams p;
  p.beta = 6.0;
  p.or_per_sweep = 2;
  p.seed = 4321;
  return p;
}

TEST(HeatbathDevice, CompoundSweepsAreTheHostsOnTheCpuBackend) {
  if (!backend::device_is_host()) GTEST_SKIP() << "GPU build: tests/gpu/test_gpu_heatbath.cpp compares to rounding";
  const Geometry geom = Geometry::single_rank(kLat);
  Communicator comm;
  MetricsRegistry metrics;
  for (LinkHaloPath halo : {LinkHaloPath::Auto, LinkHaloPath::Kernels}) {
    HostGauge host = make_random_gauge(geom, 9, 1.0), dev_out(geom);
    DeviceHeatbath dev(metrics, host, nullptr, halo);
    for (std::uint64_t s = 3; s < 5; ++s) {
      heatbath_sweep(host, params(), s, nullptr);
      dev.sweep(params(), s);
      EXPECT_EQ(dev.plaquette(comm), plaquette(host, &comm)) << "sweep " << s;
    }
    dev.download(dev_out);
    EXPECT_TRUE(box_bitwise_equal(dev_out, host)) << (halo == LinkHaloPath::Auto ? "host halo" : "halo kernels");
  }
}

TEST(HeatbathDevice, OverrelaxationIsTheHostsOnTheCpuBackend) {
  if (!backend::device_is_host()) GTEST_SKIP() << "GPU build: tests/gpu/test_gpu_heatbath.cpp compares to rounding";
  const Geometry geom = Geometry::single_rank(kLat);
  MetricsRegistry metrics;
  HostGauge host = make_random_gauge(geom, 10, 0.6), dev_out(geom);
  DeviceHeatbath dev(metrics, host, nullptr);
  overrelax_sweep(host, nullptr);
  dev.overrelax();
  dev.download(dev_out);
  EXPECT_TRUE(box_bitwise_equal(dev_out, host));
}

TEST(HeatbathDevice, RejectsTheHostsBadArguments) {
  const Geometry geom = Geometry::single_rank(kLat);
  MetricsRegistry metrics;
  DeviceHeatbath dev(metrics, make_unit_gauge(geom), nullptr);
  HeatbathParams p = params();
  EXPECT_THROW(dev.sweep(p, kMaxHeatbathSweepIndex + 1), std::invalid_argument);
  p.beta = -1;
  EXPECT_THROW(dev.sweep(p, 0), std::invalid_argument);
}

// One compound sweep with or_per_sweep passes on one rank: 8 heatbath blocks, 8 per overrelaxation pass, one
// reunitarisation, the plaquette; each with its work counted. No direction is split, so no halo is refreshed (the
// working copy wraps periodically): no "heatbath_halo" row.
TEST(HeatbathDevice, EveryStepIsAMetricsRow) {
  const Geometry geom = Geometry::single_rank(kLat);
  MetricsRegistry metrics;
  Communicator comm;
  HostGauge u = make_unit_gauge(geom);
  const HeatbathParams p = params();
  thermalise_on_device(metrics, u, p, 1, nullptr, comm);
  std::int64_t calls[5] = {-1, -1, -1, -1, -1};
  const char* rows[5] = {"heatbath_update", "heatbath_overrelax", "heatbath_reunitarise", "heatbath_plaquette",
                         "heatbath_halo"};
  for (const KernelMetric& m : metrics.table())
    for (int r = 0; r < 5; ++r)
      if (m.name == rows[r]) {
        calls[r] = m.calls;
        EXPECT_GT(m.bytes, 0) << m.name;
        EXPECT_GT(m.flops, 0) << m.name;
      }
  EXPECT_EQ(calls[0], 8);
  EXPECT_EQ(calls[1], 8 * p.or_per_sweep);
  EXPECT_EQ(calls[2], 1);
  EXPECT_EQ(calls[3], 1);
  EXPECT_EQ(calls[4], -1) << "a halo refresh on one rank";
}

}  // namespace
}  // namespace emprism
