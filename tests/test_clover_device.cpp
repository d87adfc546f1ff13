// test_clover_device.cpp: the operator's fields built by the set-up kernels (src/physics/clover_device.hpp) against
// the host path they replace (make_clover, upload_gauge): on the CPU backend bit for bit (the same arithmetic in the
// same order), on a GPU to rounding (fused multiply-adds: a few ulps of double before the stores round to R).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/backend/runtime.hpp"
#include "operator_fixture.hpp"
#include "src/physics/clover_device.hpp"
#include "src/physics/gauge_device.hpp"

namespace emprism::test {
namespace {

const Extents kLat{4, 6, 4, 8};
const double kKappa = 0.13, kCsw = 1.7;

// |a - R(b)| per real entry over both blocks (b rounded to R as the host path uploads it), relative to the largest
// |b| entry of the field.
template <typename R>
double max_rel_diff(const std::vector<CloverSite<R>>& a, const std::vector<CloverSite<double>>& b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < b.size(); ++i)
    for (int k = 0; k < 2; ++k) {
      const CloverBlock<R>& x = a[i].b[k];
      const CloverBlock<double>& y = b[i].b[k];
      for (int j = 0; j < 6; ++j) {
        diff = std::fmax(diff, std::fabs(double(x.diag[j]) - double(R(y.diag[j]))));
        scale = std::fmax(scale, std::fabs(y.diag[j]));
      }
      for (int j = 0; j < 15; ++j) {
        diff = std::fmax(diff, std::fabs(double(x.lower[j].re) - double(R(y.lower[j].re))) +
                                   std::fabs(double(x.lower[j].im) - double(R(y.lower[j].im))));
        scale = std::fmax(scale, std::fabs(y.lower[j].re) + std::fabs(y.lower[j].im));
      }
    }
  return diff / scale;
}

// Bits on the CPU backend; on a GPU the double arithmetic differs by rounding (64 ulps covers the LDL^dag solve of
// these well-conditioned blocks) and the stored value by at most one more ulp of R.
template <typename R>
double clover_tolerance() {
  if (backend::device_is_host()) return 0;
  return 64 * std::numeric_limits<double>::epsilon() + std::numeric_limits<R>::epsilon();
}

template <typename R>
void check_against_host(double width) {
  const DeviceFieldsSetup<R> s(kLat, 17, width, kKappa, kCsw);
  for (int p = 0; p < 2; ++p) {
    EXPECT_LE(max_rel_diff(s.a[p].download(), s.host.a[p]), clover_tolerance<R>()) << "A, parity " << p;
    EXPECT_LE(max_rel_diff(s.a_inv[p].download(), s.host.a_inv[p]), clover_tolerance<R>()) << "A^-1, parity " << p;
  }
}

TEST(CloverDevice, DoubleEqualsHostCloverRandomField) { check_against_host<double>(1.0); }
TEST(CloverDevice, DoubleEqualsHostCloverNearUnitField) { check_against_host<double>(0.2); }
TEST(CloverDevice, SingleEqualsRoundedHostClover) { check_against_host<float>(1.0); }

// The whole operator (links and clover term from the set-up kernels) against the operator of the host path: M psi
// bit for bit on the CPU backend, to the precision's tolerance on a GPU.
template <typename R>
void check_operator() {
  const auto links = ref::random_su3_links(kLat, 23);
  OperatorSetup<R> host(kLat, links, kKappa, kCsw, theta_radians(0.2, 0, 0, 3.14159265358979323846));
  DiracParams p = host.op->params();
  WilsonClover<R> device(host.ctx, host.geom, host.gauge, p);
  const auto psi = ref::random_spinor(kLat, 29);
  SpinorField<R> in = host.field(psi), out(host.geom);
  device.apply_m(out, in);
  const auto got = host.natural(out), want = host.apply_m(psi);
  if (backend::device_is_host()) {
    EXPECT_EQ(got, want);
  } else {
    EXPECT_LT(rel_diff(got, want), tolerance<R>());
  }
}

TEST(CloverDevice, DoubleOperatorEqualsHostPath) { check_operator<double>(); }
TEST(CloverDevice, SingleOperatorEqualsHostPath) { check_operator<float>(); }

// The mixed-precision inner operator rounded from the outer one on the device gives the bits of the single-precision
// operator built from the gauge field (rounding a double to float is exact arithmetic on every device).
TEST(CloverDevice, SingleFromDoubleOperatorEqualsSingleOperator) {
  const auto links = ref::random_su3_links(kLat, 31);
  OperatorSetup<double> host(kLat, links, kKappa, kCsw, theta_radians(0, 0.4, 0, 3.14159265358979323846));
  WilsonClover<double> outer(host.ctx, host.geom, host.gauge, host.op->params());
  WilsonClover<float> rounded(host.ctx, outer), direct(host.ctx, host.geom, host.gauge, host.op->params());
  SpinorField<float> in(host.geom), out1(host.geom), out2(host.geom);
  spinor_from_natural(host.geom, ref::random_spinor(kLat, 37), in);
  rounded.apply_m(out1, in);
  direct.apply_m(out2, in);
  EXPECT_EQ(spinor_to_natural(host.geom, out1), spinor_to_natural(host.geom, out2));
}

// The operator built from a field generated and kept on the device (DeviceGauge: the run's random field) against the
// operator of the host path (the same field downloaded, then uploaded by build_operator_fields): the same kernels on
// the same double links, so M psi bit for bit on every backend, for links of 18 and 12 reals.
template <typename T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <typename R>
void check_device_resident(int reconstruct) {
  const Geometry geom(kLat, kLat, {0, 0, 0, 0}, {});
  MetricsRegistry metrics;
  Communicator comm;
  Context ctx{metrics, comm};
  const DeviceGauge dev = make_random_gauge_device(metrics, geom, 41, 1.0);
  const HostGauge host = download_gauge(metrics, dev);
  DiracParams p;
  p.kappa = kKappa;
  p.csw = kCsw;
  p.theta = {0.3, 0, 0, 3.14159265358979323846};
  p.reconstruct = reconstruct;
  WilsonClover<R> from_device(ctx, geom, dev, p), from_host(ctx, geom, host, p);
  SpinorField<R> in(geom), out1(geom), out2(geom);
  spinor_from_natural(geom, ref::random_spinor(kLat, 43), in);
  from_device.apply_m(out1, in);
  from_host.apply_m(out2, in);
  EXPECT_EQ(spinor_to_natural(geom, out1), spinor_to_natural(geom, out2));
  for (int inv = 0; inv < 2; ++inv)
    for (int par = 0; par < 2; ++par)
      EXPECT_TRUE(same_bytes(from_device.clover(inv)[par].download(), from_host.clover(inv)[par].download()));
}

TEST(CloverDevice, DoubleOperatorFromDeviceFieldEqualsHostPath) { check_device_resident<double>(18); }
TEST(CloverDevice, SingleOperatorFromDeviceFieldEqualsHostPath) { check_device_resident<float>(18); }
TEST(CloverDevice, CompressedOperatorFromDeviceFieldEqualsHostPath) { check_device_resident<double>(12); }

}  // namespace
}  // namespace emprism::test
