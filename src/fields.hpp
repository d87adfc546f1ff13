// fields.hpp: fields own their memory and hand out views (kernels never own memory).
//   ParitySpinor<R>  spinors on the sites of one parity
//   SpinorField<R>   a full-lattice spinor as its even and odd halves
//   GaugeField<R>    the links U_mu(x) of both parities
//   CloverField<R>   A or A^-1, one CloverSite per site, per parity
// Host code fills fields through natural-order converters (field_io.hpp) or the host copies.
// Who may call: anyone; fields are rank-local.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/views.hpp"
#include "src/geometry.hpp"

namespace emprism {

// Owning storage of n elements of T (host memory in the CPU backend).
template <typename T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t n) : data_(n) {}
  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }
  std::size_t size() const { return data_.size(); }
  std::size_t bytes() const { return data_.size() * sizeof(T); }
  // Host copies (a memcpy on the CPU backend, a device transfer on GPU backends).
  std::vector<T> to_host() const { return data_; }
  void from_host(const std::vector<T>& h) { data_ = h; }

 private:
  std::vector<T> data_;
};

template <typename R>
class ParitySpinor {
 public:
  explicit ParitySpinor(const Geometry& g) : vh_(g.half_volume()), buf_(static_cast<std::size_t>(g.half_volume())) {}
  int sites() const { return vh_; }
  SpinorView<R> view() const { return SpinorView<R>{const_cast<Spinor<R>*>(buf_.data())}; }
  Buffer<Spinor<R>>& buffer() { return buf_; }
  const Buffer<Spinor<R>>& buffer() const { return buf_; }

 private:
  int vh_;
  Buffer<Spinor<R>> buf_;
};

template <typename R>
struct SpinorField {
  explicit SpinorField(const Geometry& g) : even(g), odd(g) {}
  ParitySpinor<R>& parity(int p) { return p == 0 ? even : odd; }
  const ParitySpinor<R>& parity(int p) const { return p == 0 ? even : odd; }
  ParitySpinor<R> even, odd;
};

template <typename R>
class GaugeField {
 public:
  explicit GaugeField(const Geometry& g) : vh_(g.half_volume()), buf_(static_cast<std::size_t>(g.half_volume()) * 8) {}
  GaugeView<R> view() const { return GaugeView<R>{const_cast<SU3<R>*>(buf_.data()), vh_}; }
  Buffer<SU3<R>>& buffer() { return buf_; }
  const Buffer<SU3<R>>& buffer() const { return buf_; }

 private:
  int vh_;
  Buffer<SU3<R>> buf_;
};

template <typename R>
class CloverField {
 public:
  explicit CloverField(const Geometry& g) : vh_(g.half_volume()), buf_(static_cast<std::size_t>(g.half_volume())) {}
  CloverView<R> view() const { return CloverView<R>{const_cast<CloverSite<R>*>(buf_.data())}; }
  Buffer<CloverSite<R>>& buffer() { return buf_; }

 private:
  int vh_;
  Buffer<CloverSite<R>> buf_;
};

}  // namespace emprism
