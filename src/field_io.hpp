// field_io.hpp: conversion between parity spinor fields and the local natural order
// [t][z][y][x][spin][colour] (x fastest) of host arrays, std::complex<double>, used for sources, output
// and tests. With one rank the local natural order is the global natural order of docs/conventions.md section 1.
// The reordering runs over OpenMP threads on one host staging copy per parity, with no intermediate arrays: at
// 32^3x64 the former serial loops through parity-ordered vectors took about 0.9 s per field, five times a GPU solve.
// Who may call: host code on the rank owning the field.
#pragma once

#include <complex>
#include <vector>

#include "src/fields.hpp"

namespace emprism {

template <typename R>
std::vector<std::complex<double>> spinor_to_natural(const Geometry& g, const SpinorField<R>& f) {
  std::vector<std::complex<double>> nat(static_cast<std::size_t>(g.local_volume()) * 12);
  for (int parity = 0; parity < 2; ++parity) {
    f.parity(parity).read_sites([&](int cb, const Spinor<R>& s) {
      int x[4];
      g.arg().coords(cb, parity, x);
      std::complex<double>* out = &nat[static_cast<std::size_t>(g.local_lex(x)) * 12];
      for (int sp = 0; sp < 4; ++sp)
        for (int c = 0; c < 3; ++c) out[sp * 3 + c] = {double(s.s[sp].c[c].re), double(s.s[sp].c[c].im)};
    });
  }
  return nat;
}

template <typename R>
void spinor_from_natural(const Geometry& g, const std::vector<std::complex<double>>& nat, SpinorField<R>& f) {
  for (int parity = 0; parity < 2; ++parity) {
    f.parity(parity).write_sites([&](int cb) {
      int x[4];
      g.arg().coords(cb, parity, x);
      const std::complex<double>* in = &nat[static_cast<std::size_t>(g.local_lex(x)) * 12];
      Spinor<R> s;
      for (int sp = 0; sp < 4; ++sp)
        for (int c = 0; c < 3; ++c) s.s[sp].c[c] = {R(in[sp * 3 + c].real()), R(in[sp * 3 + c].imag())};
      return s;
    });
  }
}

}  // namespace emprism
