// dirac_float.cpp: WilsonClover<float> and its construction from the double operator (mixed precision), from the
// definitions in src/physics/dirac_impl.hpp.
#include "src/physics/dirac_impl.hpp"

namespace emprism {

template class WilsonClover<float>;
template WilsonClover<float>::WilsonClover(Context&, const WilsonClover<double>&);

}  // namespace emprism
