// policy_checks.hpp: the rule "every halo policy gives bitwise the same result" for one operator on one rank with
// every direction forced through the halo code (comm.force_halo), in a given precision and links format: the
// operator under each candidate policy (transport per direction; exterior fused, split or whole) applies the full M
// (double and float) and the hot kernels through apply_mdagm (eo_clover, oe_clover with CG's fused norm,
// eo_clover_dag, oe_clover_dag; every precision, half included), and every output's bytes (half: its decoded fp32
// values) and the norm must equal those of the first candidate. Shared by the CPU tests (test_halo.cpp) and the GPU
// tests (gpu/test_gpu_reconstruct.cpp), where the compilers' fused multiply-adds make the rule bite.
// Who may call: tests, on one rank.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "operator_fixture.hpp"

namespace emprism::test {

namespace policy {

constexpr std::array<bool, 4> kAllForced{true, true, true, true};

template <typename T>
void append_bytes(std::vector<unsigned char>& out, const T* p, std::size_t n) {
  const std::size_t at = out.size();
  out.resize(at + n * sizeof(T));
  std::memcpy(out.data() + at, p, n * sizeof(T));
}

// The bytes of apply_mdagm's outputs v = Mhat in, out = Mhat^dag Mhat in and the fused |v|^2.
template <typename R>
std::vector<unsigned char> mdagm_bytes(Context& ctx, WilsonClover<R>& op, const ParitySpinor<R>& in) {
  ParitySpinor<R> v(op.geometry()), out(op.geometry());
  backend::PendingSums pending;
  op.apply_mdagm(out, v, in, &pending);
  const double norm = blas::global_sum(ctx, pending);
  std::vector<unsigned char> bytes;
  const auto dv = v.download(), dout = out.download();
  append_bytes(bytes, dv.data(), dv.size());
  append_bytes(bytes, dout.data(), dout.size());
  append_bytes(bytes, &norm, 1);
  return bytes;
}

// The candidates (described) whose bytes from apply() differ from the first candidate's.
template <typename R, typename Apply>
std::vector<std::string> policies_that_differ(WilsonClover<R>& op, Apply apply) {
  std::vector<std::string> differ;
  std::vector<unsigned char> first;
  for (const HaloPolicy& p : op.halo_candidates()) {
    op.use_halo_policy(p);
    const std::vector<unsigned char> bytes = apply();
    if (first.empty())
      first = bytes;
    else if (bytes != first)
      differ.push_back(p.describe(kAllForced));
  }
  return differ;
}

// True when the candidates include exterior e (the checks must cover every driver: fused, split and whole).
inline bool has_exterior(const std::vector<HaloPolicy>& candidates, Exterior e) {
  for (const HaloPolicy& p : candidates)
    if (p.exterior == e) return true;
  return false;
}

inline void assert_every_exterior(const std::vector<HaloPolicy>& candidates) {
  for (Exterior e : {Exterior::Fused, Exterior::Split, Exterior::Whole})
    ASSERT_TRUE(has_exterior(candidates, e)) << exterior_name(e);
}

}  // namespace policy

// R = double or float: M and the hot kernels; R = Half: the hot kernels of the half operator built from a double
// one. rc: links of 18, 12 or 8 reals (half: 18 or 12).
template <typename R>
void expect_every_policy_gives_the_same_bits(const Extents& lat, int rc) {
  const std::array<double, 4> theta{0.7, 0.0, -0.5, 3.14159265358979323846};
  const auto links = ref::random_su3_links(lat, 601);
  const auto psi = ref::random_spinor(lat, 602);
  using Base = std::conditional_t<std::is_same_v<R, Half>, double, R>;
  OperatorSetup<Base> s(lat, links, 0.12, 1.3, theta, policy::kAllForced, rc);
  const SpinorField<Base> in = s.field(psi);
  if constexpr (std::is_same_v<R, Half>) {
    WilsonClover<Half> op(s.ctx, *s.op);
    ParitySpinor<Half> in_h(s.geom);
    blas::convert(s.ctx, in_h, in.odd);
    ASSERT_NO_FATAL_FAILURE(policy::assert_every_exterior(op.halo_candidates()));
    EXPECT_EQ(policy::policies_that_differ(op, [&] { return policy::mdagm_bytes(s.ctx, op, in_h); }),
              std::vector<std::string>{})
        << "half, links of " << rc;
  } else {
    ASSERT_NO_FATAL_FAILURE(policy::assert_every_exterior(s.op->halo_candidates()));
    const auto apply = [&] {
      SpinorField<R> m(s.geom);
      s.op->apply_m(m, in);
      std::vector<unsigned char> bytes = policy::mdagm_bytes(s.ctx, *s.op, in.odd);
      for (const ParitySpinor<R>* f : {&m.even, &m.odd}) {
        const auto d = f->download();
        policy::append_bytes(bytes, d.data(), d.size());
      }
      return bytes;
    };
    EXPECT_EQ(policy::policies_that_differ(*s.op, apply), std::vector<std::string>{})
        << "fp" << 8 * sizeof(R) << ", links of " << rc;
  }
}

}  // namespace emprism::test
