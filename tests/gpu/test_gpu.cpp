// test_gpu.cpp: GPU tests (ctest label "gpu"): each hot kernel on the device against the independent CPU
// reference (tests/reference) on random fields in fp32 (relative 1e-5), the device solve against the CPU
// reference operator, the halo code on one rank (every halo policy, the fused CG norm), kernel resources and the
// empirical peak from the runtime. The multi-rank GPU tests are test_distributed_mpi --gpu (tests/CMakeLists.txt).
// Without a GPU (or on the CPU backend) every test is skipped with a message. Run by ctest -L gpu.
#include <gtest/gtest.h>

#include "gpu_support.hpp"
#include "kernels/backend/runtime.hpp"
#include "operator_fixture.hpp"
#include "src/physics/cg.hpp"
#include "src/physics/peak.hpp"

namespace emprism::test {
namespace {

const double kPi = 3.14159265358979323846;
const std::array<double, 4> kTheta{0.3, 0.0, -0.5, kPi};
const Extents kLat{8, 6, 4, 10};
const double kKappa = 0.12, kCsw = 1.3;

std::vector<Cd> hop(const std::vector<Cd>& links, const std::vector<Cd>& psi, bool dag) {
  if (!dag) return ref::apply_hopping(kLat, links, kTheta, psi);
  return ref::apply_gamma5(ref::apply_hopping(kLat, links, kTheta, ref::apply_gamma5(psi)));  // H^dag = g5 H g5
}

struct Fixture {
  Fixture() : links(ref::random_su3_links(kLat, 301)), s(kLat, links, kKappa, kCsw, kTheta) {}
  std::vector<Cd> natural_of(const ParitySpinor<float>& f, int parity) {
    SpinorField<float> full(s.geom);
    blas::convert(s.ctx, full.parity(parity), f);
    return s.natural(full);
  }
  std::vector<Cd> links;
  OperatorSetup<float> s;
};

// eo_clover: A_ee out_e = (H psi_o)_e, checked by applying the reference A to the device result.
void check_eo_clover(bool dag) {
  Fixture f;
  const auto psi = on_parity(kLat, ref::random_spinor(kLat, 302), 1);
  const SpinorField<float> in = f.s.field(psi);
  ParitySpinor<float> out(f.s.geom);
  f.s.op->eo_clover(out, in.odd, dag);
  const auto a_out = ref::apply_clover_term(kLat, f.links, kKappa, kCsw, f.natural_of(out, 0));
  EXPECT_LT(rel_diff(a_out, on_parity(kLat, hop(f.links, psi, dag), 0)), 1e-5);
}

TEST(Gpu, EoCloverMatchesCpuReference) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  check_eo_clover(false);
}

TEST(Gpu, EoCloverDagMatchesCpuReference) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  check_eo_clover(true);
}

// oe_clover: out = x - kappa^2 A_oo^-1 (H t)_o, out2 = A_oo^-1 out:
// A_oo (x - out) = kappa^2 (H t)_o and A_oo out2 = out.
TEST(Gpu, OeCloverMatchesCpuReference) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  Fixture f;
  const auto t = on_parity(kLat, ref::random_spinor(kLat, 303), 0),
             x = on_parity(kLat, ref::random_spinor(kLat, 304), 1);
  const SpinorField<float> tf = f.s.field(t), xf = f.s.field(x);
  ParitySpinor<float> out(f.s.geom), out2(f.s.geom);
  f.s.op->oe_clover(out, out2, tf.even, xf.odd);
  const auto out_nat = f.natural_of(out, 1);
  std::vector<Cd> diff(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) diff[i] = x[i] - out_nat[i];
  auto expect = on_parity(kLat, hop(f.links, t, false), 1);
  for (auto& v : expect) v *= kKappa * kKappa;
  EXPECT_LT(rel_diff(ref::apply_clover_term(kLat, f.links, kKappa, kCsw, diff), expect), 1e-5);
  EXPECT_LT(rel_diff(ref::apply_clover_term(kLat, f.links, kKappa, kCsw, f.natural_of(out2, 1)), out_nat), 1e-5);
}

// oe_clover_dag: out = x - kappa^2 (H^dag t)_o.
TEST(Gpu, OeCloverDagMatchesCpuReference) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  Fixture f;
  const auto t = on_parity(kLat, ref::random_spinor(kLat, 305), 0),
             x = on_parity(kLat, ref::random_spinor(kLat, 306), 1);
  const SpinorField<float> tf = f.s.field(t), xf = f.s.field(x);
  ParitySpinor<float> out(f.s.geom);
  f.s.op->oe_clover_dag(out, tf.even, xf.odd);
  auto expect = on_parity(kLat, hop(f.links, t, true), 1);
  for (std::size_t i = 0; i < expect.size(); ++i) expect[i] = x[i] - kKappa * kKappa * expect[i];
  EXPECT_LT(rel_diff(f.natural_of(out, 1), expect), 1e-5);
}

TEST(Gpu, FullOperatorMatchesCpuReference) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  Fixture f;
  const auto psi = ref::random_spinor(kLat, 307);
  EXPECT_LT(rel_diff(f.s.apply_m(psi), ref::apply_wilson_clover(kLat, f.links, kKappa, kCsw, kTheta, psi)), 1e-5);
}

TEST(Gpu, BlasReductionsMatchHostSums) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  Fixture f;
  const auto a = ref::random_spinor(kLat, 308), b = ref::random_spinor(kLat, 309);
  const SpinorField<float> fa = f.s.field(a), fb = f.s.field(b);
  // Host sums of the fp32-rounded values, in double.
  const auto ra = f.s.natural(fa), rb = f.s.natural(fb);
  EXPECT_NEAR(blas::norm2(f.s.ctx, fa) / ref::norm2(ra), 1.0, 1e-12);
  const Cd d = blas::dot(f.s.ctx, fa.odd, fb.odd) + blas::dot(f.s.ctx, fa.even, fb.even);
  EXPECT_LT(std::abs(d - ref::inner_product(ra, rb)) / std::abs(ref::inner_product(ra, rb)), 1e-12);
}

// The whole solve on the device, its solution checked with the CPU reference operator (mixed precision: fp64
// outer residual, fp32 CG on the device).
TEST(Gpu, MixedSolveMatchesCpuReference) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  const auto links = ref::random_su3_links(kLat, 310);
  OperatorSetup<double> outer(kLat, links, kKappa, kCsw, kTheta);
  OperatorSetup<float> inner(kLat, links, kKappa, kCsw, kTheta);
  const auto b = ref::random_spinor(kLat, 311);
  SpinorField<double> bf = outer.field(b), x(outer.geom);
  CgParams p;
  p.tol = 1e-10;
  const CgResult r = solve_eo_cg(*outer.op, *inner.op, bf, x, p);
  ASSERT_TRUE(r.converged);
  EXPECT_LT(rel_diff(ref::apply_wilson_clover(kLat, links, kKappa, kCsw, kTheta, outer.natural(x)), b), 1.01e-10);
}

// CG's |Mhat p|^2 (per site from oe_clover's epilogue, reduced asynchronously) equals the norm of v = Mhat p read
// back from the field, bitwise (the same per-site values in the same reduction order), with all four directions
// through the halo code (tuned policy, streams and events) and without.
TEST(Gpu, FusedNormOfMhatIsNorm2OfMhat) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  const auto links = ref::random_su3_links(kLat, 313);
  for (const std::array<bool, 4> force : {std::array<bool, 4>{}, std::array<bool, 4>{true, true, true, true}}) {
    OperatorSetup<float> s(kLat, links, kKappa, kCsw, kTheta, force);
    const SpinorField<float> psi = s.field(ref::random_spinor(kLat, 314));
    ParitySpinor<float> v(s.geom), out(s.geom);
    backend::PendingSums pending;
    s.op->apply_mdagm(out, v, psi.odd, &pending);
    EXPECT_EQ(blas::global_sum(s.ctx, pending), blas::norm2(s.ctx, v)) << "force_halo " << force[0];
  }
}

// The operator through the halo code on one rank (every direction forced) equals the operator without halos to
// rounding under every transport request, and the candidate policies of one request give bitwise the same result
// (the tuning never changes a result): "auto" and "peer" give the one whole policy, "staged" the fused and the split
// exterior.
TEST(Gpu, ForcedHaloOperatorMatchesForEveryPolicy) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  const auto links = ref::random_su3_links(kLat, 315);
  const auto psi = ref::random_spinor(kLat, 316);
  OperatorSetup<float> plain(kLat, links, kKappa, kCsw, kTheta);
  const auto expect = plain.apply_m(psi);
  std::size_t compared = 0;
  for (const auto choice :
       {TransportRequest::Choice::Auto, TransportRequest::Choice::Staged, TransportRequest::Choice::Peer}) {
    TransportRequest request;
    request.choice = choice;
    OperatorSetup<float> halo(kLat, links, kKappa, kCsw, kTheta, {true, true, true, true}, 0, request);
    const auto tuned = halo.apply_m(psi);
    EXPECT_LT(rel_diff(tuned, expect), 1e-5) << "request " << static_cast<int>(choice);
    for (const HaloPolicy& p : halo.op->halo_candidates()) {
      halo.op->use_halo_policy(p);
      EXPECT_TRUE(halo.apply_m(psi) == tuned) << "policy " << p.describe({true, true, true, true});
      ++compared;
    }
  }
  EXPECT_EQ(compared, 4u);  // whole (auto), fused and split (staged), whole (peer)
}

TEST(Gpu, KernelResourcesAreReported) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  Fixture f;
  const SpinorField<float> in = f.s.field(ref::random_spinor(kLat, 312));
  ParitySpinor<float> out(f.s.geom);
  f.s.op->eo_clover(out, in.odd, false);
  bool seen = false;
  for (const auto& k : f.s.metrics.table())
    if (k.name == "eo_clover") {
      seen = true;
      EXPECT_GT(k.res.registers, 0);
      EXPECT_GE(k.res.spill_bytes, 0);
      EXPECT_GT(k.res.block, 0);
      EXPECT_GT(k.res.occupancy, 0.0);
      EXPECT_LE(k.res.occupancy, 1.0);
    }
  EXPECT_TRUE(seen);
}

TEST(Gpu, PeakBandwidthIsMeasured) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  const PeakBandwidth p = measure_peak_bandwidth();
  EXPECT_TRUE(p.measured);
  EXPECT_GT(p.copy_gbs, 100.0);  // any HBM GPU exceeds 100 GB/s by far
  EXPECT_EQ(p.peak_gbs, std::max({p.copy_gbs, p.triad_gbs, p.read_gbs}));
}

}  // namespace
}  // namespace emprism::test
