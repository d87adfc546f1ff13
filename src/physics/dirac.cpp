// dirac.cpp: WilsonClover<double> (src/physics/dirac_impl.hpp holds the definitions; the other precisions are
// instantiated in dirac_float.cpp, dirac_half.cpp and dirac_f32d.cpp, so that they compile in parallel).
#include "src/physics/dirac_impl.hpp"

namespace emprism {

template class WilsonClover<double>;
// The fp64 operator on the links and clover of an fp32 one (exact): the tests' reference for the fp32/fp64 operator.
template WilsonClover<double>::WilsonClover(Context&, const WilsonClover<float>&);

}  // namespace emprism
