// views.hpp: non-owning, trivially-copyable views of field memory with load/store per site. The layout is a
// property of the view; kernels only call load/store. Blocked structure of arrays in tiles (the CPU backend and
// NVIDIA GPUs: EMPRISM_TILED_LAYOUT, kernels/backend/defs.hpp): an element of type T is kBlocks blocks of 16 (or 8, 4)
// bytes, the elements are grouped in tiles of kTileSites consecutive sites, and block k of element i lives at
//   data[(i / kTileSites) * kTileSites * kBlocks + k * kTileSites + i % kTileSites]
// so consecutive sites (GPU threads) read consecutive blocks (coalesced 16-byte loads), the blocks of one element
// lie at fixed distances (immediate offsets from one address per element), and a warp's whole element is one
// contiguous stretch of memory. An array of n elements takes tiled_sites(n) elements (n rounded up to whole tiles;
// the sites past n are never read by kernels). Against the untiled layout (block k of element i at data[k * n + i]) on
// an H200 (BENCHMARKS.md, 2026-11-29, 32^3x64): the same iterations and residuals; the fp32 hot kernels with links of
// 18 and 12 +0.7 to +3.2 points of the peak, the fp64 ones +2 to +6.6, with links of 8 -1.2 to +2, the fp32/fp64
// operator's +2 to +4 (oe_clover_dag_update_f32d with links of 12 -7 at first: 155 registers with its forward links'
// prefetch, which it no longer takes in this layout; kernels/wilson_clover.hpp); tiles of 32 and 128 sites alike, and
// an int block index like uint32_t. HIP on AMD GPUs keeps the untiled rows, block k of element i at
// data[k * stride + i] with stride = n (tiled_sites(n) = n there), addressed from a row start every thread shares plus
// a 32-bit byte offset (a scalar base and one vector offset per element on gfx90a instead of a 64-bit vector address).
//   spinor of one parity:  element = Spinor (fp32: 6 blocks of 16 B), n = sites of the parity
//   gauge, both parities:  element = one link in its format (SU3, or 12 or 8 reals: kernels/link_format.hpp),
//                          sub-array [parity][mu] of tiled_sites(sites of a parity) elements each
//   clover of one parity:  element = CloverSite (A or A^-1, 72 reals), n = sites of the parity
//   half clover:           per chiral block b, element = CloverBlock16 (9 blocks of 8 B), a sub-array of
//                          tiled_sites(sites of the parity) elements, the two blocks one after the other; then a float
//                          norm per (block, site) at norm[b * sites + i] (kernels/clover_half.hpp)
//   half spinor field:     per chiral half b, element = ChiralHalf16 (3 blocks of 8 B), a sub-array of
//                          tiled_sites(sites of the parity) elements, the two halves one after the other; then a float
//                          norm per (half, site) at norm[b * sites + i] (kernels/half.hpp)
//   fp32/fp64 spinor field (Fp32Fp64): the fp32 spinor layout; load widens to Spinor<double>, store rounds to float
//   compressed clover:     element = CloverSiteC (A of the fp32 operator, 2 x 28 reals: 14 blocks of 16 B), n = sites
//                          of the parity; a view stands for A or A^-1 (kernels/clover_dynamic.hpp)
// Links and clover are loaded streaming (read once per kernel, so they do not evict from L2 the spinors that eight
// sites read; the hot kernels' xpay inputs and results too): load_streaming, kernels/backend/defs.hpp, NVIDIA only.
// Clover views take the arithmetic type T as a second parameter (default: the stored one): loads widen the stored reals
// to T before any arithmetic, so the fp32/fp64 operator's kernels compute in fp64 on fp32 fields while the fp32 and
// fp64 kernels' code is unchanged. Links load in their stored precision (a packed link unpacked in it) and the products
// of kernels/su3.hpp widen each entry where it multiplies a wider spinor: the fp32/fp64 operator's link takes the 18
// registers of an SU3<float>, not the 36 of an SU3<double> (sm_90, 2026-11-24: its interior kernels with links of 12
// reals 152-166 -> 128 registers, two blocks of 256 per SM instead of one; unpacking in fp64, even with the result
// kept in fp32, took 152-166: the compiler keeps the widened rows). Its 12-real links' row 2 is thus the fp32
// operator's, computed in fp32: a rounding of the order of the storage's of rows 0 and 1.
// The same views read and write host staging copies (fields.hpp), so host code never assumes a layout.
// Who may call: kernels and host code that owns the memory.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/clover_block.hpp"
#include "kernels/clover_dynamic.hpp"
#include "kernels/clover_half.hpp"
#include "kernels/half.hpp"
#include "kernels/link_format.hpp"

namespace emprism {

// A rank holds at most 2^26 sites per parity (Geometry refuses more), so that a blocked array's blocks are counted by
// 32-bit indices (BlockedArray::at; the largest element, an fp64 clover site, has 36 blocks), a row's bytes by 32-bit
// offsets (the untiled layout), and kernels' site indices over both parities and chiral blocks (b * sites + i) fit
// an int.
constexpr std::int64_t kMaxParitySites = std::int64_t{1} << 26;

// Whether this build's fields are in tiles (EMPRISM_TILED_LAYOUT, kernels/backend/defs.hpp), and the sites of a tile
// (a power of two; a whole number of warps and of AMD wavefronts).
constexpr bool kTiledLayout = EMPRISM_TILED_LAYOUT != 0;
constexpr int kTileSites = 64;

// The elements an array of n sites takes: n rounded up to whole tiles (n itself in the untiled layout, whose
// kernels then compute their sub-arrays' starts as before the tiles: hipcc's VGPRs unchanged).
EMPRISM_HD constexpr std::int64_t tiled_sites(std::int64_t n) {
  return kTiledLayout ? (n + kTileSites - 1) / kTileSites * kTileSites : n;
}
// The same for a count of sites as the kernels hold it (0 <= n <= kMaxParitySites), in 32-bit unsigned arithmetic: the
// start of a sub-array (blocks_of below) in two instructions where the signed 64-bit division took about ten, which
// nvcc computed again at every hop (sm_90, with the cheaper index arithmetic of kernels/lattice_arg.hpp: eo_clover_half
// 3672 -> 3432 instructions, BENCHMARKS.md 2026-12-02).
EMPRISM_HD constexpr std::int64_t tiled_sites_of(int n) {
  return kTiledLayout ? std::int64_t((std::uint32_t(n) + (kTileSites - 1)) & ~std::uint32_t(kTileSites - 1)) : n;
}

struct alignas(16) Block16 {
  std::uint32_t w[4];
};
struct alignas(8) Block8 {
  std::uint32_t w[2];
};
struct alignas(4) Block4 {
  std::uint32_t w[1];
};

// The widest block that divides the element.
template <typename T>
using BlockOf =
    std::conditional_t<sizeof(T) % 16 == 0, Block16, std::conditional_t<sizeof(T) % 8 == 0, Block8, Block4>>;

template <typename T>
struct BlockedArray {
  using B = BlockOf<T>;
  static constexpr int kBlocks = static_cast<int>(sizeof(T) / sizeof(B));
  B* data = nullptr;
  int stride = 0;  // tiled_sites(n) for n elements (the untiled layout's row: n)

  // Block k of element i (the header's layout). Tiled: the element's first block by a 32-bit index (the array holds
  // fewer than 2^32 blocks: kMaxParitySites), the others at constant distances from it (immediate offsets). Untiled
  // (AMD GPUs): the row start data + k stride, the same for every thread, plus a 32-bit byte offset.
  EMPRISM_HD B& at(int k, int i) const {
    if constexpr (kTiledLayout) {
      const std::uint32_t lane = static_cast<std::uint32_t>(i) & (kTileSites - 1);
      return (data + ((static_cast<std::uint32_t>(i) - lane) * kBlocks + lane))[k * kTileSites];
    } else {
      char* row = reinterpret_cast<char*>(data + k * stride);
      return *reinterpret_cast<B*>(row + static_cast<std::uint32_t>(i) * static_cast<std::uint32_t>(sizeof(B)));
    }
  }
  // The array of n elements at p.
  static EMPRISM_HD BlockedArray of(void* p, int n) {
    return BlockedArray{static_cast<B*>(p), static_cast<int>(tiled_sites(n))};
  }
  // Host code: the padding (sites n to tiled_sites(n)) zeroed, so that a staging copy filled site by site carries no
  // uninitialised memory to the device.
  void zero_padding(int n) const {
    for (int i = n; i < stride; ++i)
      for (int k = 0; k < kBlocks; ++k) at(k, i) = B{};
  }
  // Blocks of an array of n elements, padding included (an int n, as in the kernels: tiled_sites_of).
  static constexpr std::int64_t blocks_of(std::int64_t n) { return tiled_sites(n) * kBlocks; }
  static EMPRISM_HD constexpr std::int64_t blocks_of(int n) { return tiled_sites_of(n) * kBlocks; }

  // Streaming: the element is read once by the kernel (load_streaming, kernels/backend/defs.hpp).
  template <bool Streaming = false>
  EMPRISM_HD T load(int i) const {
    union {
      T t;
      B b[kBlocks];
    } u;
    EMPRISM_UNROLL
    for (int k = 0; k < kBlocks; ++k) {
      if constexpr (Streaming && EMPRISM_STREAMING)
        u.b[k] = load_streaming(&at(k, i));
      else
        u.b[k] = at(k, i);
    }
    return u.t;
  }
  // Element i's blocks copied in the background to dst[k * stride] (copy_async, kernels/backend/defs.hpp: blocks of
  // 16 bytes), and an element read back from such a copy: the staged hops (kernels/hopping.hpp).
  EMPRISM_HD void copy_async_to(B* dst, int stride, int i, bool keep_in_l1) const {
    EMPRISM_UNROLL
    for (int k = 0; k < kBlocks; ++k) copy_async(dst + k * stride, &at(k, i), keep_in_l1);
  }
  static EMPRISM_HD T from_copy(const B* src, int stride) {
    union {
      T t;
      B b[kBlocks];
    } u;
    EMPRISM_UNROLL
    for (int k = 0; k < kBlocks; ++k) u.b[k] = src[k * stride];
    return u.t;
  }
  EMPRISM_HD void prefetch(int i) const {  // every block of element i into L2 (prefetch_l2: a hint)
    EMPRISM_UNROLL
    for (int k = 0; k < kBlocks; ++k) prefetch_l2(&at(k, i));
  }
  EMPRISM_HD void store(int i, const T& t) const {
    union {
      T t;
      B b[kBlocks];
    } u;
    u.t = t;
    EMPRISM_UNROLL
    for (int k = 0; k < kBlocks; ++k) at(k, i) = u.b[k];
  }
  // Part of an element: the P that starts at block `first` of element i (P spans whole blocks), so a kernel can
  // stream a large element (a clover site) through its registers piece by piece.
  template <typename P, bool Streaming = false>
  EMPRISM_HD P load_part(int i, int first) const {
    static_assert(sizeof(P) % sizeof(B) == 0, "a part spans whole blocks");
    union {
      P p;
      B b[sizeof(P) / sizeof(B)];
    } u;
    EMPRISM_UNROLL
    for (int k = 0; k < static_cast<int>(sizeof(P) / sizeof(B)); ++k) {
      if constexpr (Streaming && EMPRISM_STREAMING)
        u.b[k] = load_streaming(&at(first + k, i));
      else
        u.b[k] = at(first + k, i);
    }
    return u.p;
  }
  template <typename P, bool Streaming = false>
  EMPRISM_HD void store_part(int i, int first, const P& p) const {
    static_assert(sizeof(P) % sizeof(B) == 0, "a part spans whole blocks");
    union {
      P p;
      B b[sizeof(P) / sizeof(B)];
    } u;
    u.p = p;
    EMPRISM_UNROLL
    for (int k = 0; k < static_cast<int>(sizeof(P) / sizeof(B)); ++k) {
      if constexpr (Streaming && EMPRISM_STREAMING)
        store_streaming(&at(first + k, i), u.b[k]);
      else
        at(first + k, i) = u.b[k];
    }
  }
};

static_assert(BlockedArray<CloverSite<double>>::blocks_of(kMaxParitySites) <= (std::int64_t{1} << 32),
              "the largest blocked array's blocks must be counted by 32-bit indices");

// x with each real converted to To (exact when To is the wider type). F: Spinor, HalfSpinor, CloverBlock.
template <typename To, template <typename> class F, typename From>
EMPRISM_HD inline F<To> convert_reals(const F<From>& x) {
  constexpr int n = static_cast<int>(sizeof(F<From>) / sizeof(From));
  const From* a = reinterpret_cast<const From*>(&x);
  F<To> y;
  To* b = reinterpret_cast<To*>(&y);
  EMPRISM_UNROLL
  for (int k = 0; k < n; ++k) b[k] = static_cast<To>(a[k]);
  return y;
}

// A chiral half of a spinor (spins 2b, 2b+1; b = 0 upper, 1 lower) has the shape of a HalfSpinor.
template <typename R>
struct SpinorView {
  BlockedArray<Spinor<R>> a;
  static constexpr int kHalfBlocks = BlockedArray<Spinor<R>>::kBlocks / 2;
  EMPRISM_HD Spinor<R> load(int cb) const { return a.load(cb); }
  EMPRISM_HD void store(int cb, const Spinor<R>& v) const { a.store(cb, v); }
  EMPRISM_HD HalfSpinor<R> load_half(int cb, int b) const {
    return a.template load_part<HalfSpinor<R>>(cb, b * kHalfBlocks);
  }
  // The same for a field the kernel reads once per site (the xpay input): a streaming load (load_streaming).
  EMPRISM_HD HalfSpinor<R> load_half_once(int cb, int b) const {
    return a.template load_part<HalfSpinor<R>, true>(cb, b * kHalfBlocks);
  }
  EMPRISM_HD void store_half(int cb, int b, const HalfSpinor<R>& h) const {
    a.template store_part<HalfSpinor<R>>(cb, b * kHalfBlocks, h);
  }
  // The same for a kernel's final result (the hot kernels' epilogues): a streaming store (store_streaming).
  EMPRISM_HD void store_half_final(int cb, int b, const HalfSpinor<R>& h) const {
    a.template store_part<HalfSpinor<R>, true>(cb, b * kHalfBlocks, h);
  }
};

// Spinors in half (kernels/half.hpp): load and store convert from and to Spinor<float>, so kernels see fp32 spinors.
template <>
struct SpinorView<Half> {
  using B = BlockOf<ChiralHalf16>;
  B* data = nullptr;
  float* norm = nullptr;
  int sites = 0;
  EMPRISM_HD BlockedArray<ChiralHalf16> part(int b) const {
    return BlockedArray<ChiralHalf16>::of(data + b * BlockedArray<ChiralHalf16>::blocks_of(sites), sites);
  }
  EMPRISM_HD HalfSpinor<float> load_half(int cb, int b) const {
    return dequantize(part(b).load(cb), norm[b * sites + cb]);
  }
  EMPRISM_HD HalfSpinor<float> load_half_once(int cb, int b) const { return load_half(cb, b); }  // (not measured)
  EMPRISM_HD void store_half_final(int cb, int b, const HalfSpinor<float>& h) const { store_half(cb, b, h); }
  EMPRISM_HD void store_half(int cb, int b, const HalfSpinor<float>& h) const {
    float m;
    const ChiralHalf16 q = quantize(h, m);
    part(b).store(cb, q);
    norm[b * sites + cb] = m;
  }
  EMPRISM_HD Spinor<float> load(int cb) const {
    const HalfSpinor<float> u = load_half(cb, 0), l = load_half(cb, 1);
    return Spinor<float>{{u.h[0], u.h[1], l.h[0], l.h[1]}};
  }
  EMPRISM_HD void store(int cb, const Spinor<float>& v) const {
    store_half(cb, 0, chiral_half(v, 0));
    store_half(cb, 1, chiral_half(v, 1));
  }
};

// Spinors of the fp32/fp64 precision: stored as fp32 spinors, loaded as Spinor<double> (exact), stored rounded to
// float.
template <>
struct SpinorView<Fp32Fp64> {
  BlockedArray<Spinor<float>> a;
  static constexpr int kHalfBlocks = BlockedArray<Spinor<float>>::kBlocks / 2;
  EMPRISM_HD Spinor<double> load(int cb) const { return convert_reals<double>(a.load(cb)); }
  EMPRISM_HD void store(int cb, const Spinor<double>& v) const { a.store(cb, convert_reals<float>(v)); }
  EMPRISM_HD HalfSpinor<double> load_half(int cb, int b) const {
    return convert_reals<double>(a.template load_part<HalfSpinor<float>>(cb, b * kHalfBlocks));
  }
  EMPRISM_HD void store_half(int cb, int b, const HalfSpinor<double>& h) const {
    a.template store_part<HalfSpinor<float>>(cb, b * kHalfBlocks, convert_reals<float>(h));
  }
  // Streaming, as SpinorView<R>'s.
  EMPRISM_HD HalfSpinor<double> load_half_once(int cb, int b) const {
    return convert_reals<double>(a.template load_part<HalfSpinor<float>, true>(cb, b * kHalfBlocks));
  }
  EMPRISM_HD void store_half_final(int cb, int b, const HalfSpinor<double>& h) const {
    a.template store_part<HalfSpinor<float>, true>(cb, b * kHalfBlocks, convert_reals<float>(h));
  }
  // The staged hops' copy of site cb (kept in L1 too: eight sites read it) and the stored spinor read back from it
  // (the caller widens it where it uses it, as load does).
  using Stored = BlockedArray<Spinor<float>>;
  EMPRISM_HD void stage(Stored::B* dst, int stride, int cb) const { a.copy_async_to(dst, stride, cb, true); }
  static EMPRISM_HD Spinor<float> staged_stored(const Stored::B* src, int stride) {
    return Stored::from_copy(src, stride);
  }
};

// The links of both parities in the format Rc (kernels/link_format.hpp) stored in R: load unpacks to a full SU3<R> (in
// R), store packs (in R); load_packed and store_packed move the stored element itself.
template <typename R, int Rc = 18>
struct GaugeView {
  using Element = LinkElement<R, Rc>;
  using B = BlockOf<Element>;
  static constexpr int kBlocks = BlockedArray<Element>::kBlocks;
  B* data = nullptr;
  int vh = 0;
  // The sub-array's start: fp32 links' in 32-bit arithmetic (blocks_of(int)), fp64's in 64-bit. nvcc (sm_90,
  // 2026-12-02) with both in 32-bit: fp64's interior oe_clover with links of 18 at 243 registers (budget 240) and 28
  // bytes of spills in its fused update with links of 8; with both in 64-bit: the fp32/fp64 operator's interior
  // oe_clover with links of 12 at 130 (budget 128).
  EMPRISM_HD BlockedArray<Element> sub(int parity, int mu) const {
    using Count = std::conditional_t<std::is_same_v<R, double>, std::int64_t, int>;
    return BlockedArray<Element>::of(data + (parity * 4 + mu) * BlockedArray<Element>::blocks_of(Count{vh}), vh);
  }
  // The stored element as the hopping kernels read it (streaming: each link is read by few sites), for unpack_link.
  EMPRISM_HD Element load_stored(int parity, int cb, int mu) const { return sub(parity, mu).template load<true>(cb); }
  EMPRISM_HD SU3<R> load(int parity, int cb, int mu) const {
    if constexpr (Rc == 18) {
      return load_stored(parity, cb, mu);
    } else {
      return unpack_link(load_stored(parity, cb, mu));
    }
  }
  EMPRISM_HD void store(int parity, int cb, int mu, const SU3<R>& u) const {
    sub(parity, mu).store(cb, pack_link<Rc>(u));
  }
  // The staged hops' copy of the stored element (L2 only: one site reads it) and the element read back from it.
  EMPRISM_HD void stage_stored(B* dst, int stride, int parity, int cb, int mu) const {
    sub(parity, mu).copy_async_to(dst, stride, cb, false);
  }
  static EMPRISM_HD Element staged_stored(const B* src, int stride) {
    return BlockedArray<Element>::from_copy(src, stride);
  }
  EMPRISM_HD Element load_packed(int parity, int cb, int mu) const { return sub(parity, mu).load(cb); }
  EMPRISM_HD void store_packed(int parity, int cb, int mu, const Element& e) const { sub(parity, mu).store(cb, e); }
};

// The links in whichever format, for kernel arguments: the format is a template parameter of the kernel (its drivers
// in kernels/wilson_clover.hpp, kernels/halo_pack.hpp), which takes its view with links.view<Rc>().
// Links stored in R, loaded as SU3<R>.
template <typename R>
struct LinksRef {
  void* data = nullptr;
  int vh = 0;
  template <int Rc>
  EMPRISM_HD GaugeView<R, Rc> view() const {
    return GaugeView<R, Rc>{static_cast<typename GaugeView<R, Rc>::B*>(data), vh};
  }
};

// A clover field stored in R; load_block gives the block in T (widened from R).
template <typename R, typename T = R>
struct CloverView {
  BlockedArray<CloverSite<R>> a;
  static constexpr int kBlockBlocks = BlockedArray<CloverSite<R>>::kBlocks / 2;
  EMPRISM_HD CloverSite<R> load(int cb) const { return a.template load<true>(cb); }
  // The 6x6 block b (acting on spins 2b, 2b+1) alone: half the registers of the whole site.
  EMPRISM_HD CloverBlock<T> load_block(int cb, int b) const {
    return widen(a.template load_part<CloverBlock<R>, true>(cb, b * kBlockBlocks));
  }
  // The same for a block the kernel reads again soon (a plain load: a streaming one would mark it for eviction first,
  // and the second read would come from memory; oe_clover 0.50 -> 0.55 ms at 32^3x64 on an H100).
  EMPRISM_HD CloverBlock<T> load_block_kept(int cb, int b) const {
    return widen(a.template load_part<CloverBlock<R>>(cb, b * kBlockBlocks));
  }
  EMPRISM_HD void store(int cb, const CloverSite<R>& c) const { a.store(cb, c); }
  EMPRISM_HD void store_block(int cb, int b, const CloverBlock<R>& m) const {
    a.template store_part<CloverBlock<R>>(cb, b * kBlockBlocks, m);
  }
  // A stored block in the arithmetic type T.
  static EMPRISM_HD CloverBlock<T> widen(const CloverBlock<R>& m) {
    if constexpr (std::is_same_v<R, T>) {
      return m;
    } else {
      return convert_reals<T>(m);
    }
  }
};

// The clover term of the half operator (A^-1 only) in 16-bit fixed point (kernels/clover_half.hpp): load_block returns
// the block as stored with its scale, which block_mul multiplies with directly; load returns both blocks in fp32 (host
// code and tests).
template <typename T>
struct CloverView<Half, T> {  // (T: the arithmetic, always fp32 here; the parameter of the generic view)
  using B = BlockOf<CloverBlock16>;
  B* q = nullptr;
  float* norm = nullptr;
  int sites = 0;
  EMPRISM_HD BlockedArray<CloverBlock16> part(int b) const {
    return BlockedArray<CloverBlock16>::of(q + b * BlockedArray<CloverBlock16>::blocks_of(sites), sites);
  }
  EMPRISM_HD CloverBlockQ load_block(int cb, int b) const {  // streaming, as CloverView<R>::load_block
    return CloverBlockQ{part(b).template load<true>(cb), norm[b * sites + cb] * (1.0f / kHalfScale)};
  }
  EMPRISM_HD CloverBlockQ load_block_kept(int cb, int b) const {
    return CloverBlockQ{part(b).load(cb), norm[b * sites + cb] * (1.0f / kHalfScale)};
  }
  EMPRISM_HD void store_block(int cb, int b, const CloverBlock<float>& m) const {
    float n;
    const CloverBlock16 v = quantize_block(m, n);
    part(b).store(cb, v);
    norm[b * sites + cb] = n;
  }
  EMPRISM_HD CloverSite<float> load(int cb) const {
    return CloverSite<float>{{dequantize_block(load_block(cb, 0)), dequantize_block(load_block(cb, 1))}};
  }
};

// The fp32 operator's clover term, A compressed (kernels/clover_dynamic.hpp). A view stands for A or for A^-1 (inverse,
// set by the operator per launch): load_block returns the stored block with that role, which block_mul multiplies
// with (A^-1: a solve in registers); load returns the explicit site in fp32 (host code and tests).
template <typename T>
struct CloverView<CloverDynamic, T> {  // (T: the arithmetic, fp32; the parameter of the generic view)
  BlockedArray<CloverSiteC> a;
  bool inverse = false;
  static constexpr int kBlockBlocks = BlockedArray<CloverSiteC>::kBlocks / 2;
  EMPRISM_HD CloverBlockDyn load_block(int cb, int b) const {  // streaming, as CloverView<R>::load_block
    return CloverBlockDyn{a.template load_part<CloverBlockC, true>(cb, b * kBlockBlocks), inverse};
  }
  EMPRISM_HD CloverBlockDyn load_block_kept(int cb, int b) const {
    return CloverBlockDyn{a.template load_part<CloverBlockC>(cb, b * kBlockBlocks), inverse};
  }
  EMPRISM_HD void store_compressed(int cb, const CloverSiteC& c) const { a.store(cb, c); }
  // The site's blocks of A or A^-1 (by columns: A^-1 e_j solved for each unit vector e_j).
  EMPRISM_HD CloverSite<float> load(int cb) const {
    CloverSite<float> out;
    for (int b = 0; b < 2; ++b) {
      const CloverBlockDyn m = load_block_kept(cb, b);
      HalfSpinor<float> col[6];
      for (int j = 0; j < 6; ++j) {
        HalfSpinor<float> e{};
        e.h[j / 3].c[j % 3] = {1.0f, 0.0f};
        col[j] = block_mul(m, e);
      }
      for (int i = 0; i < 6; ++i) {
        out.b[b].diag[i] = col[i].h[i / 3].c[i % 3].re;
        for (int j = 0; j < i; ++j) out.b[b].lower[tri_index(i, j)] = col[j].h[i / 3].c[i % 3];
      }
    }
    return out;
  }
};

}  // namespace emprism
