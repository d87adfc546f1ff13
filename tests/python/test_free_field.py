"""Free-field checks of the program's propagator, meson correlators, effective masses and PCAC mass.

Unit gauge field, 4x4x4x8, kappa = 0.12, csw = 1.0 (no effect on the unit field), antiperiodic in time (default
theta), double precision, tol = 1e-12, a propagator at the non-origin site (1, 2, 3, 5) with momenta (1,0,0) and
(0,1,1). The reference is computed here with numpy from docs/conventions.md sections 3-9 alone (no program code):
  S(x, x0) = (1/V) sum_p exp(i p.(x - x0)) M(p)^-1,  p_mu = (2 pi n_mu + theta_mu) / L_mu,
  M(p) = (1 - 2 kappa sum_mu cos p_mu) + 2 i kappa sum_mu gamma_mu sin p_mu          (times 1 in colour)
  C(p, t) = sum_{x: x_t = (x0_t + t) mod Lt} exp(-i p.(x - x0)) tr[Gsnk S(x) Gsrc g5 S(x)^dag g5],  p = 2 pi n / L
and the effective and PCAC masses are recomputed from the file's correlators by an independent bisection.
The reference itself is checked against a position-space Wilson operator and against a point solve of the program
(those two tests need no propagator support; the others do).
"""
import math
import re

import h5py
import numpy as np
import pytest

EXTENTS = (4, 4, 4, 8)  # (Lx, Ly, Lz, Lt)
KAPPA = 0.12
THETA = (0.0, 0.0, 0.0, math.pi)
SITE = (1, 2, 3, 5)  # (x, y, z, t)
MOMENTA = [(0, 0, 0), (1, 0, 0), (0, 1, 1)]
CORR_RTOL = 1e-10  # relative to the largest |C(t)| of the channel and momentum
FIELD_RTOL = 1e-10  # relative to the largest |S|

BODY = f"""
[lattice]
extents = [{EXTENTS[0]}, {EXTENTS[1]}, {EXTENTS[2]}, {EXTENTS[3]}]
[gauge]
source = "unit"
[dirac]
kappa = {KAPPA}
csw = 1.0
[solver]
precision = "double"
tol = 1e-12
max_iter = 10000
[metrics]
peak = false
"""

PROPAGATOR = f"""
[[solve]]
name = "free"
type = "propagator"
site = [{SITE[0]}, {SITE[1]}, {SITE[2]}, {SITE[3]}]
momenta = [[1, 0, 0], [0, 1, 1]]
"""

POINT_SPIN, POINT_COLOUR = 2, 1
POINT = f"""
[[solve]]
name = "point"
type = "point"
site = [{SITE[0]}, {SITE[1]}, {SITE[2]}, {SITE[3]}]
spin = {POINT_SPIN}
colour = {POINT_COLOUR}
"""


# ----------------------------------------------------------------------------------------------------------------
# Gamma matrices (docs/conventions.md section 3: Euclidean, hermitian, chiral basis) and the channels
# ----------------------------------------------------------------------------------------------------------------

def gamma_matrices():
    """{"1", "g1", "g2", "g3", "g4", "g5"}: g_k = [[0, -i s_k], [i s_k, 0]], g4 = [[0, 1], [1, 0]], g5 = g1g2g3g4."""
    pauli = [np.array([[0, 1], [1, 0]], complex), np.array([[0, -1j], [1j, 0]], complex),
             np.array([[1, 0], [0, -1]], complex)]
    zero, one = np.zeros((2, 2), complex), np.eye(2, dtype=complex)
    g = {"1": np.eye(4, dtype=complex)}
    for k, s in enumerate(pauli, start=1):
        g[f"g{k}"] = np.block([[zero, -1j * s], [1j * s, zero]])
    g["g4"] = np.block([[zero, one], [one, zero]])
    g["g5"] = g["g1"] @ g["g2"] @ g["g3"] @ g["g4"]
    return g


G = gamma_matrices()

# name: (sink factors, source factors, time parity); "gi" = average over i = 1, 2, 3 (same i at sink and source).
CHANNELS = {
    "pion": (["g5"], ["g5"], +1),
    "axial": (["g4", "g5"], ["g5"], -1),
    "axial_axial": (["g4", "g5"], ["g4", "g5"], +1),
    "rho": (["gi"], ["gi"], +1),
    "rho_t": (["gi", "g4"], ["gi", "g4"], +1),
    "a0": (["1"], ["1"], +1),
    "a1": (["gi", "g5"], ["gi", "g5"], +1),
}


def parse_gamma(name):
    """'g4g5' -> ['g4', 'g5'], 'gi g4' -> ['gi', 'g4'], '1' -> ['1'] (spaces, '*' and '_' ignored)."""
    s = re.sub(r"[\s*_]", "", name)
    tokens = re.findall(r"g[1-5i]|1", s)
    assert "".join(tokens) == s, f"cannot parse the gamma name {name!r}"
    return tokens


def gamma_product(factors, i):
    """The product of the factors, 'gi' taken as g<i>."""
    m = np.eye(4, dtype=complex)
    for f in factors:
        m = m @ G[f"g{i}" if f == "gi" else f]
    return m


def channel_pairs(name):
    """The (Gsnk, Gsrc) pairs averaged in a channel."""
    snk, src, _ = CHANNELS[name]
    spatial = "gi" in snk or "gi" in src
    return [(gamma_product(snk, i), gamma_product(src, i)) for i in ((1, 2, 3) if spatial else (1,))]


# ----------------------------------------------------------------------------------------------------------------
# Analytic free propagator and correlators
# ----------------------------------------------------------------------------------------------------------------

def site_coordinates():
    """Integer array [Lt, Lz, Ly, Lx, 4] of the (x, y, z, t) coordinates, natural order (x fastest)."""
    lx, ly, lz, lt = EXTENTS
    t, z, y, x = np.meshgrid(np.arange(lt), np.arange(lz), np.arange(ly), np.arange(lx), indexing="ij")
    return np.stack([x, y, z, t], axis=-1)


def momentum_space_inverse():
    """(p [V, 4], M(p)^-1 [V, 4, 4]) over all lattice momenta p_mu = (2 pi n_mu + theta_mu) / L_mu."""
    n = site_coordinates().reshape(-1, 4)
    p = (2 * np.pi * n + np.array(THETA)) / np.array(EXTENTS)
    gammas = np.stack([G["g1"], G["g2"], G["g3"], G["g4"]])
    m = (1 - 2 * KAPPA * np.cos(p).sum(axis=1))[:, None, None] * np.eye(4) \
        + 2j * KAPPA * np.einsum("pm,mab->pab", np.sin(p), gammas)
    return p, np.linalg.inv(m)


def free_propagator(site=SITE):
    """S(x, x0) spin matrices [Lt, Lz, Ly, Lx, 4 (sink), 4 (source)] (times the unit matrix in colour)."""
    p, minv = momentum_space_inverse()
    d = (site_coordinates() - np.array(site)).reshape(-1, 4)
    phase = np.exp(1j * d @ p.T)  # [x, p]
    s = phase @ minv.reshape(len(p), 16) / len(p)
    return s.reshape(EXTENTS[::-1] + (4, 4))


def free_correlator(s, name, n, site=SITE):
    """C(p, t) of one channel, t relative to the source timeslice, colour trace included (factor 3)."""
    lx, ly, lz, lt = EXTENTS
    coords = site_coordinates()
    p = 2 * np.pi * np.array(n) / np.array(EXTENTS[:3])
    phase = np.exp(-1j * ((coords[..., :3] - np.array(site[:3])) @ p))  # [Lt, Lz, Ly, Lx]
    g5 = G["g5"]
    sdag = np.conj(np.swapaxes(s, -1, -2))
    c = np.zeros(lt, complex)
    pairs = channel_pairs(name)
    for gsnk, gsrc in pairs:
        tr = np.einsum("ab,...bc,cd,de,...ef,fa->...", gsnk, s, gsrc, g5, sdag, g5)
        per_t = (3 * phase * tr).sum(axis=(1, 2, 3))  # absolute timeslice
        c += np.roll(per_t, -site[3])  # c[t] = per_t[(x0_t + t) mod Lt]
    return c / len(pairs)


def wilson_operator(psi):
    """M psi on the unit gauge field (csw irrelevant), psi [Lt, Lz, Ly, Lx, 4, ...] (conventions.md s. 4)."""
    gammas = [G["g1"], G["g2"], G["g3"], G["g4"]]
    axes = [3, 2, 1, 0]  # mu = x, y, z, t in the [t, z, y, x] array
    hop = np.zeros_like(psi)
    for mu in range(4):
        ax = axes[mu]
        fwd = np.roll(psi, -1, axis=ax)  # psi(x + mu)
        bwd = np.roll(psi, 1, axis=ax)  # psi(x - mu)
        last = [slice(None)] * psi.ndim
        first = [slice(None)] * psi.ndim
        last[ax], first[ax] = -1, 0
        fwd[tuple(last)] *= np.exp(1j * THETA[mu])  # hop across the boundary going forward
        bwd[tuple(first)] *= np.exp(-1j * THETA[mu])
        one = np.eye(4)
        hop += np.einsum("ab,tzyxb...->tzyxa...", one - gammas[mu], fwd)
        hop += np.einsum("ab,tzyxb...->tzyxa...", one + gammas[mu], bwd)
    return psi - KAPPA * hop


# ----------------------------------------------------------------------------------------------------------------
# Independent effective mass (bisection) and PCAC mass
# ----------------------------------------------------------------------------------------------------------------

def log_ratio(m, t, lt, parity):
    """log f(t)/f(t+1) for f(t) = exp(-m t) + s exp(-m (Lt - t)), m > 0, from its cosh / sinh form."""
    a, b = lt / 2 - t, lt / 2 - t - 1
    if parity > 0:
        return math.log(math.cosh(m * a) / math.cosh(m * b))
    return math.log(math.sinh(m * a) / math.sinh(m * b))


def solve_mass(ratio, t, lt, parity):
    """(m, marginal): the root m > 0 of f(t)/f(t+1) = ratio by bisection, or nan; marginal when the ratio is
    within 1e-8 of the edge of the range of f(t)/f(t+1) (where the existence of a root is a rounding question)."""
    a, b = lt / 2 - t, lt / 2 - t - 1
    if not (math.isfinite(ratio) and ratio > 0) or (parity < 0 and (a == 0 or b == 0 or a * b < 0)):
        return math.nan, False
    edge = 1.0 if parity > 0 else a / b
    marginal = abs(ratio - edge) <= 1e-8 * edge
    target = math.log(ratio)
    lo, hi = 1e-9, min(50.0, 700.0 / max(abs(a), abs(b), 1.0))
    glo, ghi = log_ratio(lo, t, lt, parity) - target, log_ratio(hi, t, lt, parity) - target
    if glo == 0:
        return lo, marginal
    if glo * ghi > 0:
        return math.nan, marginal
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        g = log_ratio(mid, t, lt, parity) - target
        if g == 0 or hi - lo <= 1e-16 * hi:
            break
        if (g > 0) == (glo > 0):
            lo, glo = mid, g
        else:
            hi = mid
    return 0.5 * (lo + hi), marginal


def effective_mass(c, parity):
    """(m[t], marginal[t]) for t = 0..Lt-1 from the real correlator c; m[Lt-1] = nan."""
    lt = len(c)
    m, marginal = np.full(lt, math.nan), np.zeros(lt, bool)
    for t in range(lt - 1):
        ratio = c[t] / c[t + 1] if c[t + 1] != 0 else math.nan
        m[t], marginal[t] = solve_mass(ratio, t, lt, parity)
    return m, marginal


def pcac_mass(axial, pion):
    """(A(t+1) - A(t-1)) / (4 P(t)), indices mod Lt (nan where P(t) = 0)."""
    lt = len(pion)
    out = np.full(lt, math.nan)
    for t in range(lt):
        if pion[t] != 0:
            out[t] = (axial[(t + 1) % lt] - axial[(t - 1) % lt]) / (4 * pion[t])
    return out


# ----------------------------------------------------------------------------------------------------------------
# Fixtures
# ----------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def reference():
    """The analytic free propagator S(x, x0)."""
    return free_propagator()


@pytest.fixture(scope="module")
def free_file(tmp_path_factory, run_emprism_in):
    """The program's output for the free-field propagator (needs propagator support)."""
    return run_emprism_in(tmp_path_factory.mktemp("free_field"), BODY + PROPAGATOR, name="free")


def sectors(f):
    """[(n, group)] of /correlators/free: p = 0 first, then the p<nx>_<ny>_<nz> groups."""
    c = f["correlators/free"]
    out = []
    for n in c.attrs["momenta"]:
        n = tuple(int(v) for v in n)
        out.append((n, c if n == (0, 0, 0) else c["p" + "_".join(map(str, n))]))
    return out


def text(v):
    """An HDF5 string as str."""
    return v.decode() if isinstance(v, bytes) else str(v)


# ----------------------------------------------------------------------------------------------------------------
# The reference itself (no propagator support needed)
# ----------------------------------------------------------------------------------------------------------------

def test_gamma_matrices_follow_design():
    for mu in ("g1", "g2", "g3", "g4"):
        np.testing.assert_allclose(G[mu], G[mu].conj().T)
        np.testing.assert_allclose(G[mu] @ G[mu], np.eye(4), atol=1e-15)
    np.testing.assert_allclose(G["g5"], np.diag([1, 1, -1, -1]), atol=1e-15)
    for a in ("g1", "g2", "g3", "g4"):
        for b in ("g1", "g2", "g3", "g4"):
            if a != b:
                np.testing.assert_allclose(G[a] @ G[b] + G[b] @ G[a], 0, atol=1e-15)


def test_reference_solves_the_position_space_operator(reference):
    delta = np.zeros_like(reference)
    x, y, z, t = SITE
    delta[t, z, y, x] = np.eye(4)
    residual = wilson_operator(reference) - delta
    assert np.abs(residual).max() < 1e-12


def test_point_solve_matches_reference(reference, run_emprism):
    h5 = run_emprism(BODY + POINT, name="point")
    with h5py.File(h5, "r") as f:
        g = f["solves/point"]
        assert bool(g.attrs["converged"]) and float(g.attrs["true_residual"]) <= 1e-12
        sol = g["solution"][...]
    expect = np.zeros(EXTENTS[::-1] + (4, 3), complex)
    expect[..., :, POINT_COLOUR] = reference[..., :, POINT_SPIN]
    scale = np.abs(expect).max()
    assert np.abs(sol - expect).max() <= FIELD_RTOL * scale


# ----------------------------------------------------------------------------------------------------------------
# The program's propagator and correlators
# ----------------------------------------------------------------------------------------------------------------

def test_propagator_solve_attributes(free_file):
    with h5py.File(free_file, "r") as f:
        g = f["solves/free"]
        a = g.attrs
        assert text(a["source_kind"]) == "propagator"
        assert bool(a["converged"]) and float(a["true_residual"]) <= 1e-12
        assert [int(v) for v in a["source_site"]] == list(SITE)
        assert text(a["smearing"]) == "none" and text(a["link_smearing"]) == "none"
        its = g["column_iterations"][...]
        res = g["column_true_residual"][...]
        assert its.shape == (4, 3) and res.shape == (4, 3)
        assert int(a["iterations"]) == int(its.sum())
        assert float(a["true_residual"]) == pytest.approx(float(res.max()), rel=1e-15)
        hist = g["residual_history"]
        assert sorted(hist) == sorted(f"s{s}c{c}" for s in range(4) for c in range(3))
        for s in range(4):
            for c in range(3):
                assert hist[f"s{s}c{c}"].shape == (int(its[s, c]),)


def test_propagator_field_matches_reference(free_file, reference):
    with h5py.File(free_file, "r") as f:
        prop = f["solves/free/propagator"][...]
    lx, ly, lz, lt = EXTENTS
    assert prop.shape == (4, 3, lt, lz, ly, lx, 4, 3)
    # [src spin, src colour, t, z, y, x, sink spin, sink colour] = s(x)[sink spin, src spin] delta(colours)
    expect = np.einsum("tzyxab,cd->bctzyxad", reference, np.eye(3))
    assert np.abs(prop - expect).max() <= FIELD_RTOL * np.abs(expect).max()


def test_correlator_group_attributes(free_file):
    with h5py.File(free_file, "r") as f:
        c = f["correlators/free"]
        assert [int(v) for v in c.attrs["source_site"]] == list(SITE)
        assert [tuple(int(v) for v in n) for n in c.attrs["momenta"]] == MOMENTA
        assert sorted(text(x) for x in c.attrs["channels"]) == sorted(CHANNELS)
        assert text(c.attrs["sink"]) == "point"
        for n, g in sectors(f):
            for name, (snk, src, parity) in CHANNELS.items():
                d = g[name]
                assert d.shape == (EXTENTS[3],) and np.iscomplexobj(d[...])
                assert parse_gamma(text(d.attrs["gamma_sink"])) == snk
                assert parse_gamma(text(d.attrs["gamma_source"])) == src
                assert int(d.attrs["time_parity"]) == parity
                assert tuple(int(v) for v in d.attrs["momentum"]) == n
                form = text(g["effective_mass/" + name].attrs["form"])
                assert form == ("cosh" if parity > 0 else "sinh")


@pytest.mark.parametrize("name", list(CHANNELS))
def test_correlators_match_reference(free_file, reference, name):
    with h5py.File(free_file, "r") as f:
        for n, g in sectors(f):
            got = g[name][...]
            expect = free_correlator(reference, name, n)
            scale = np.abs(expect).max()
            assert scale > 0
            err = np.abs(got - expect).max()
            assert err <= CORR_RTOL * scale, f"{name} p={n}: max |diff| {err:.3e}, max |C| {scale:.3e}\n" \
                                             f"file {got}\nreference {expect}"


@pytest.mark.parametrize("name", list(CHANNELS))
def test_time_parity_holds(free_file, name):
    lt = EXTENTS[3]
    parity = CHANNELS[name][2]
    with h5py.File(free_file, "r") as f:
        for n, g in sectors(f):
            c = g[name][...]
            t = np.arange(1, lt)
            err = np.abs(c[lt - t] - parity * c[t]).max()
            assert err <= CORR_RTOL * np.abs(c).max(), f"{name} p={n}: C(Lt-t) != {parity:+d} C(t)"


def test_pion_is_positive(free_file):
    with h5py.File(free_file, "r") as f:
        pion = f["correlators/free/pion"][...]
    assert np.all(pion.real > 0), pion
    assert np.abs(pion.imag).max() <= CORR_RTOL * pion.real.max()


@pytest.mark.parametrize("name", list(CHANNELS))
def test_effective_masses_match_recomputed(free_file, name):
    lt = EXTENTS[3]
    parity = CHANNELS[name][2]
    with h5py.File(free_file, "r") as f:
        for n, g in sectors(f):
            got = g["effective_mass/" + name][...]
            assert got.shape == (lt,) and math.isnan(got[-1])
            mine, marginal = effective_mass(g[name][...].real, parity)
            for t in range(lt - 1):
                if marginal[t]:
                    continue
                where = f"{name} p={n} t={t}: file {got[t]!r}, recomputed {mine[t]!r}"
                assert np.isfinite(got[t]) == np.isfinite(mine[t]), where
                if np.isfinite(mine[t]):
                    assert got[t] == pytest.approx(mine[t], rel=1e-9, abs=1e-12), where


def test_pcac_mass_matches_recomputed(free_file):
    with h5py.File(free_file, "r") as f:
        c = f["correlators/free"]
        got = c["pcac_mass"][...]
        mine = pcac_mass(c["axial"][...].real, c["pion"][...].real)
    lt = EXTENTS[3]
    for t in range(lt):
        if not np.isfinite(got[t]) and t in (0, lt - 1):
            continue  # an implementation may leave the ends undefined
        assert got[t] == pytest.approx(mine[t], rel=1e-10, abs=1e-14), f"t={t}: file {got[t]}, recomputed {mine[t]}"
    assert np.all(np.isfinite(got[1:lt - 1]))
    # free Wilson quark: m_PCAC > 0 for kappa < 1/8
    assert got[lt // 2] > 0
