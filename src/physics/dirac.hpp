// dirac.hpp: the even-odd Wilson-clover operator of docs/conventions.md sections 4, 6 on one precision R.
//   M       = [[A_ee, -kappa H_eo], [-kappa H_oe, A_oo]]                    apply_m (checks, true residual)
//   Mhat    = 1 - kappa^2 A_oo^-1 H_oe A_ee^-1 H_eo      (odd sites)        apply_mhat
//   Mhat^dag = 1 - kappa^2 H'_oe A_ee^-1 H'_eo A_oo^-1, H' = H^dag hops      apply_mhat_dag
//   bhat_o  = A_oo^-1 (b_o + kappa H_oe A_ee^-1 b_e)                         prepare_source
//   x_e     = A_ee^-1 (b_e + kappa H_eo x_o)                                 reconstruct
// The hot kernels (names as in the seeds): eo_clover = A_ee^-1 H_eo, oe_clover = x - kappa^2 A_oo^-1 H_oe t
// (also writing A_oo^-1 of its result for the following Mhat^dag), eo_clover_dag = A_ee^-1 H'_eo,
// oe_clover_dag = x - kappa^2 H'_oe t. Each launcher reports its flops and minimum bytes.
// Links: stored in the format params.reconstruct (18, 12 or 8 reals per link, kernels/link_format.hpp); the hopping
// kernels and the halo packing are instantiated per format (dslash and pack pick the one of the field), and their
// minimum bytes count the links of that format. The boundary phases multiply the hops after the link, so every
// format gives the operator of any theta.
// Distributed: every hopping kernel packs the spin-projected faces of its input on the streams of the halo
// transport (comm/halo_transport.hpp), runs the interior of the kernel on the compute stream while the faces
// travel, and finishes the boundary sites once they arrived (one fused exterior kernel, or one per direction);
// nothing waits for the device. When every partitioned direction goes by peer (the pack stores into the
// neighbours' buffers), the policy is "whole" instead: one pack launch for all directions and one kernel over all
// sites, both on the compute stream (comm/halo_policy.hpp says why and what that means for the bits). The metrics
// row of the kernel holds the compute stream's time from before the packing to after the last kernel. The halo
// policy (transport per direction, fused or split exterior) is tuned on the operator's first partitioned
// application, agreed by all ranks, reported and kept; every candidate gives bitwise the same result.
// The fp32 operator's kernels read its clover term A compressed (224 instead of 288 bytes per site) and solve for A^-1
// in registers (kernels/clover_dynamic.hpp; where EMPRISM_CLOVER_DYNAMIC: the CPU and NVIDIA GPUs); its A and A^-1 in
// fp32 are kept too (clover(): what the set-up builds and the conversions and tests read), the compressed form
// (dyn_) made from A once the operator is built.
// Precisions: R = double, float, Half (kernels/half.hpp: the spinors in 16-bit fixed point, arithmetic and links
// in fp32, A^-1 in 16-bit fixed point with a norm per chiral block (kernels/clover_half.hpp), A not kept (no kernel of
// the half operator reads it: only the CG's Mhat and Mhat^dag Mhat and the four hot kernels are instantiated, never
// apply_m, apply_mhat_dag, apply_clover, prepare_source or reconstruct); the sloppy operator of solver.sloppy = "half",
// built from a double operator, links of 18 or 12 reals), and Fp32Fp64 (kernels/half.hpp: every field stored in fp32,
// every arithmetic in fp64; the sloppy operator of solver.sloppy = "single_fp64", built like the half one, links of 18
// or 12 reals; its halo faces are exchanged in fp64, the precision its hops are computed in: no rounding of the hops
// that cross ranks and no format of its own in the packing kernels and the transport, for twice the face bytes of
// fp32, a small part of an application's; a boundary site's interior partial sum waits for the exterior kernel in the
// output field, rounded to fp32 like every stored field). Minimum bytes count each field in its stored format.
// Who may call: every rank of the process grid, in the same order (the halo exchange is collective; the
// constructor and the destructor are collective too when a direction is partitioned).
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "comm/halo_transport.hpp"
#include "kernels/halo_pack.hpp"
#include "kernels/wilson_clover.hpp"
#include "src/lattice/context.hpp"
#include "src/lattice/fields.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/clover.hpp"
#include "src/physics/clover_device.hpp"

namespace emprism {

// The operator's parameters. The input's defaults are not repeated here: the run fills every field from its
// configuration (src/run/parameters.cpp declares the input keys), and builds the clover term with the same kappa
// and csw (the constructor checks them).
struct DiracParams {
  double kappa = 0;
  double csw = 0;
  std::array<double, 4> theta{0, 0, 0, 0};  // boundary phases, radians
  // The format of the links: 18, 12 or 8 reals per link (kernels/link_format.hpp; 12 and 8 need SU(3) links:
  // check_link_format). The result is the same to rounding; the hopping kernels move fewer bytes.
  int reconstruct = 18;
  // The halo exchange's transport (comm.transport); "auto" tunes it on the operator's first use.
  TransportRequest transport;
  // Where the operator reports the halo policy it chose (the program: its log); empty: not reported.
  std::function<void(const std::string&)> report;
};

template <typename R>
class WilsonClover {
 public:
  // The links and the clover term built on the device from the host field (src/physics/clover_device.hpp).
  WilsonClover(Context& ctx, const Geometry& geom, const HostGauge& gauge, const DiracParams& params);
  // The same from a field on the device (src/physics/gauge_device.hpp), no host copy: the same bits.
  WilsonClover(Context& ctx, const Geometry& geom, const DeviceGauge& gauge, const DiracParams& params);
  // The links and the clover term of `other` rounded to R on the device (mixed precision: the inner operator from
  // the outer one; the same bits as building it from the gauge field).
  template <typename Ro>
  WilsonClover(Context& ctx, const WilsonClover<Ro>& other);
  // The links and a clover term built on the host (tests: the reference path), uploaded (links of 18 reals only).
  WilsonClover(Context& ctx, const Geometry& geom, const HostGauge& gauge, const HostClover& clover,
               const DiracParams& params);

  const Geometry& geometry() const { return geom_; }
  const DiracParams& params() const { return params_; }
  const GaugeField<store_t<R>>& links() const { return gauge_; }
  // [parity]; Half: A^-1 in 16 bits, A empty (CloverField<Half>: sites() 0).
  const CloverField<clover_store_t<R>>* clover(bool inverse) const { return inverse ? a_inv_ : a_; }
  Context& context() { return ctx_; }

  void apply_m(SpinorField<R>& out, const SpinorField<R>& in);
  void apply_mhat(ParitySpinor<R>& out, const ParitySpinor<R>& in);
  void apply_mhat_dag(ParitySpinor<R>& out, const ParitySpinor<R>& in);
  // out = Mhat^dag Mhat in (the CG operator); v receives Mhat in. With v_norm2 also this rank's |v|^2: oe_clover's
  // epilogue writes it per site and a reduction over those is enqueued without waiting (backend::wait_sums).
  void apply_mdagm(ParitySpinor<R>& out, ParitySpinor<R>& v, const ParitySpinor<R>& in,
                   backend::PendingSums* v_norm2 = nullptr);
  // apply_mdagm in two parts, for the CG's iteration with its residual update fused into the last kernel:
  // apply_mdagm_head enqueues v = Mhat in (with v_norm2 as apply_mdagm) and eo_clover_dag of A_oo^-1 v into the
  // operator's temporary; apply_mdagm_update, called next, enqueues r -= alpha Mhat^dag v in place
  // (oe_clover_dag_update: the vector Mhat^dag v is never stored; with partitioned directions through the halo
  // exchange, the boundary sites' partial sums in the operator's other temporary) and the sum of this rank's |r|^2
  // into r_norm2 (not waited for). scratch: any field apart from r and v, which the tuner's timing runs overwrite.
  void apply_mdagm_head(ParitySpinor<R>& v, const ParitySpinor<R>& in, backend::PendingSums* v_norm2);
  void apply_mdagm_update(ParitySpinor<R>& r, const ParitySpinor<R>& v, double alpha, ParitySpinor<R>& scratch,
                          backend::PendingSums* r_norm2);
  void prepare_source(ParitySpinor<R>& bhat, const SpinorField<R>& b);
  // x.odd given; fills x.even.
  void reconstruct(SpinorField<R>& x, const SpinorField<R>& b);

  // The halo policy in use ("" before the first partitioned application) and its per-direction statistics.
  std::string halo_policy() const;
  std::vector<HaloTransport::DirectionStats> halo_stats() { return transport_.stats(); }
  // Tests and benchmarks: the candidate policies, and one of them used from now on without tuning (collective:
  // every rank the same policy).
  const std::vector<HaloPolicy>& halo_candidates() const { return transport_.candidates(); }
  void use_halo_policy(const HaloPolicy& p) { transport_.set_policy(p); }

  // The four hot kernels on their own (what Mhat and Mhat^dag are made of):
  //   eo_clover      out_e = A_ee^-1 H_eo in_o        (dag: A_ee^-1 H'_eo in_o, "eo_clover_dag")
  //   oe_clover      out = x - kappa^2 A_oo^-1 H_oe t_e,  out2 = A_oo^-1 out  (site_norm[cb] = |out(cb)|^2)
  //   oe_clover_dag  out = x - kappa^2 H'_oe t_e
  void eo_clover(ParitySpinor<R>& out_e, const ParitySpinor<R>& in_o, bool dag);
  void oe_clover(ParitySpinor<R>& out, ParitySpinor<R>& out2, const ParitySpinor<R>& t_e, const ParitySpinor<R>& x,
                 double* site_norm = nullptr);
  void oe_clover_dag(ParitySpinor<R>& out, const ParitySpinor<R>& t_e, const ParitySpinor<R>& x);

  // out = A_p in, or A_p^-1 in.
  void apply_clover(ParitySpinor<R>& out, const ParitySpinor<R>& in, int parity, bool inverse);

 private:
  // Runs the hopping kernel with epilogue `epi` (its hop.in and out_parity set by make_arg).
  // bytes_per_site: the minimum bytes moved per output site besides the links (dslash adds the 8 links of the format).
  template <typename Epi>
  void dslash(const char* name, double flops_per_site, double bytes_per_site, const Epi& epi);
  // The same with the links' format Rc as a template parameter (the drivers' instantiation).
  template <int Rc, typename Epi>
  void dslash_of(const char* name, double flops_per_site, double bytes_per_site, const Epi& epi);
  // One partitioned application under the current policy: packs, interior, waits, exterior; or under a whole
  // policy packs, waits, one kernel over all sites. key: the interior or the whole kernel's tune key (hot kernels: a
  // tuned launch, kernels/tune.hpp).
  template <int Rc, typename Epi>
  void exchange_and_apply(Epi epi, const std::string& key);
  // Times every candidate policy on this application and keeps the one the ranks agree on.
  template <int Rc, typename Epi>
  void tune(const Epi& epi, const std::string& key);
  // The sum of site_norm_ (what oe_clover or oe_clover_dag_update wrote) on the device, not waited for; row name +
  // the precision's suffix.
  backend::PendingSums sum_site_norms(const char* name);
  // Everything but the links and the clover term (which the public constructors fill).
  WilsonClover(Context& ctx, const Geometry& geom, const DiracParams& params);
  DiracArg<R> make_arg(int out_parity, const ParitySpinor<R>& in) const;
  // oe_clover_dag's arguments (out = x - kappa^2 H'_oe t_e), which apply_mdagm_update extends.
  DiracArg<R> oe_clover_dag_arg(ParitySpinor<R>& out, const ParitySpinor<R>& t_e, const ParitySpinor<R>& x) const;
  // The kernels' view of A_p or A_p^-1 (fp32: of the compressed A in dyn_).
  clover_view_t<R> clover_arg(int parity, bool inverse) const;
  // fp32: dyn_ from a_ (the public constructors call it once a_ is filled); others: nothing.
  void compress_clover_term();
  template <int Rc>
  void pack(const SpinorView<R>& in, int in_parity, bool dag);
  template <int Rc>
  void pack_all(const HaloPackArg<R>& a, bool dag);  // every partitioned direction in one launch (whole policy)

  Context& ctx_;
  const Geometry& geom_;
  DiracParams params_;
  GaugeField<store_t<R>> gauge_;                    // Half, Fp32Fp64: links in fp32
  CloverField<clover_store_t<R>> a_[2], a_inv_[2];  // Fp32Fp64: in fp32; Half: A^-1 in 16 bits, A empty
  CloverField<CloverDynamic> dyn_[2];               // fp32: A compressed, what its kernels read (others: empty)
  ParitySpinor<R> tmp_e_, tmp_e2_, tmp_o_;
  std::array<Complex<real_t<R>>, 4> phase_;
  HaloTransport transport_;
  Buffer<int> boundary_[2];       // per output parity: the sites with a hop leaving the rank
  Buffer<int> face_sites_[2][4];  // per output parity and direction: (site, boundary index) on the boundary of mu
  Buffer<Spinor<real_t<R>>> halo_sums_;  // split exterior: the halo hops summed so far, per boundary site
  Buffer<double> site_norm_;             // oe_clover's |v|^2 or oe_clover_dag_update's |r|^2 per site
};

}  // namespace emprism
