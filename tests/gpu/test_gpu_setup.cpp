// test_gpu_setup.cpp: GPU tests (ctest label "gpu") of the set-up kernels on the device against the CPU path: the
// clover term and its inverse built by kernels/clover_build.hpp on the GPU against make_clover on the host (the
// CPU reference), the operator built on the device against the operator built from the host's clover term, and the
// random gauge field generated on the GPU against make_random_gauge; a gauge file read straight to the GPU against the
// host reader, the unit field and the SU(3) check on the GPU.
// Skipped with a message without a GPU. Run by ctest -L gpu.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>

#include "gpu_support.hpp"
#include "io/gauge/gauge_file.hpp"
#include "kernels/backend/runtime.hpp"
#include "operator_fixture.hpp"
#include "src/physics/clover_device.hpp"
#include "src/physics/gauge_device.hpp"
#include "tests/support/gauge_compare.hpp"

namespace emprism::test {
namespace {

const Extents kLat{8, 6, 4, 10};
const double kKappa = 0.12, kCsw = 1.3;

// max |device - host| over the real entries of A (or A^-1) of a parity, relative to the largest host entry.
template <typename R>
double rel_diff(const std::vector<CloverSite<R>>& dev, const std::vector<CloverSite<double>>& host) {
  double d = 0, s = 0;
  for (std::size_t i = 0; i < host.size(); ++i)
    for (int b = 0; b < 2; ++b) {
      for (int j = 0; j < 6; ++j) {
        d = std::fmax(d, std::fabs(double(dev[i].b[b].diag[j]) - host[i].b[b].diag[j]));
        s = std::fmax(s, std::fabs(host[i].b[b].diag[j]));
      }
      for (int j = 0; j < 15; ++j) {
        d = std::fmax(d, std::fabs(double(dev[i].b[b].lower[j].re) - host[i].b[b].lower[j].re));
        d = std::fmax(d, std::fabs(double(dev[i].b[b].lower[j].im) - host[i].b[b].lower[j].im));
      }
    }
  return d / s;
}

// Double arithmetic that differs by fused multiply-adds (64 ulps for the LDL^dag solve), then one ulp of R.
template <typename R>
void check_clover() {
  const DeviceFieldsSetup<R> s(kLat, 41, 1.0, kKappa, kCsw);
  const double tol = 64 * std::numeric_limits<double>::epsilon() + std::numeric_limits<R>::epsilon();
  for (int p = 0; p < 2; ++p) {
    EXPECT_LE(rel_diff(s.a[p].download(), s.host.a[p]), tol) << "A, parity " << p;
    EXPECT_LE(rel_diff(s.a_inv[p].download(), s.host.a_inv[p]), tol) << "A^-1, parity " << p;
  }
}

TEST(GpuSetup, CloverDoubleMatchesCpu) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  check_clover<double>();
}

TEST(GpuSetup, CloverSingleMatchesCpu) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  check_clover<float>();
}

// M psi of the device-built operator against the operator built from the host's clover term (same device).
TEST(GpuSetup, OperatorMatchesHostCloverPath) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  const auto links = ref::random_su3_links(kLat, 43);
  OperatorSetup<double> host(kLat, links, kKappa, kCsw, theta_radians(0.3, 0, -0.5, 3.14159265358979323846));
  WilsonClover<double> device(host.ctx, host.geom, host.gauge, host.op->params());
  const auto psi = ref::random_spinor(kLat, 44);
  SpinorField<double> in = host.field(psi), out(host.geom);
  device.apply_m(out, in);
  EXPECT_LT(test::rel_diff(host.natural(out), host.apply_m(psi)), tolerance<double>());
}

// The random field of the device (halo included) against the host's: the device's log, sin and cos are within 2 ulps
// of glibc's; 64 ulps of the O(1) link entries after the Gram-Schmidt projection.
TEST(GpuSetup, RandomGaugeMatchesCpu) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  const Geometry geom(kLat, kLat, {0, 0, 0, 0}, {});
  MetricsRegistry metrics;
  for (double width : {1.0, 0.3}) {
    HostGauge want = make_random_gauge(geom, 11, width);
    want.fill_halo();
    const HostGauge got = make_random_gauge_on_device(metrics, geom, 11, width);
    EXPECT_LE(max_link_diff(got, want), 64 * std::numeric_limits<double>::epsilon()) << "width " << width;
  }
}

// The plaquette and link trace of the random field computed on the device against the host's plaquette() and
// link_trace() of the host's own field (make_random_gauge): the field to 64 ulps, the sums to 1e-13.
TEST(GpuSetup, GaugeObservablesMatchCpu) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  const Geometry geom(kLat, kLat, {0, 0, 0, 0}, {});
  MetricsRegistry metrics;
  HostGauge want = make_random_gauge(geom, 11, 0.3);
  want.fill_halo();
  GaugeObservables obs;
  make_random_gauge_on_device(metrics, geom, 11, 0.3, nullptr, &obs);
  EXPECT_NEAR(obs.plaquette, plaquette(want), 1e-13);
  EXPECT_NEAR(obs.link_trace, link_trace(want), 1e-13);
}

// A gauge file read straight to the GPU (the block with its halo, a timeslice at a time through pinned staging)
// against the host reader: the links bit for bit (both decode on the host), halo included; the plaquette and link
// trace computed on the device to 1e-13.
TEST(GpuSetup, GaugeFileReadToTheDeviceMatchesCpu) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  const Geometry geom(kLat, kLat, {0, 0, 0, 0}, {});
  Communicator comm;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("emprism_gpu_read_" + std::to_string(::getpid()) + ".ildg")).string();
  io::write_gauge_file(path, io::GaugeFormat::Ildg, make_random_gauge(geom, 12, 0.5), nullptr, comm, 64);
  HostGauge want(geom);
  const io::GaugeFileInfo wi = io::read_gauge_file(path, io::GaugeFormat::Ildg, want, nullptr, comm);
  io::GaugeFileInfo gi;
  const HostGauge got = read_through_device(path, geom, comm, &gi);
  std::remove(path.c_str());
  EXPECT_EQ(max_link_diff(got, want), 0.0);
  EXPECT_NEAR(gi.plaquette, wi.plaquette, 1e-13);
  EXPECT_NEAR(gi.link_trace, wi.link_trace, 1e-13);
  EXPECT_EQ(gi.checksum, "ok");
}

// The unit field made on the GPU is the host's; the SU(3) check on the GPU finds the host's first bad link.
TEST(GpuSetup, UnitGaugeAndSu3CheckMatchCpu) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  const Geometry geom(kLat, kLat, {0, 0, 0, 0}, {});
  MetricsRegistry metrics;
  EXPECT_EQ(max_link_diff(download_gauge(metrics, make_unit_gauge_device(metrics, geom)), make_unit_gauge(geom)), 0.0);
  HostGauge u = make_random_gauge(geom, 13, 1.0);
  const int a[4] = {5, 2, 3, 7}, b[4] = {1, 4, 2, 8};
  u.at(a, 1).e[0][2].im += 1e-7;
  u.at(b, 0).e[1][0].re += 1e-3;
  DeviceGauge dev(geom);
  dev.buffer().copy_from_host(u.storage().data());
  const NonSu3Link bad = first_non_su3_link(metrics, geom, dev.data(), 1e-10, "check");
  EXPECT_EQ(bad.lex, geom.local_lex(a));
  EXPECT_EQ(bad.mu, 1);
  EXPECT_NEAR(bad.deviation, unitarity_deviation(u.at(a, 1)), 1e-15);
  EXPECT_EQ(first_non_su3_link(metrics, geom, dev.data(), 1e-5, "check").lex, geom.local_lex(b));
}

}  // namespace
}  // namespace emprism::test
