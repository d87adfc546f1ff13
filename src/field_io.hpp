// field_io.hpp: conversion between parity spinor fields and the local natural order
// [t][z][y][x][spin][colour] (x fastest) of host arrays, std::complex<double>, used for sources, output
// and tests. With one rank the local natural order is the global natural order of DESIGN.md section 5.
// Who may call: host code on the rank owning the field.
#pragma once

#include <complex>
#include <vector>

#include "src/fields.hpp"

namespace emprism {

template <typename R>
std::vector<std::complex<double>> spinor_to_natural(const Geometry& g, const SpinorField<R>& f) {
  std::vector<std::complex<double>> nat(static_cast<std::size_t>(g.local_volume()) * 12);
  const std::vector<Spinor<R>> h[2] = {f.even.download(), f.odd.download()};
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    const Spinor<R>& s = h[g.parity(x)][static_cast<std::size_t>(g.cb_index(x))];
    for (int sp = 0; sp < 4; ++sp)
      for (int c = 0; c < 3; ++c)
        nat[static_cast<std::size_t>(lex * 12 + sp * 3 + c)] = {double(s.s[sp].c[c].re), double(s.s[sp].c[c].im)};
  }
  return nat;
}

template <typename R>
void spinor_from_natural(const Geometry& g, const std::vector<std::complex<double>>& nat, SpinorField<R>& f) {
  std::vector<Spinor<R>> h[2] = {std::vector<Spinor<R>>(static_cast<std::size_t>(g.half_volume())),
                                 std::vector<Spinor<R>>(static_cast<std::size_t>(g.half_volume()))};
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    Spinor<R>& s = h[g.parity(x)][static_cast<std::size_t>(g.cb_index(x))];
    for (int sp = 0; sp < 4; ++sp)
      for (int c = 0; c < 3; ++c) {
        const auto v = nat[static_cast<std::size_t>(lex * 12 + sp * 3 + c)];
        s.s[sp].c[c] = {R(v.real()), R(v.imag())};
      }
  }
  f.even.upload(h[0]);
  f.odd.upload(h[1]);
}

}  // namespace emprism
