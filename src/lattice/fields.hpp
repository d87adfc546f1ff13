// fields.hpp: fields own their memory and hand out views (kernels never own memory).
//   Buffer<T>        n elements of raw device memory (host memory on the CPU backend), zeroed, move-only
//   ParitySpinor<R>  spinors on the sites of one parity; R = Half: 16-bit fixed point with a norm per chiral half
//                    (kernels/half.hpp), read and written as Spinor<float>; R = Fp32Fp64: fp32, read and written
//                    as Spinor<double>
//   SpinorField<R>   a full-lattice spinor as its even and odd halves
//   GaugeField<R>    the links U_mu(x) of both parities, 18, 12 or 8 reals per link (kernels/link_format.hpp)
//   DeviceGauge      the double links with their halo in the host field's layout (a field generated on the device)
//   CloverField<R>   A or A^-1, one CloverSite per site of one parity; R = Half (the half operator's A^-1): 16-bit
//                    fixed point with a norm per chiral block (kernels/clover_half.hpp), read as CloverSite<float>;
//                    default-constructed: empty (no memory); R = CloverDynamic (the fp32 operator's A, compressed:
//                    kernels/clover_dynamic.hpp): its views stand for A or A^-1, empty when default-constructed
// Host code reads and writes whole fields as element vectors in checkerboard order (download/upload): a host
// staging copy of the raw memory is read or filled through the same view type the kernels use, so only
// kernels/views.hpp knows the layout.
// Who may call: anyone; fields are rank-local.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kernels/backend/runtime.hpp"
#include "kernels/views.hpp"
#include "src/lattice/geometry.hpp"

namespace emprism {

template <typename T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t n) : n_(n) {
    if (n_ > 0) {
      ptr_ = static_cast<T*>(backend::device_alloc(bytes()));
      backend::device_zero(ptr_, bytes());
    }
  }
  ~Buffer() { backend::device_free(ptr_); }
  Buffer(Buffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      backend::device_free(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  // Raw copies of the whole buffer (no layout interpretation).
  void copy_to_host(void* dst) const { backend::copy_to_host(dst, ptr_, bytes()); }
  void copy_from_host(const void* src) { backend::copy_to_device(ptr_, src, bytes()); }
  void from_host(const std::vector<T>& v) {
    if (!v.empty()) copy_from_host(v.data());
  }

 private:
  T* ptr_ = nullptr;
  std::size_t n_ = 0;
};

// Host memory with the alignment of the views' blocks, for staging copies of n elements of T. Not initialised: the
// copy from the device, or the loop that fills it (in parallel), touches it first.
template <typename T>
std::unique_ptr<Block16[]> host_staging(std::size_t n) {
  return std::unique_ptr<Block16[]>(new Block16[(n * sizeof(T) + sizeof(Block16) - 1) / sizeof(Block16)]);
}

template <typename R>
class ParitySpinor {
 public:
  using Stored = Spinor<store_t<R>>;  // (Fp32Fp64: fp32 spinors, read and written as Spinor<double>)
  using Site = Spinor<real_t<R>>;
  explicit ParitySpinor(const Geometry& g) : vh_(g.half_volume()), buf_(tiled_sites(vh_)) {}
  int sites() const { return vh_; }
  SpinorView<R> view() const { return view_of(const_cast<Stored*>(buf_.data())); }
  Buffer<Stored>& buffer() { return buf_; }
  const Buffer<Stored>& buffer() const { return buf_; }

  std::vector<Site> download() const {
    std::vector<Site> out(static_cast<std::size_t>(vh_));
    read_sites([&](int i, const Site& s) { out[i] = s; });
    return out;
  }
  void upload(const std::vector<Site>& sites) {
    write_sites([&](int i) { return sites[i]; });
  }
  // fn(i, site) for every site i (in parallel over OpenMP threads), read from one host copy of the device data.
  template <typename Fn>
  void read_sites(Fn&& fn) const {
    auto stage = host_staging<Stored>(buf_.size());
    buf_.copy_to_host(stage.get());
    const SpinorView<R> v = view_of(reinterpret_cast<Stored*>(stage.get()));
#pragma omp parallel for schedule(static)
    for (int i = 0; i < vh_; ++i) fn(i, v.load(i));
  }
  // Site i = fn(i) for every site (in parallel over OpenMP threads), then one copy to the device.
  template <typename Fn>
  void write_sites(Fn&& fn) {
    auto stage = host_staging<Stored>(buf_.size());
    const SpinorView<R> v = view_of(reinterpret_cast<Stored*>(stage.get()));
    v.a.zero_padding(vh_);
#pragma omp parallel for schedule(static)
    for (int i = 0; i < vh_; ++i) v.store(i, fn(i));
    buf_.copy_from_host(stage.get());
  }

 private:
  SpinorView<R> view_of(Stored* p) const { return SpinorView<R>{BlockedArray<Stored>::of(p, vh_)}; }
  int vh_;
  Buffer<Stored> buf_;
};

template <>
class ParitySpinor<Half> {
 public:
  explicit ParitySpinor(const Geometry& g)
      : vh_(g.half_volume()), q_(2 * tiled_sites(vh_)), norm_(2 * static_cast<std::size_t>(vh_)) {}
  int sites() const { return vh_; }
  SpinorView<Half> view() const {
    return view_of(const_cast<ChiralHalf16*>(q_.data()), const_cast<float*>(norm_.data()));
  }
  std::size_t bytes() const { return q_.bytes() + norm_.bytes(); }

  std::vector<Spinor<float>> download() const {
    std::vector<Spinor<float>> out(static_cast<std::size_t>(vh_));
    auto q = host_staging<ChiralHalf16>(q_.size());
    std::vector<float> norm(norm_.size());
    q_.copy_to_host(q.get());
    norm_.copy_to_host(norm.data());
    const SpinorView<Half> v = view_of(reinterpret_cast<ChiralHalf16*>(q.get()), norm.data());
    for (int i = 0; i < vh_; ++i) out[i] = v.load(i);
    return out;
  }
  void upload(const std::vector<Spinor<float>>& sites) {
    auto q = host_staging<ChiralHalf16>(q_.size());
    std::vector<float> norm(norm_.size());
    const SpinorView<Half> v = view_of(reinterpret_cast<ChiralHalf16*>(q.get()), norm.data());
    for (int b = 0; b < 2; ++b) v.part(b).zero_padding(vh_);
    for (int i = 0; i < vh_; ++i) v.store(i, sites[i]);
    q_.copy_from_host(q.get());
    norm_.copy_from_host(norm.data());
  }

 private:
  SpinorView<Half> view_of(ChiralHalf16* q, float* norm) const {
    return SpinorView<Half>{reinterpret_cast<SpinorView<Half>::B*>(q), norm, vh_};
  }
  int vh_;
  Buffer<ChiralHalf16> q_;  // [chiral half][block][site] (kernels/views.hpp)
  Buffer<float> norm_;      // [chiral half][site]
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
  // reconstruct: the storage format of the links, 18, 12 or 8 reals per link (kernels/link_format.hpp).
  explicit GaugeField(const Geometry& g, int reconstruct = 18)
      : vh_(g.half_volume()), rc_(checked(reconstruct)), buf_(tiled_sites(vh_) * 8 * rc_) {}
  int reconstruct() const { return rc_; }
  // The view of the format Rc, which must be the field's.
  template <int Rc = 18>
  GaugeView<R, Rc> view() const {
    if (Rc != rc_) throw std::logic_error("GaugeField: a view of another format than the field's");
    return view_of<Rc>(const_cast<R*>(buf_.data()));
  }
  // The links for kernels (loaded as SU3<R>: kernels/views.hpp).
  LinksRef<R> links() const { return LinksRef<R>{const_cast<R*>(buf_.data()), vh_}; }
  std::size_t bytes() const { return buf_.bytes(); }
  // links in checkerboard order [parity][cb][mu] (18-real fields)
  void upload(const std::vector<SU3<R>>& links) {
    (void)view<18>();  // (the format check)
    auto stage = host_staging<R>(buf_.size());
    const GaugeView<R> v = view_of<18>(reinterpret_cast<R*>(stage.get()));
    for (int p = 0; p < 2; ++p)
      for (int mu = 0; mu < 4; ++mu) v.sub(p, mu).zero_padding(vh_);
    for (int p = 0; p < 2; ++p)
      for (int cb = 0; cb < vh_; ++cb)
        for (int mu = 0; mu < 4; ++mu) v.store(p, cb, mu, links[(static_cast<std::size_t>(p) * vh_ + cb) * 4 + mu]);
    buf_.copy_from_host(stage.get());
  }

 private:
  static int checked(int rc) {
    if (rc != 18 && rc != 12 && rc != 8) throw std::invalid_argument("GaugeField: reconstruct must be 18, 12 or 8");
    return rc;
  }
  template <int Rc>
  GaugeView<R, Rc> view_of(R* p) const {
    return GaugeView<R, Rc>{reinterpret_cast<typename GaugeView<R, Rc>::B*>(p), vh_};
  }
  int vh_;
  int rc_;
  Buffer<R> buf_;
};

// The double links U_mu(x) of a gauge field with their one-site halo on the device, in HostGauge's storage layout
// (src/lattice/gauge.hpp: [halo_index(x)][mu]; kernels/clover_build.hpp's ExtGaugeView): a field made on the device
// (src/physics/gauge_device.hpp) that the operator's fields and the smearing read where it is, without a host copy.
// g must outlive the field.
class DeviceGauge {
 public:
  explicit DeviceGauge(const Geometry& g) : geom_(&g), buf_(links_with_halo(g)) {}
  // Takes over buf, which must hold links_with_halo(g) links in this layout.
  DeviceGauge(const Geometry& g, Buffer<SU3<double>> buf) : geom_(&g), buf_(std::move(buf)) {
    if (buf_.size() != links_with_halo(g)) throw std::invalid_argument("DeviceGauge: a buffer of another size");
  }
  const Geometry& geometry() const { return *geom_; }
  SU3<double>* data() { return buf_.data(); }
  const SU3<double>* data() const { return buf_.data(); }
  std::size_t size() const { return buf_.size(); }
  std::size_t bytes() const { return buf_.bytes(); }
  Buffer<SU3<double>>& buffer() { return buf_; }
  const Buffer<SU3<double>>& buffer() const { return buf_; }

 private:
  static std::size_t links_with_halo(const Geometry& g) { return g.halo_box().sites() * 4; }
  const Geometry* geom_;
  Buffer<SU3<double>> buf_;
};

template <typename R>
class CloverField {
 public:
  explicit CloverField(const Geometry& g) : vh_(g.half_volume()), buf_(tiled_sites(vh_)) {}
  // The view for kernels, blocks loaded in T (the arithmetic, default R).
  template <typename T = R>
  CloverView<R, T> view() const {
    return CloverView<R, T>{view_of(const_cast<CloverSite<R>*>(buf_.data())).a};
  }
  void upload(const std::vector<CloverSite<R>>& sites) {
    auto stage = host_staging<CloverSite<R>>(buf_.size());
    const CloverView<R> v = view_of(reinterpret_cast<CloverSite<R>*>(stage.get()));
    v.a.zero_padding(vh_);
    for (int i = 0; i < vh_; ++i) v.store(i, sites[i]);
    buf_.copy_from_host(stage.get());
  }
  std::vector<CloverSite<R>> download() const {
    auto stage = host_staging<CloverSite<R>>(buf_.size());
    buf_.copy_to_host(stage.get());
    const CloverView<R> v = view_of(reinterpret_cast<CloverSite<R>*>(stage.get()));
    std::vector<CloverSite<R>> out(static_cast<std::size_t>(vh_));
    for (int i = 0; i < vh_; ++i) out[i] = v.load(i);
    return out;
  }

 private:
  CloverView<R> view_of(CloverSite<R>* p) const { return CloverView<R>{BlockedArray<CloverSite<R>>::of(p, vh_)}; }
  int vh_;
  Buffer<CloverSite<R>> buf_;
};

template <>
class CloverField<Half> {
 public:
  CloverField() = default;
  explicit CloverField(const Geometry& g)
      : vh_(g.half_volume()), q_(2 * tiled_sites(vh_)), norm_(2 * static_cast<std::size_t>(vh_)) {}
  int sites() const { return vh_; }
  std::size_t bytes() const { return q_.bytes() + norm_.bytes(); }
  template <typename T = Half>  // CloverView<Half, float>: the type of DiracArg<Half>::clover (the same view)
  CloverView<Half, T> view() const {
    return view_of<T>(const_cast<CloverBlock16*>(q_.data()), const_cast<float*>(norm_.data()));
  }
  std::vector<CloverSite<float>> download() const {
    auto q = host_staging<CloverBlock16>(q_.size());
    std::vector<float> norm(norm_.size());
    q_.copy_to_host(q.get());
    norm_.copy_to_host(norm.data());
    const CloverView<Half> v = view_of(reinterpret_cast<CloverBlock16*>(q.get()), norm.data());
    std::vector<CloverSite<float>> out(static_cast<std::size_t>(vh_));
    for (int i = 0; i < vh_; ++i) out[i] = v.load(i);
    return out;
  }

 private:
  template <typename T = Half>
  CloverView<Half, T> view_of(CloverBlock16* q, float* norm) const {
    CloverView<Half, T> v;
    v.q = reinterpret_cast<typename CloverView<Half, T>::B*>(q);
    v.norm = norm;
    v.sites = vh_;
    return v;
  }
  int vh_ = 0;
  Buffer<CloverBlock16> q_;  // [chiral block][8-byte block][site] (kernels/views.hpp)
  Buffer<float> norm_;       // [chiral block][site]
};

template <>
class CloverField<CloverDynamic> {
 public:
  CloverField() = default;
  explicit CloverField(const Geometry& g) : vh_(g.half_volume()), buf_(tiled_sites(vh_)) {}
  int sites() const { return vh_; }
  std::size_t bytes() const { return buf_.bytes(); }
  // The view standing for A (inverse false) or A^-1.
  CloverView<CloverDynamic, float> view(bool inverse) const {
    CloverView<CloverDynamic, float> v = view_of(const_cast<CloverSiteC*>(buf_.data()));
    v.inverse = inverse;
    return v;
  }
  // The sites of A or A^-1 in fp32 (host code and tests).
  std::vector<CloverSite<float>> download(bool inverse) const {
    auto stage = host_staging<CloverSiteC>(buf_.size());
    buf_.copy_to_host(stage.get());
    CloverView<CloverDynamic, float> v = view_of(reinterpret_cast<CloverSiteC*>(stage.get()));
    v.inverse = inverse;
    std::vector<CloverSite<float>> out(static_cast<std::size_t>(vh_));
    for (int i = 0; i < vh_; ++i) out[i] = v.load(i);
    return out;
  }

 private:
  CloverView<CloverDynamic, float> view_of(CloverSiteC* p) const {
    CloverView<CloverDynamic, float> v;
    v.a = BlockedArray<CloverSiteC>::of(p, vh_);
    return v;
  }
  int vh_ = 0;
  Buffer<CloverSiteC> buf_;
};

}  // namespace emprism
