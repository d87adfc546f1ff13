// views.hpp: non-owning, trivially-copyable views of field memory with load/store per site. The layout is a
// property of the view; kernels only call load/store. One layout for every backend, blocked structure of
// arrays: an element of type T is kBlocks blocks of 16 (or 8, 4) bytes, and block k of element i lives at
// data[k * stride + i], so consecutive sites (GPU threads) read consecutive blocks (coalesced 16-byte loads).
//   spinor of one parity:  element = Spinor (fp32: 6 blocks of 16 B), stride = sites of the parity
//   gauge, both parities:  element = SU3 link, sub-array [parity][mu], each with stride = sites of a parity
//   clover of one parity:  element = CloverSite (A or A^-1, 72 reals), stride = sites of the parity
// The same views read and write host staging copies (fields.hpp), so host code never assumes a layout.
// Who may call: kernels and host code that owns the memory.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/clover_block.hpp"

namespace emprism {

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
  int stride = 0;

  EMPRISM_HD T load(int i) const {
    union {
      T t;
      B b[kBlocks];
    } u;
    EMPRISM_UNROLL
    for (int k = 0; k < kBlocks; ++k) u.b[k] = data[k * stride + i];
    return u.t;
  }
  EMPRISM_HD void store(int i, const T& t) const {
    union {
      T t;
      B b[kBlocks];
    } u;
    u.t = t;
    EMPRISM_UNROLL
    for (int k = 0; k < kBlocks; ++k) data[k * stride + i] = u.b[k];
  }
};

template <typename R>
struct SpinorView {
  BlockedArray<Spinor<R>> a;
  EMPRISM_HD Spinor<R> load(int cb) const { return a.load(cb); }
  EMPRISM_HD void store(int cb, const Spinor<R>& v) const { a.store(cb, v); }
};

template <typename R>
struct GaugeView {
  using B = BlockOf<SU3<R>>;
  static constexpr int kBlocks = BlockedArray<SU3<R>>::kBlocks;
  B* data = nullptr;
  int vh = 0;
  EMPRISM_HD BlockedArray<SU3<R>> sub(int parity, int mu) const {
    return BlockedArray<SU3<R>>{data + static_cast<std::int64_t>(parity * 4 + mu) * kBlocks * vh, vh};
  }
  EMPRISM_HD SU3<R> load(int parity, int cb, int mu) const { return sub(parity, mu).load(cb); }
  EMPRISM_HD void store(int parity, int cb, int mu, const SU3<R>& u) const { sub(parity, mu).store(cb, u); }
};

template <typename R>
struct CloverView {
  BlockedArray<CloverSite<R>> a;
  EMPRISM_HD CloverSite<R> load(int cb) const { return a.load(cb); }
  EMPRISM_HD void store(int cb, const CloverSite<R>& c) const { a.store(cb, c); }
};

}  // namespace emprism
