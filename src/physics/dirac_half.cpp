// dirac_half.cpp: WilsonClover<Half>, the sloppy operator of the CG (solver.sloppy = "half"): only what the CG and
// the tests use, from the definitions in src/physics/dirac_impl.hpp.
#include "src/physics/dirac_impl.hpp"

namespace emprism {

template WilsonClover<Half>::WilsonClover(Context&, const WilsonClover<double>&);
template void WilsonClover<Half>::apply_mdagm(ParitySpinor<Half>&, ParitySpinor<Half>&, const ParitySpinor<Half>&,
                                              backend::PendingSums*);
template void WilsonClover<Half>::apply_mdagm_head(ParitySpinor<Half>&, const ParitySpinor<Half>&,
                                                   backend::PendingSums*);
template void WilsonClover<Half>::apply_mdagm_update(ParitySpinor<Half>&, const ParitySpinor<Half>&, double,
                                                     ParitySpinor<Half>&, backend::PendingSums*);
template void WilsonClover<Half>::apply_mhat(ParitySpinor<Half>&, const ParitySpinor<Half>&);
template void WilsonClover<Half>::eo_clover(ParitySpinor<Half>&, const ParitySpinor<Half>&, bool);
template void WilsonClover<Half>::oe_clover(ParitySpinor<Half>&, ParitySpinor<Half>&, const ParitySpinor<Half>&,
                                            const ParitySpinor<Half>&, double*);
template void WilsonClover<Half>::oe_clover_dag(ParitySpinor<Half>&, const ParitySpinor<Half>&,
                                                const ParitySpinor<Half>&);
template std::string WilsonClover<Half>::halo_policy() const;

}  // namespace emprism
