// propagator.hpp: the quark propagator S(x; x0) of a point (or smeared point) source on this rank's block, as
// the 12 solutions of M x = b for the source spin-colour columns b = delta(x, x0) delta(spin, s) delta(colour, c).
// Layout: column k = 3 * source_spin + source_colour holds one solution in local natural order (field_io.hpp):
//   S(x)[sink][source] = column[source][lex(x) * 12 + sink],  sink = 3 * sink_spin + sink_colour.
// Memory: 12 * local volume * 12 complex<double> (2304 bytes per site).
// Who may call: anyone on the rank (no MPI).
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <vector>

namespace emprism {

struct Propagator {
  std::array<std::vector<std::complex<double>>, 12> columns;  // each local_volume * 12, local natural order

  const std::complex<double>& at(std::int64_t lex, int sink, int source) const {
    return columns[static_cast<std::size_t>(source)][static_cast<std::size_t>(lex * 12 + sink)];
  }
};

}  // namespace emprism
