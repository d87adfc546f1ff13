// stream.hpp: the functors of the empirical bandwidth measurement (copy, triad, read-only), as the seeds'
// mixbench: simple streams over arrays much larger than the caches. Who may call: src/physics/peak.cpp.
#pragma once

#include "kernels/blas.hpp"

namespace emprism {

struct CopyStream {
  const double* a;
  double* b;
  EMPRISM_HD void operator()(int i) const { b[i] = a[i]; }
};

struct TriadStream {
  double* a;
  const double* b;
  const double* c;
  double s;
  EMPRISM_HD void operator()(int i) const { a[i] = b[i] + s * c[i]; }
};

struct ReadStream {
  const double* a;
  EMPRISM_HD Sums<1> operator()(int i) const { return Sums<1>{{a[i]}}; }
};

}  // namespace emprism
