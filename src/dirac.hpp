// dirac.hpp: the even-odd Wilson-clover operator of docs/conventions.md sections 4, 6 on one precision R.
//   M       = [[A_ee, -kappa H_eo], [-kappa H_oe, A_oo]]                    apply_m (checks, true residual)
//   Mhat    = 1 - kappa^2 A_oo^-1 H_oe A_ee^-1 H_eo      (odd sites)        apply_mhat
//   Mhat^dag = 1 - kappa^2 H'_oe A_ee^-1 H'_eo A_oo^-1, H' = H^dag hops      apply_mhat_dag
//   bhat_o  = A_oo^-1 (b_o + kappa H_oe A_ee^-1 b_e)                         prepare_source
//   x_e     = A_ee^-1 (b_e + kappa H_eo x_o)                                 reconstruct
// The hot kernels (names as in the seeds): eo_clover = A_ee^-1 H_eo, oe_clover = x - kappa^2 A_oo^-1 H_oe t
// (also writing A_oo^-1 of its result for the following Mhat^dag), eo_clover_dag = A_ee^-1 H'_eo,
// oe_clover_dag = x - kappa^2 H'_oe t. Each launcher reports its flops and minimum bytes.
// Distributed: every hopping kernel packs the spin-projected faces of its input, starts the halo exchange,
// runs the interior of the kernel, waits, and finishes the boundary sites (overlap of communication and
// compute); the metrics row of the kernel holds the time of the whole sequence.
// Who may call: every rank of the process grid, in the same order (the halo exchange is collective).
#pragma once

#include <array>

#include "comm/halo_exchange.hpp"
#include "kernels/wilson_clover.hpp"
#include "src/clover.hpp"
#include "src/context.hpp"
#include "src/fields.hpp"
#include "src/gauge.hpp"

namespace emprism {

struct DiracParams {
  double kappa = 0.1;
  double csw = 0.0;
  std::array<double, 4> theta{0, 0, 0, 3.14159265358979323846};  // radians
  // GPU backends: hand device buffers to MPI directly (GPU-aware MPI) instead of staging them through pinned
  // host memory.
  bool gpu_aware_mpi = false;
};

template <typename R>
class WilsonClover {
 public:
  WilsonClover(Context& ctx, const Geometry& geom, const HostGauge& gauge, const HostClover& clover,
               const DiracParams& params);

  const Geometry& geometry() const { return geom_; }
  const DiracParams& params() const { return params_; }
  Context& context() { return ctx_; }

  void apply_m(SpinorField<R>& out, const SpinorField<R>& in);
  void apply_mhat(ParitySpinor<R>& out, const ParitySpinor<R>& in);
  void apply_mhat_dag(ParitySpinor<R>& out, const ParitySpinor<R>& in);
  // out = Mhat^dag Mhat in (the CG operator); v receives Mhat in.
  void apply_mdagm(ParitySpinor<R>& out, ParitySpinor<R>& v, const ParitySpinor<R>& in);
  void prepare_source(ParitySpinor<R>& bhat, const SpinorField<R>& b);
  // x.odd given; fills x.even.
  void reconstruct(SpinorField<R>& x, const SpinorField<R>& b);

  const HaloExchanger& halo() const { return halo_; }

  // The four hot kernels on their own (what Mhat and Mhat^dag are made of):
  //   eo_clover      out_e = A_ee^-1 H_eo in_o        (dag: A_ee^-1 H'_eo in_o, "eo_clover_dag")
  //   oe_clover      out = x - kappa^2 A_oo^-1 H_oe t_e,  out2 = A_oo^-1 out
  //   oe_clover_dag  out = x - kappa^2 H'_oe t_e
  void eo_clover(ParitySpinor<R>& out_e, const ParitySpinor<R>& in_o, bool dag);
  void oe_clover(ParitySpinor<R>& out, ParitySpinor<R>& out2, const ParitySpinor<R>& t_e, const ParitySpinor<R>& x);
  void oe_clover_dag(ParitySpinor<R>& out, const ParitySpinor<R>& t_e, const ParitySpinor<R>& x);

  // out = A_p in, or A_p^-1 in.
  void apply_clover(ParitySpinor<R>& out, const ParitySpinor<R>& in, int parity, bool inverse);

 private:
  // Runs the hopping kernel with epilogue `epi` (its hop.in and out_parity set by make_arg).
  template <typename Epi>
  void dslash(const char* name, double flops_per_site, double bytes_per_site, const Epi& epi);
  DiracArg<R> make_arg(int out_parity, const ParitySpinor<R>& in) const;
  void pack_and_start(const SpinorView<R>& in, int in_parity, bool dag);

  Context& ctx_;
  const Geometry& geom_;
  DiracParams params_;
  GaugeField<R> gauge_;
  CloverField<R> a_[2], a_inv_[2];
  ParitySpinor<R> tmp_e_, tmp_e2_, tmp_o_;
  std::array<Complex<R>, 4> phase_;
  HaloExchanger halo_;
  Buffer<HalfSpinor<R>> send_bwd_[4], send_fwd_[4], recv_fwd_[4], recv_bwd_[4];
  // Host staging of the faces when device memory is not host memory and MPI is not GPU-aware.
  struct Pinned {
    void* p = nullptr;
    ~Pinned() { backend::host_free_pinned(p); }
  };
  bool staged_ = false;
  Pinned host_send_bwd_[4], host_send_fwd_[4], host_recv_fwd_[4], host_recv_bwd_[4];
  void finish_exchange();
  Buffer<int> boundary_[2];
};

}  // namespace emprism
