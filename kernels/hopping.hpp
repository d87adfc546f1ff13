// hopping.hpp: the hopping term of the Wilson-clover operator at one site, for the kernels of kernels/wilson_clover.hpp
// (its header comment has the operator, the drivers and the epilogues).
//   H psi(x) = sum_mu [ (1 - gamma_mu) U_mu(x) psi(x+mu) + (1 + gamma_mu) U_mu(x-mu)^dag psi(x-mu) ]
//   H^dag    = the same with gamma_mu -> -gamma_mu (= g5 H g5)
// A hop crossing the global boundary forward in mu takes exp(i theta_mu), backward its conjugate. Hops that leave the
// rank read spin-projected half spinors from halo buffers (kernels/halo_pack.hpp). Three ways to sum the interior hops,
// with the same arithmetic in the same order (the same bits): apply_hopping (each hop's loads, then its arithmetic),
// apply_interior_hops_ahead (the next hop loaded into registers first) and apply_staged_hops (the next hop copied into
// the block's shared memory in the background).
// Who may call: the drivers of kernels/wilson_clover.hpp (per-site code, host and device).
#pragma once

#include <type_traits>

#include "kernels/blas.hpp"
#include "kernels/lattice_arg.hpp"
#include "kernels/views.hpp"

namespace emprism {

template <typename R>
struct HoppingArg {
  LatticeArg lat;
  LinksRef<store_t<R>> gauge;  // the links in the format the kernel is instantiated for, in their stored precision
  SpinorView<R> in;            // the parity opposite to out_parity
  int out_parity = 0;
  Complex<real_t<R>> phase[4];  // exp(i theta_mu)
  const HalfSpinor<real_t<R>>* halo_fwd[4];
  const HalfSpinor<real_t<R>>* halo_bwd[4];
};

// Which hops a driver takes: Interior those that stay on the rank, Exterior those that leave it (from the halo
// buffers), Whole every hop, each from the field or the halo buffer (in the order of the kernel without halos).
enum class HopPart { Interior, Exterior, Whole };

// kLinkAfterNeighbour: the hops from the field make their link's first real depend on the neighbour spinor's last
// real (link_after_neighbour: unchanged, but where that real is NaN; the hop is then NaN in part without this, wholly
// with it). Why: with fp32 links of 8 reals ptxas (sm_90, CUDA 13) started each link's unpacking (square roots,
// reciprocals) before it issued 4 of the neighbour's 6 loads in 6 of the 8 hops, so those loads left only once the
// link had arrived (two memory latencies in a row); with the dependency every hop issues its 8 loads together (the
// same 72 registers; H200, 2026-12-03, BENCHMARKS.md: eo_clover 89.6-90.0 -> 91.6-92.3% of the peak, eo_clover_dag
// 88.3-89.8 -> 91.0-91.8%, the fused update 91.0-91.7 -> 93.0-93.4%, the same bits). Not for fp64 (128 -> 144
// registers), links of 12 and 18 (their loads already leave together), the hops loaded one hop ahead, nor on AMD GPUs
// (not measured).
template <typename R, int Rc>
constexpr bool kLinkAfterNeighbour = std::is_same_v<R, float>&& Rc == 8 && !EMPRISM_AMDGPU;
template <typename Psi>
EMPRISM_HD inline PackedLink<float, 8> link_after_neighbour(PackedLink<float, 8> u, const Psi& psi) {
  const float q = psi.s[3].c[2].im;
  u.v[0] = q != q ? q : u.v[0];
  return u;
}

// The term of a hop from the field, given its link u (unpacked) and the neighbour psi: forward U psi(x+mu), backward
// U^dag psi(x-mu), each spin-projected, with the boundary phase where the hop crosses the global boundary, added to
// acc.
template <int Mu, int Fwd, typename R, typename L, typename Psi>
EMPRISM_HD inline void add_fwd_field_hop(const HoppingArg<R>& a, const L& u, const Psi& psi, bool crosses,
                                         Spinor<real_t<R>>& acc) {
  HalfSpinor<real_t<R>> h = u * project<Mu, Fwd>(psi);
  if (crosses) h = a.phase[Mu] * h;
  accumulate_reconstructed<Mu, Fwd>(acc, h);
}
template <int Mu, int Fwd, typename R, typename L, typename Psi>
EMPRISM_HD inline void add_bwd_field_hop(const HoppingArg<R>& a, const L& u, const Psi& psi, bool crosses,
                                         Spinor<real_t<R>>& acc) {
  HalfSpinor<real_t<R>> h = adj_mul(u, project<Mu, -Fwd>(psi));
  if (crosses) h = conj(a.phase[Mu]) * h;
  accumulate_reconstructed<Mu, -Fwd>(acc, h);
}

// One hop, forward or backward in Mu, added to acc: from the field (the neighbour on the rank) or from the halo buffer.
template <int Mu, int Fwd, int Rc, typename R>
EMPRISM_HD inline void hop_fwd_field(const HoppingArg<R>& a, const int x[4], int cb, Spinor<real_t<R>>& acc) {
  bool crosses = false;
  const int y = a.lat.neighbour(x, Mu, +1, crosses);
  if constexpr (kLinkAfterNeighbour<R, Rc>) {
    const auto psi = a.in.load(y);
    const auto u = link_after_neighbour(a.gauge.template view<Rc>().load_stored(a.out_parity, cb, Mu), psi);
    add_fwd_field_hop<Mu, Fwd>(a, unpack_link(u), psi, crosses, acc);
  } else {
    add_fwd_field_hop<Mu, Fwd>(a, a.gauge.template view<Rc>().load(a.out_parity, cb, Mu), a.in.load(y), crosses, acc);
  }
}
template <int Mu, int Fwd, int Rc, typename R>
EMPRISM_HD inline void hop_bwd_field(const HoppingArg<R>& a, const int x[4], Spinor<real_t<R>>& acc) {
  bool crosses = false;
  const int y = a.lat.neighbour(x, Mu, -1, crosses);
  if constexpr (kLinkAfterNeighbour<R, Rc>) {
    const auto psi = a.in.load(y);
    const auto u = link_after_neighbour(a.gauge.template view<Rc>().load_stored(1 - a.out_parity, y, Mu), psi);
    add_bwd_field_hop<Mu, Fwd>(a, unpack_link(u), psi, crosses, acc);
  } else {
    add_bwd_field_hop<Mu, Fwd>(a, a.gauge.template view<Rc>().load(1 - a.out_parity, y, Mu), a.in.load(y), crosses,
                               acc);
  }
}
// The halo hop's link product sums its products separately (mul<false>, kernels/su3.hpp): as chains they took the
// fp32/fp64 operator's exterior kernels from 128 to 138 registers on sm_90 (one block of 256 per SM instead of two).
template <int Mu, int Fwd, int Rc, typename R>
EMPRISM_HD inline void hop_fwd_halo(const HoppingArg<R>& a, const int x[4], int cb, Spinor<real_t<R>>& acc) {
  HalfSpinor<real_t<R>> h =
      mul<false>(a.gauge.template view<Rc>().load(a.out_parity, cb, Mu), a.halo_fwd[Mu][a.lat.face_index(x, Mu)]);
  if (a.lat.origin[Mu] + x[Mu] == a.lat.g[Mu] - 1) h = a.phase[Mu] * h;
  accumulate_reconstructed<Mu, Fwd>(acc, h);
}
template <int Mu, int Fwd, typename R>
EMPRISM_HD inline void hop_bwd_halo(const HoppingArg<R>& a, const int x[4], Spinor<real_t<R>>& acc) {
  HalfSpinor<real_t<R>> h = a.halo_bwd[Mu][a.lat.face_index(x, Mu)];
  if (a.lat.origin[Mu] + x[Mu] == 0) h = conj(a.phase[Mu]) * h;
  accumulate_reconstructed<Mu, -Fwd>(acc, h);
}

// The one-pass whole driver's hops: the projected neighbour (forward) or its link-multiplied projection (backward)
// from the field or the halo buffer, then the same link, phase and accumulation for both (the arithmetic is the field
// path's, the sender's for the halo).
template <int Mu, int Fwd, int Rc, typename R>
EMPRISM_HD inline void hop_fwd_whole(const HoppingArg<R>& a, const int x[4], int cb, bool off, Spinor<real_t<R>>& acc) {
  HalfSpinor<real_t<R>> h;
  bool crosses = false;
  if (off) {
    h = a.halo_fwd[Mu][a.lat.face_index(x, Mu)];
    crosses = a.lat.origin[Mu] + x[Mu] == a.lat.g[Mu] - 1;
  } else {
    h = project<Mu, Fwd>(a.in.load(a.lat.neighbour(x, Mu, +1, crosses)));
  }
  h = a.gauge.template view<Rc>().load(a.out_parity, cb, Mu) * h;
  if (crosses) h = a.phase[Mu] * h;
  accumulate_reconstructed<Mu, Fwd>(acc, h);
}
template <int Mu, int Fwd, int Rc, typename R>
EMPRISM_HD inline void hop_bwd_whole(const HoppingArg<R>& a, const int x[4], bool off, Spinor<real_t<R>>& acc) {
  HalfSpinor<real_t<R>> h;
  bool crosses = false;
  if (off) {
    h = a.halo_bwd[Mu][a.lat.face_index(x, Mu)];
    crosses = a.lat.origin[Mu] + x[Mu] == 0;
  } else {
    const int y = a.lat.neighbour(x, Mu, -1, crosses);
    h = adj_mul(a.gauge.template view<Rc>().load(1 - a.out_parity, y, Mu), project<Mu, -Fwd>(a.in.load(y)));
  }
  if (crosses) h = conj(a.phase[Mu]) * h;
  accumulate_reconstructed<Mu, -Fwd>(acc, h);
}

template <int Mu, bool Dag, HopPart Part, int Rc, typename R>
EMPRISM_HD inline void hop_direction(const HoppingArg<R>& a, const int x[4], int cb, Spinor<real_t<R>>& acc) {
  constexpr int kFwd = Dag ? +1 : -1;  // (1 - gamma) forward for H, (1 + gamma) for H^dag
  const bool fwd_off = a.lat.partitioned[Mu] && x[Mu] == a.lat.l[Mu] - 1;
  const bool bwd_off = a.lat.partitioned[Mu] && x[Mu] == 0;
  if constexpr (Part == HopPart::Exterior) {
    if (fwd_off) hop_fwd_halo<Mu, kFwd, Rc>(a, x, cb, acc);
    if (bwd_off) hop_bwd_halo<Mu, kFwd>(a, x, acc);
  } else if constexpr (Part == HopPart::Whole) {
    hop_fwd_whole<Mu, kFwd, Rc>(a, x, cb, fwd_off, acc);
    hop_bwd_whole<Mu, kFwd, Rc>(a, x, bwd_off, acc);
  } else {
    if (!fwd_off) hop_fwd_field<Mu, kFwd, Rc>(a, x, cb, acc);
    if (!bwd_off) hop_bwd_field<Mu, kFwd, Rc>(a, x, acc);
  }
}

// The interior hops loaded one hop ahead: the link and the neighbour spinor of hop K + 1 (hops in the order of
// apply_hopping: forward then backward, mu = 0..3) are loaded before the arithmetic of hop K, so that each thread has
// two hops' loads in flight instead of one (more registers: fewer warps per SM). The loads are unconditional (a hop
// that leaves the rank reads the locally wrapped site, valid memory; its term is skipped as in apply_hopping), and the
// arithmetic and the order of the sum are apply_hopping's: the same bits.
template <int K, int Rc, typename R>
EMPRISM_HD inline auto ahead_link(const HoppingArg<R>& a, const int x[4], int cb) {
  const auto g = a.gauge.template view<Rc>();
  if constexpr (K % 2 == 0) return g.sub(a.out_parity, K / 2).template load<true>(cb);
  bool crosses = false;
  return g.sub(1 - a.out_parity, K / 2).template load<true>(a.lat.neighbour(x, K / 2, -1, crosses));
}
template <int K, typename R>
EMPRISM_HD inline auto ahead_spinor(const HoppingArg<R>& a, const int x[4], bool& crosses) {
  return a.in.load(a.lat.neighbour(x, K / 2, K % 2 == 0 ? +1 : -1, crosses));
}
// psi in the arithmetic's reals To: itself where it has them, else convert_reals (exact: fp32 to fp64).
template <typename To, typename Psi>
EMPRISM_HD inline decltype(auto) widened(const Psi& psi) {
  if constexpr (std::is_same_v<Psi, Spinor<To>>)
    return (psi);
  else
    return convert_reals<To>(psi);
}
// Hop K of the interior kernels' order (K = 2 mu forward, 2 mu + 1 backward) from its link and neighbour (as stored;
// widened to the arithmetic's reals here, where the hop is taken): its term added to acc unless the hop leaves the
// rank. The loaded-ahead and staged hops' arithmetic, apply_hopping's.
template <int K, bool Dag, typename R, typename Link, typename Psi>
EMPRISM_HD inline void add_interior_hop(const HoppingArg<R>& a, const int x[4], const Link& link, const Psi& psi,
                                        bool crosses, Spinor<real_t<R>>& acc) {
  constexpr int Mu = K / 2;
  constexpr int kFwd = Dag ? +1 : -1;
  const bool leaves = a.lat.partitioned[Mu] && x[Mu] == (K % 2 == 0 ? a.lat.l[Mu] - 1 : 0);
  if (!leaves) {
    if constexpr (K % 2 == 0)
      add_fwd_field_hop<Mu, kFwd>(a, unpack_link(link), widened<real_t<R>>(psi), crosses, acc);
    else
      add_bwd_field_hop<Mu, kFwd>(a, unpack_link(link), widened<real_t<R>>(psi), crosses, acc);
  }
}
template <int K, bool Dag, int Rc, typename R, typename Link, typename Psi>
EMPRISM_HD inline void interior_hops_ahead(const HoppingArg<R>& a, const int x[4], int cb, const Link& link,
                                           const Psi& psi, bool crosses, Spinor<real_t<R>>& acc) {
  Link next_link{};
  Psi next_psi{};
  bool next_crosses = false;
  if constexpr (K < 7) {
    next_link = ahead_link<K + 1, Rc>(a, x, cb);
    next_psi = ahead_spinor<K + 1>(a, x, next_crosses);
  }
  add_interior_hop<K, Dag>(a, x, link, psi, crosses, acc);
  if constexpr (K < 7) interior_hops_ahead<K + 1, Dag, Rc>(a, x, cb, next_link, next_psi, next_crosses, acc);
}
template <bool Dag, int Rc, typename R>
EMPRISM_HD inline void apply_interior_hops_ahead(const HoppingArg<R>& a, const int x[4], int cb,
                                                 Spinor<real_t<R>>& acc) {
  bool crosses = false;
  const auto psi = ahead_spinor<0>(a, x, crosses);
  interior_hops_ahead<0, Dag, Rc>(a, x, cb, ahead_link<0, Rc>(a, x, cb), psi, crosses, acc);
}

// acc += the hops of H (Dag = false) or H^dag (Dag = true) of the given part at site x (checkerboard cb), links of
// format Rc.
template <bool Dag, HopPart Part, int Rc, typename R>
EMPRISM_HD inline void apply_hopping(const HoppingArg<R>& a, const int x[4], int cb, Spinor<real_t<R>>& acc) {
  hop_direction<0, Dag, Part, Rc>(a, x, cb, acc);
  hop_direction<1, Dag, Part, Rc>(a, x, cb, acc);
  hop_direction<2, Dag, Part, Rc>(a, x, cb, acc);
  hop_direction<3, Dag, Part, Rc>(a, x, cb, acc);
}

// The fp32/fp64 operator's interior hops with links of 12, staged (apply_staged_hops): hop K + 1's neighbour spinor
// and stored link are copied into the block's staging buffer in the background (copy_async, kernels/backend/defs.hpp)
// while hop K computes, so that each thread has two hops' loads in flight without the registers to hold them: these
// kernels take 128 registers (16 warps per SM on sm_90) and wait on memory (ncu on an H200, BENCHMARKS.md,
// 2026-12-03). Hop K uses slot K % 2 of the thread: 9 blocks of 16 bytes (the spinor's 6, the link's 3) at a stride of
// kStageBlock; 36 KB of shared memory per block, for blocks of up to kStageBlock threads (larger ones take
// apply_hopping). The loads are unconditional (as apply_interior_hops_ahead's), the arithmetic and the order of the sum
// apply_hopping's: the same bits. H200, 2026-12-03 (BENCHMARKS.md), % of the peak with links of 12: eo_clover_f32d
// 87.0-87.3 -> 91.5-91.8, eo_clover_dag_f32d 87.0-87.2 -> 91.9-92.2, the fused update 85.4-85.7 -> 90.2-90.7 (the
// tuner chose blocks of 128); oe_clover_f32d takes 130 registers staged (12 warps per SM) and lost 4.5 points, but
// under the launch bound of its group (kernels/wilson_clover.hpp: kLaunchBoundInterior, 128 registers) gained 2.8-3.3.
// Links of 18 (at the L2 fabric's rate already) and AMD GPUs (not measured) keep apply_hopping. The CPU backend runs
// it with blocks of one thread (its tests).
constexpr int kStageBlock = 128;
constexpr int kStageSpinorBlocks = SpinorView<Fp32Fp64>::Stored::kBlocks;
constexpr int kStageHopBlocks = kStageSpinorBlocks + BlockedArray<LinkElement<float, 12>>::kBlocks;
static_assert(std::is_same_v<SpinorView<Fp32Fp64>::Stored::B, Block16> &&
                  std::is_same_v<BlockedArray<LinkElement<float, 12>>::B, Block16>,
              "the staged hops copy blocks of 16 bytes");

// Hop K's spinor and link copied into `slot` (block k at slot[k * kStageBlock]); crosses as lat.neighbour sets it.
template <int K, int Rc, typename R>
EMPRISM_HD inline void stage_hop(const HoppingArg<R>& a, const int x[4], int cb, Block16* slot, bool& crosses) {
  const int y = a.lat.neighbour(x, K / 2, K % 2 == 0 ? +1 : -1, crosses);
  a.in.stage(slot, kStageBlock, y);
  a.gauge.template view<Rc>().stage_stored(slot + kStageSpinorBlocks * kStageBlock, kStageBlock,
                                           K % 2 == 0 ? a.out_parity : 1 - a.out_parity, K % 2 == 0 ? cb : y, K / 2);
  copy_async_commit();
}
// Hop K from its slot (K % 2), once hop K + 1's copies are under way.
template <int K, bool Dag, int Rc, typename R>
EMPRISM_HD inline void staged_hops(const HoppingArg<R>& a, const int x[4], int cb, Block16* buf, bool crosses,
                                   Spinor<real_t<R>>& acc) {
  const Block16* slot = buf + (K % 2) * kStageHopBlocks * kStageBlock;
  copy_async_wait();
  const auto psi = SpinorView<R>::staged_stored(slot, kStageBlock);
  const auto link = GaugeView<store_t<R>, Rc>::staged_stored(slot + kStageSpinorBlocks * kStageBlock, kStageBlock);
  bool next_crosses = false;
  if constexpr (K < 7)
    stage_hop<K + 1, Rc>(a, x, cb, buf + ((K + 1) % 2) * kStageHopBlocks * kStageBlock, next_crosses);
  add_interior_hop<K, Dag>(a, x, link, psi, crosses, acc);
  if constexpr (K < 7) staged_hops<K + 1, Dag, Rc>(a, x, cb, buf, next_crosses, acc);
}
template <bool Dag, int Rc, typename R>
EMPRISM_HD inline void apply_staged_hops(const HoppingArg<R>& a, const int x[4], int cb, Spinor<real_t<R>>& acc) {
  if (stage_width() > kStageBlock) {
    apply_hopping<Dag, HopPart::Interior, Rc>(a, x, cb, acc);
    return;
  }
  Block16* const buf = stage_buffer<Block16, 2 * kStageHopBlocks * kStageBlock>() + stage_lane();
  bool crosses = false;
  stage_hop<0, Rc>(a, x, cb, buf, crosses);
  staged_hops<0, Dag, Rc>(a, x, cb, buf, crosses, acc);
}

}  // namespace emprism
