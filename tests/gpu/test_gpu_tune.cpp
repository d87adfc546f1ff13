// test_gpu_tune.cpp: GPU tests (ctest label "gpu") of the kernel autotuner (kernels/tune.hpp) on the hot kernels:
// apply_mdagm runs all four (eo_clover, oe_clover with the fused norm, eo_clover_dag, oe_clover_dag); with each
// launch variant forced (a tuner loaded with that choice for every key) its output is bitwise the same, in fp32, fp64
// and every links format and in half and fp32/fp64 with links of 18 and 12 (the launch-bounds variants included: the
// fp32, half and staged fp32/fp64 kernels run their own group's, other kernels fall back to the default); a fresh tuner
// times the four keys once, and a second tuner reading the first's cache file reuses every choice without timing. The
// CG's fused residual update (oe_clover_dag_update, which writes its input r) is tuned on a copy: a first use that
// tunes it leaves r as untuned. Skipped with a message without a GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>

#include "gpu_support.hpp"
#include "io/tune_cache.hpp"
#include "kernels/backend/runtime.hpp"
#include "kernels/backend/variants.hpp"
#include "operator_fixture.hpp"

namespace emprism::test {
namespace {

const Extents kLat{8, 6, 4, 10};
const char* const kHot[] = {"eo_clover", "oe_clover", "eo_clover_dag", "oe_clover_dag"};

Tuner make_tuner() {
  return Tuner(TuneIdentity{"test", backend::device_model()}, backend::launch_variants(), backend::default_variant());
}

// A field's stored bytes, once the device is done.
template <typename P>
std::vector<unsigned char> download_bytes(const P& f) {
  backend::synchronize();
  const auto host = f.download();
  std::vector<unsigned char> bytes(host.size() * sizeof(host[0]));
  std::memcpy(bytes.data(), host.data(), bytes.size());
  return bytes;
}

// out = Mhat^dag Mhat in (one parity) by op (v: its work field), downloaded as bytes.
template <typename Op, typename P>
std::vector<unsigned char> apply_mdagm_bytes(Op& op, P& out, P& v, const P& in) {
  backend::PendingSums norm;
  op.apply_mdagm(out, v, in, &norm);
  backend::wait_sums(norm);
  return download_bytes(out);
}

// Mhat^dag Mhat psi (odd parity) with the operator's context using `tuner`, as bytes.
template <typename R>
std::vector<unsigned char> mdagm_bytes(OperatorSetup<R>& s, Tuner& tuner, const std::vector<Cd>& psi) {
  s.ctx.tuner = &tuner;
  SpinorField<R> in = s.field(psi), out(s.geom), v(s.geom);
  auto bytes = apply_mdagm_bytes(*s.op, out.odd, v.odd, in.odd);
  s.ctx.tuner = nullptr;
  return bytes;
}

// Each launch variant in turn forced on the four hot keys (kernel names + suffix, precision prec, links rc, sites):
// bytes(tuner) must be the same for all of them, with nothing timed.
template <typename Bytes>
void expect_same_bits_for_every_variant(const std::string& suffix, const char* prec, int rc, int sites,
                                        const Bytes& bytes_of, const std::string& what) {
  std::vector<unsigned char> first;
  for (int v = 0; v < static_cast<int>(backend::launch_variants().size()); ++v) {
    Tuner tuner = make_tuner();
    TuneEntries forced;
    for (const char* k : kHot) forced[tune_key(k + suffix, prec, rc, sites)] = TuneChoice{tuner.variant(v), 0};
    tuner.load(forced);
    const auto bytes = bytes_of(tuner);
    EXPECT_EQ(tuner.stats().candidates_timed, 0) << "variant " << tuner.variant(v).describe();
    if (v == 0)
      first = bytes;
    else
      EXPECT_EQ(std::memcmp(bytes.data(), first.data(), bytes.size()), 0)
          << "variant " << tuner.variant(v).describe() << " " << what << " r" << rc;
  }
}

template <typename R>
void every_variant_same_bits(int rc) {
  OperatorSetup<R> s(kLat, ref::random_su3_links(kLat, 601), 0.12, 1.3, {0, 0, 0, 3.14159265358979}, {}, rc);
  const auto psi = ref::random_spinor(kLat, 602);
  expect_same_bits_for_every_variant(
      "", PrecisionTraits<R>::name, rc, s.geom.half_volume(), [&](Tuner& t) { return mdagm_bytes(s, t, psi); },
      PrecisionTraits<R>::name);
}

// The same for the half and fp32/fp64 operators (keys "eo_clover_half", "eo_clover_f32d", ...; links of 18 and 12):
// the half one's launch-bounds variant is its own group's (EMPRISM_TUNE_BOUNDED_HALF), the other groups' fall back to
// the default; the fp32/fp64 interior kernels with links of 12 stage their hops in blocks of up to 128 threads and
// take apply_hopping in larger ones (kernels/hopping.hpp: apply_staged_hops), so their variants compare the two, and
// they have a launch-bounds variant of their own (EMPRISM_TUNE_BOUNDED_F32D), staged under a register cap.
template <typename P>
std::vector<unsigned char> sloppy_mdagm_bytes(OperatorSetup<double>& s, Tuner& tuner, const std::vector<Cd>& psi) {
  s.ctx.tuner = &tuner;
  WilsonClover<P> h(s.ctx, *s.op);
  const SpinorField<double> in_d = s.field(psi);
  ParitySpinor<P> in(s.geom), out(s.geom), v(s.geom);
  blas::convert(s.ctx, in, in_d.odd);
  auto bytes = apply_mdagm_bytes(h, out, v, in);
  s.ctx.tuner = nullptr;
  return bytes;
}

template <typename P>
void every_variant_same_bits_sloppy(int rc) {
  OperatorSetup<double> s(kLat, ref::random_su3_links(kLat, 603), 0.12, 1.3, {0, 0, 0, 3.14159265358979}, {}, rc);
  const auto psi = ref::random_spinor(kLat, 604);
  expect_same_bits_for_every_variant(
      PrecisionTraits<P>::row_suffix, PrecisionTraits<P>::name, rc, s.geom.half_volume(),
      [&](Tuner& t) { return sloppy_mdagm_bytes<P>(s, t, psi); }, PrecisionTraits<P>::name);
}

TEST(GpuTune, EveryVariantOfTheHotKernelsComputesTheSameBits) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  for (int rc : {18, 12, 8}) {
    every_variant_same_bits<float>(rc);
    every_variant_same_bits<double>(rc);
  }
  for (int rc : {18, 12}) {
    every_variant_same_bits_sloppy<Half>(rc);
    every_variant_same_bits_sloppy<Fp32Fp64>(rc);
  }
}

// r -= alpha Mhat^dag Mhat p by the CG's fused kernel (apply_mdagm_head, then apply_mdagm_update), with `tuner` (none:
// the default variant), r's bytes.
std::vector<unsigned char> fused_update_bytes(OperatorSetup<float>& s, Tuner* tuner, const std::vector<Cd>& psi,
                                              const std::vector<Cd>& res) {
  s.ctx.tuner = tuner;
  SpinorField<float> p = s.field(psi), r = s.field(res), v(s.geom), scratch(s.geom);
  backend::PendingSums pap, rr;
  s.op->apply_mdagm_head(v.odd, p.odd, &pap);
  backend::wait_sums(pap);
  s.op->apply_mdagm_update(r.odd, v.odd, 0.37, scratch.odd, &rr);
  backend::wait_sums(rr);
  s.ctx.tuner = nullptr;
  return download_bytes(r.odd);
}

// The fused kernel updates r in place, so the tuner times it on a copy (physics/dirac_impl.hpp kInPlaceEpi): a first
// use that tunes it leaves r as the default variant without a tuner does (every variant computes the same bits).
// Also with directions through the halo exchange (this rank with itself): staged (the interior kernel tuned, its
// boundary sites' partial sums apart from r) and auto (peer here: the whole kernel tuned).
TEST(GpuTune, TuningTheInPlaceResidualUpdateLeavesItsResultAsUntuned) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  using Choice = TransportRequest::Choice;
  const std::array<bool, 4> none{}, t{false, false, false, true}, all{true, true, true, true};
  const std::pair<std::array<bool, 4>, Choice> halos[] = {
      {none, Choice::Auto}, {t, Choice::Staged}, {all, Choice::Staged}, {all, Choice::Auto}};
  for (const auto& [force, choice] : halos) {
    for (int rc : {18, 12, 8}) {
      TransportRequest request;
      request.choice = choice;
      OperatorSetup<float> s(kLat, ref::random_su3_links(kLat, 605), 0.12, 1.3, {0, 0, 0, 3.14159265358979}, force, rc,
                             request);
      const auto psi = ref::random_spinor(kLat, 606), res = ref::random_spinor(kLat, 607);
      const auto untuned = fused_update_bytes(s, nullptr, psi, res);
      const std::string where = "r" + std::to_string(rc) + ", halo policy '" + s.op->halo_policy() + "'";
      Tuner tuner = make_tuner();
      const auto tuned = fused_update_bytes(s, &tuner, psi, res);
      EXPECT_EQ(tuner.stats().tuned, 4) << "eo_clover, oe_clover, eo_clover_dag and oe_clover_dag_update, " << where;
      EXPECT_EQ(std::memcmp(tuned.data(), untuned.data(), tuned.size()), 0) << where;
    }
  }
}

TEST(GpuTune, SecondTunerReusesTheFirstOnesCacheFile) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  OperatorSetup<float> s(kLat, ref::random_su3_links(kLat, 603), 0.12, 1.3, {}, {}, 18);
  const auto psi = ref::random_spinor(kLat, 604);
  char dir[] = "/tmp/emprism_gpu_tune_XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/tunecache.tsv";
  Tuner first = make_tuner();
  const auto a = mdagm_bytes(s, first, psi);
  EXPECT_EQ(first.stats().tuned, 4);
  io::save_tune_cache(path, first.identity(), first.candidates(), first.entries());

  Tuner second = make_tuner();
  const TuneCacheText cache = parse_tune_cache(*io::read_tune_cache(path), second.identity(), second.candidates());
  ASSERT_EQ(cache.status, TuneCacheText::Status::Ok) << cache.reason;
  second.load(cache.entries);
  const auto b = mdagm_bytes(s, second, psi);
  EXPECT_EQ(second.stats().tuned, 0);
  EXPECT_EQ(second.stats().candidates_timed, 0);
  for (const auto& [key, c] : first.entries()) EXPECT_EQ(second.entries().at(key).variant, c.variant) << key;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size()), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace emprism::test
