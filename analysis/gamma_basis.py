"""gamma_basis.py: the Euclidean gamma matrices of EmPRiSM-MPI and of the DeGrand-Rossi basis, and the unitary basis
change between them, computed (not written in) from the two sets of matrices.

  OURS[mu], mu = 0..3 (x, y, z, t): docs/conventions.md section 3 (chiral: gamma_5 = gamma_1 gamma_2 gamma_3 gamma_4
      = diag(1, 1, -1, -1));
  DEGRAND_ROSSI[mu]: the DeGrand-Rossi basis of QUDA (QUDA_DEGRAND_ROSSI_GAMMA_BASIS), Chroma and PyQUDA, as
      PyQUDA writes it out (CLQCD/PyQUDA, pyquda_utils/gamma.py, class GammaMatrix: gamma_1 .. gamma_4). It differs
      from ours in the signs of gamma_1 and gamma_3 (x and z); gamma_2, gamma_4 and gamma_5 = gamma_1 gamma_2
      gamma_3 gamma_4 = diag(1, 1, -1, -1) are the same matrices.
  basis_change(src, dst) -> U, unitary, with dst[mu] = U src[mu] U^dag for every mu: the null space of the linear
      maps X -> dst[mu] X - X src[mu] (one dimension: the Clifford algebra's 4-d representation is irreducible, so U
      is unique up to a phase, which is fixed by making the first largest entry real and positive; a phase cancels
      in U S U^dag anyway). Raises ValueError unless the null space is one-dimensional and U maps every matrix.
  gamma5(g) = g[0] g[1] g[2] g[3]; product(names, g) for the channel names of section 3 ("g5", "g4g5", "gi" ...).
A propagator S(x, y) (sink spin by source spin) becomes U S U^dag in the new basis: the operator of section 4 has
the same form, H = sum_mu (1 - gamma_mu) U psi(x + mu) + (1 + gamma_mu) U^dag psi(x - mu), in both.
Who may call: export_propagator.py and the tests; pure functions.
"""
import numpy as np

I = 1j
OURS = np.array([
    [[0, 0, 0, -I], [0, 0, -I, 0], [0, I, 0, 0], [I, 0, 0, 0]],
    [[0, 0, 0, -1], [0, 0, 1, 0], [0, 1, 0, 0], [-1, 0, 0, 0]],
    [[0, 0, -I, 0], [0, 0, 0, I], [I, 0, 0, 0], [0, -I, 0, 0]],
    [[0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0], [0, 1, 0, 0]],
], dtype=complex)

DEGRAND_ROSSI = np.array([
    [[0, 0, 0, I], [0, 0, I, 0], [0, -I, 0, 0], [-I, 0, 0, 0]],
    [[0, 0, 0, -1], [0, 0, 1, 0], [0, 1, 0, 0], [-1, 0, 0, 0]],
    [[0, 0, I, 0], [0, 0, 0, -I], [-I, 0, 0, 0], [0, I, 0, 0]],
    [[0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0], [0, 1, 0, 0]],
], dtype=complex)

TOLERANCE = 1e-12


def gamma5(g):
    """gamma_5 = gamma_1 gamma_2 gamma_3 gamma_4 of a set of matrices g[0..3]."""
    return g[0] @ g[1] @ g[2] @ g[3]


def product(name, g):
    """The matrices of a channel name of docs/conventions.md section 3, as a list (one, or three for the averaged
    gi, gig4, gig5): "1", "g5", "g4g5", "gi", "gig4", "gig5"."""
    one, g5 = np.eye(4, dtype=complex), gamma5(g)
    table = {"1": [one], "g5": [g5], "g4g5": [g[3] @ g5], "gi": [g[i] for i in range(3)],
             "gig4": [g[i] @ g[3] for i in range(3)], "gig5": [g[i] @ g5 for i in range(3)]}
    if name not in table:
        raise ValueError(f"unknown gamma structure '{name}' (one of {', '.join(table)})")
    return table[name]


def basis_change(src, dst):
    """The unitary U with dst[mu] = U src[mu] U^dag for mu = 0..3 (see the module's description)."""
    eye = np.eye(4)
    # Row-major vec: vec(A X B) = kron(A, B^T) vec(X); dst X - X src = 0 for every mu.
    system = np.concatenate([np.kron(dst[mu], eye) - np.kron(eye, src[mu].T) for mu in range(4)])
    _, sv, vh = np.linalg.svd(system)
    null = int(np.sum(sv < TOLERANCE * sv[0]))
    if null != 1:
        raise ValueError(f"the basis change is not unique: null space of dimension {null}")
    u = vh[-1].conj().reshape(4, 4)
    u *= 2.0 / np.linalg.norm(u)  # U U^dag = 1 needs |U|_F^2 = 4
    k = int(np.argmax(np.abs(u).ravel() > np.abs(u).max() * (1 - 1e-9)))
    u *= np.abs(u.ravel()[k]) / u.ravel()[k]
    for mu in range(4):
        if not np.allclose(u @ src[mu] @ u.conj().T, dst[mu], atol=TOLERANCE, rtol=0):
            raise ValueError(f"the basis change does not map gamma_{mu + 1}")
    if not np.allclose(u @ u.conj().T, np.eye(4), atol=TOLERANCE, rtol=0):
        raise ValueError("the basis change is not unitary")
    return u
