// dirac_f32d.cpp: WilsonClover<Fp32Fp64>, the sloppy operator of the CG with fp32 fields and fp64 arithmetic
// (solver.sloppy = "single_fp64"): only what the CG and the tests use, from the definitions in
// src/physics/dirac_impl.hpp (its own translation unit: the GPU compilers build it in parallel with the others).
#include "src/physics/dirac_impl.hpp"

namespace emprism {

template WilsonClover<Fp32Fp64>::WilsonClover(Context&, const WilsonClover<double>&);
template void WilsonClover<Fp32Fp64>::apply_mdagm(ParitySpinor<Fp32Fp64>&, ParitySpinor<Fp32Fp64>&,
                                                  const ParitySpinor<Fp32Fp64>&, backend::PendingSums*);
template void WilsonClover<Fp32Fp64>::apply_mdagm_head(ParitySpinor<Fp32Fp64>&, const ParitySpinor<Fp32Fp64>&,
                                                       backend::PendingSums*);
template void WilsonClover<Fp32Fp64>::apply_mdagm_update(ParitySpinor<Fp32Fp64>&, const ParitySpinor<Fp32Fp64>&, double,
                                                         ParitySpinor<Fp32Fp64>&, backend::PendingSums*);
template void WilsonClover<Fp32Fp64>::apply_mhat(ParitySpinor<Fp32Fp64>&, const ParitySpinor<Fp32Fp64>&);
template void WilsonClover<Fp32Fp64>::eo_clover(ParitySpinor<Fp32Fp64>&, const ParitySpinor<Fp32Fp64>&, bool);
template void WilsonClover<Fp32Fp64>::oe_clover(ParitySpinor<Fp32Fp64>&, ParitySpinor<Fp32Fp64>&,
                                                const ParitySpinor<Fp32Fp64>&, const ParitySpinor<Fp32Fp64>&, double*);
template void WilsonClover<Fp32Fp64>::oe_clover_dag(ParitySpinor<Fp32Fp64>&, const ParitySpinor<Fp32Fp64>&,
                                                    const ParitySpinor<Fp32Fp64>&);
template std::string WilsonClover<Fp32Fp64>::halo_policy() const;

}  // namespace emprism
