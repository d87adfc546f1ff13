// Reference Wilson-clover operator and free-field results, for tests only.
//
// Deliberately simple and slow: written straight from docs/conventions.md with std::complex<double>,
// explicit 4x4 gamma matrices built from the Pauli matrices, sigma_{mu nu} = (i/2)[gamma_mu, gamma_nu]
// by matrix products and the clover leaves Q_{mu nu} as the four written products. Full lattice,
// natural (lexicographic) order, no even-odd, no dependence on the production code.
//
// Conventions (the production code uses the same, so tests compare arrays element by element):
//   extents L = {Lx, Ly, Lz, Lt}, mu = 0,1,2,3 = x,y,z,t; site s = x + Lx*(y + Ly*(z + Lz*t)).
//   spinor field: size V*12, element (s*4 + spin)*3 + colour.
//   gauge links:  size V*4*9, element ((s*4 + mu)*3 + row)*3 + col; U_mu(x) links x to x+mu; periodic.
//   colour fields (gauge transformations W): size V*9, element (s*3 + row)*3 + col.
//   fermion boundary phases theta_mu: a hop crossing the global boundary forward in mu multiplies by
//   exp(i theta_mu), backward by exp(-i theta_mu).
//   M psi(x) = A(x) psi(x) - kappa * sum_mu [ (1 - gamma_mu) U_mu(x) psi(x+mu) + (1 + gamma_mu) U_mu(x-mu)^dag
//   psi(x-mu) ] A(x) = 1 + i csw kappa sum_{mu<nu} sigma_{mu nu} F_{mu nu}(x), F = (Q - Q^dag)/8 (no trace
//   subtraction).
//
// Who may call it: tests under tests/ only. Nothing in src/, kernels/, comm/ or io/ includes this file.
// All functions are pure (inputs by const reference, results returned by value); they throw
// std::invalid_argument on arrays of the wrong size.
#pragma once

#include <array>
#include <complex>
#include <vector>

namespace emprism::ref {

using Cd = std::complex<double>;
using Extents = std::array<int, 4>;
using Coords = std::array<int, 4>;
using Mat4 = std::array<Cd, 16>;  // 4x4 spin matrix, row-major: element row*4 + col
using Mat3 = std::array<Cd, 9>;   // 3x3 colour matrix, row-major: element row*3 + col

// ---- spin algebra ----
std::array<Mat4, 4> gamma();  // gamma_mu, mu = 0,1,2,3 = x,y,z,t (docs/conventions.md s. 3)
Mat4 gamma5();                // gamma_0 gamma_1 gamma_2 gamma_3 by matrix products (= diag(1,1,-1,-1))
Mat4 sigma(int mu, int nu);   // (i/2)[gamma_mu, gamma_nu]
Mat4 mat4_identity();
Mat4 mat4_mul(const Mat4& a, const Mat4& b);
Mat4 mat4_adjoint(const Mat4& a);
Mat4 mat4_inverse(const Mat4& a);  // Gaussian elimination with partial pivoting; throws std::domain_error if singular

// ---- geometry ----
int volume(const Extents& L);
int site_index(const Extents& L, const Coords& x);  // x taken modulo L (periodic wrap)
Coords site_coords(const Extents& L, int s);

// ---- fields ----
std::vector<Cd> unit_links(const Extents& L);
std::vector<Cd> random_su3_matrices(int count, unsigned seed);  // count*9, each in SU(3)
std::vector<Cd> random_su3_links(const Extents& L, unsigned seed);
std::vector<Cd> random_gauge_transform(const Extents& L, unsigned seed);  // V*9, W(x) in SU(3)
std::vector<Cd> random_spinor(const Extents& L, unsigned seed);           // gaussian complex entries
Cd inner_product(const std::vector<Cd>& a, const std::vector<Cd>& b);     // sum_i conj(a_i) b_i
double norm2(const std::vector<Cd>& a);                                   // sum_i |a_i|^2
std::vector<Cd> apply_gamma5(const std::vector<Cd>& psi);                 // gamma5 at every site

// ---- gauge field ----
double plaquette(const Extents& L, const std::vector<Cd>& links);  // mean over sites and 6 planes of Re tr P / 3
int plane_index(int mu, int nu);                                   // mu<nu -> 0..5: 01,02,03,12,13,23
// F_{mu nu}(x) = (Q - Q^dag)/8 for mu<nu: size V*6*9, element ((s*6 + plane_index(mu,nu))*3 + row)*3 + col.
std::vector<Cd> field_strength(const Extents& L, const std::vector<Cd>& links);
// U'_mu(x) = W(x) U_mu(x) W(x+mu)^dag.
std::vector<Cd> gauge_transform_links(const Extents& L, const std::vector<Cd>& links, const std::vector<Cd>& W);
// psi'(x) = W(x) psi(x) (on each spin component).
std::vector<Cd> gauge_transform_spinor(const Extents& L, const std::vector<Cd>& psi, const std::vector<Cd>& W);

// ---- operator ----
// H psi (the hopping term, without -kappa), with the boundary phases theta.
std::vector<Cd> apply_hopping(const Extents& L, const std::vector<Cd>& links, const std::array<double, 4>& theta,
                              const std::vector<Cd>& psi);
// A(x) as 12x12 matrices: size V*144, element (s*12 + spin*3 + colour)*12 + spin'*3 + colour'.
std::vector<Cd> clover_matrices(const Extents& L, const std::vector<Cd>& links, double kappa, double csw);
// A(x) psi(x) alone.
std::vector<Cd> apply_clover_term(const Extents& L, const std::vector<Cd>& links, double kappa, double csw,
                                  const std::vector<Cd>& psi);
// M psi = A psi - kappa H psi.
std::vector<Cd> apply_wilson_clover(const Extents& L, const std::vector<Cd>& links, double kappa, double csw,
                                    const std::array<double, 4>& theta, const std::vector<Cd>& psi);
// Dense M, N = 12V, row-major (element i*N + j = M_ij), built column by column with apply_wilson_clover.
// Tiny lattices only (memory N^2 * 16 bytes).
std::vector<Cd> dense_wilson_clover(const Extents& L, const std::vector<Cd>& links, double kappa, double csw,
                                    const std::array<double, 4>& theta);

// ---- free field (U = 1), momentum space ----
// M(p) = (1 - 2 kappa sum_mu cos p_mu) + 2 i kappa sum_mu gamma_mu sin p_mu (times colour identity).
Mat4 free_dirac_momentum(const std::array<double, 4>& p, double kappa);
// S(x) = M^{-1} delta_{x,x0} delta_{spin,s0} delta_{colour,c0}
//      = (1/V) sum_p exp(i p.(x - x0)) M(p)^{-1}, p_mu = (2 pi n_mu + theta_mu)/L_mu, returned as a spinor field.
std::vector<Cd> free_point_propagator(const Extents& L, double kappa, const std::array<double, 4>& theta,
                                      const Coords& x0, int spin, int colour);
// C[dt] = sum over spatial x, source and sink spin and colour of |S(x, t; x0)|^2 with t = (x0_t + dt) mod Lt;
// size Lt.
std::vector<double> free_pion_correlator(const Extents& L, double kappa, const std::array<double, 4>& theta,
                                         const Coords& x0);

}  // namespace emprism::ref
