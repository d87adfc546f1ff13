"""resampling.py: resampling statistics over an ensemble of gauge configurations, with numpy and scipy.

Conventions (docs/conventions.md section 9; README "Analysis over an ensemble"):
  - data are arrays [N, ...]: one row per configuration (or per bin), in the order of the configurations;
  - folding averages C(t) and s C(Lt - t) per configuration (optional);
  - binning averages `bin` consecutive rows (the last N mod bin rows are dropped);
  - the jackknife samples are the leave-one-out means x_(i) = (sum_j x_j - x_i) / (N - 1); the error of a function
    f of the mean is sqrt((N - 1)/N sum_i (f_(i) - mean_i f_(i))^2), its covariance the same outer product; for
    the mean itself this is exactly the standard error s / sqrt(N) (s the sample standard deviation, ddof = 1);
  - effective_mass solves c(t)/c(t+1) = f(t)/f(t+1), f(t) = exp(-m t) + s exp(-m (Lt - t)), as the C++ code does
    (src/physics/contractions.cpp), vectorised over samples; NaN where no positive solution exists;
  - pcac_mass: (C_axial(t + 1) - C_axial(t - 1)) / (4 C_pion(t)), as the C++ code;
  - fits of C(t) = A (exp(-m t) + s exp(-m (Lt - t))) minimise chi^2 = r^T Cov^-1 r (correlated; Cov the jackknife
    covariance of the mean, fixed for all samples) or sum r_t^2 / Cov_tt (uncorrelated), by scipy's
    Levenberg-Marquardt for the mean and Gauss-Newton steps from its result for the jackknife samples; the mass
    error is the jackknife error of the fits to the samples.
Who may call: analysis scripts (ensemble_report.py) and the tests; pure functions.
"""
import math
import warnings

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.stats

COND_LIMIT = 1e12  # a covariance with a larger condition number counts as singular


class FitError(Exception):
    """A fit that cannot be done (too few points, no data of one sign); str() says why."""


# ----------------------------------------------------------------------------------------------------------------
# Binning and the jackknife
# ----------------------------------------------------------------------------------------------------------------

def bin_data(x, size):
    """Means of `size` consecutive rows of x [N, ...] -> [N // size, ...]; the last N mod size rows are dropped."""
    x = np.asarray(x)
    if size < 1:
        raise ValueError("bin size must be at least 1")
    n = x.shape[0] // size
    return x[:n * size].reshape((n, size) + x.shape[1:]).mean(axis=1)


def fold(c, parity):
    """(C(t) + s C(Lt - t)) / 2 of correlators c [..., Lt] (t = 0 and Lt/2 map to themselves): the two halves of a
    periodic correlator averaged, which C(Lt - t) = s C(t) allows for the ensemble mean."""
    c = np.asarray(c, dtype=float)
    return 0.5 * (c + parity * np.roll(c[..., ::-1], 1, axis=-1))


def jackknife_samples(x):
    """Leave-one-out means of x [N, ...] -> [N, ...]."""
    x = np.asarray(x)
    n = x.shape[0]
    if n < 2:
        raise ValueError("the jackknife needs at least 2 samples")
    return (x.sum(axis=0) - x) / (n - 1)


def jackknife_error(samples):
    """The jackknife error of the quantity whose leave-one-out values are samples [N, ...] (per entry; NaN where
    any sample is NaN)."""
    s = np.asarray(samples, dtype=float)
    n = s.shape[0]
    return np.sqrt((n - 1) / n * ((s - s.mean(axis=0)) ** 2).sum(axis=0))


def jackknife_covariance(samples):
    """The jackknife covariance [T, T] of the quantity whose leave-one-out values are samples [N, T]."""
    s = np.asarray(samples, dtype=float)
    n = s.shape[0]
    d = s - s.mean(axis=0)
    return (n - 1) / n * d.T @ d


# ----------------------------------------------------------------------------------------------------------------
# Effective masses (the cosh and sinh forms of the C++ code)
# ----------------------------------------------------------------------------------------------------------------

def log_cosh(x):
    """log cosh(x), accurate for small and large |x| (call under np.errstate(all="ignore"))."""
    x = np.abs(x)
    return np.where(x < 1, np.log1p(2 * np.sinh(0.5 * np.minimum(x, 1)) ** 2),
                    x + np.log1p(np.exp(-2 * x)) - math.log(2.0))


def log_sinh(x):
    """log sinh(x) for x > 0, accurate for small and large x (call under np.errstate(all="ignore"))."""
    return np.where(x < 1, np.log(np.sinh(np.minimum(x, 1))), x + np.log1p(-np.exp(-2 * x)) - math.log(2.0))


def solvable(y, a, b, parity):
    """(ok, low, rising): where log r(m) = y has a positive solution, r(m) = f(m a) / f(m b), f = cosh or sinh;
    low = log r(0+), rising: log r grows with m (|a| > |b|). Arrays over the last axis (time)."""
    aa, ab = np.abs(a), np.abs(b)
    rising = aa > ab
    if parity == 1:
        defined = aa != ab
        low = np.zeros_like(aa)
    else:
        defined = (a != 0) & (b != 0) & ((a > 0) == (b > 0))
        low = np.log(np.where(defined, aa, 1.0) / np.where(defined, ab, 1.0))
    ok = defined & np.isfinite(y) & np.where(rising, y > low, y < low)
    return ok, low, rising


def effective_mass_at(y, a, b, parity):
    """m solving log r(m) = y, r(m) = f(m a) / f(m b) with f = cosh (parity +1) or sinh (-1), for arrays y
    [..., n] and a, b [n]; NaN where no positive solution exists. Bisection as in the C++ code, all at once."""
    logf = log_cosh if parity == 1 else log_sinh
    aa, ab = np.abs(a), np.abs(b)
    with np.errstate(all="ignore"):
        ok, low, rising = solvable(y, a, b, parity)
        y = np.where(ok, y, low + np.where(rising, 1.0, -1.0))
        sign = np.where(rising, 1.0, -1.0)

        def g(m):
            return sign * (logf(m * aa) - logf(m * ab) - y)

        lo, hi = np.zeros(y.shape), np.ones(y.shape)
        for _ in range(64):
            grow = g(hi) <= 0
            if not grow.any():
                break
            lo, hi = np.where(grow, hi, lo), np.where(grow, 2 * hi, hi)
        ok &= g(hi) > 0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            up = g(mid) > 0
            hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
            if np.all(hi - lo <= 1e-15 * hi):
                break
    return np.where(ok, 0.5 * (lo + hi), np.nan)


def effective_mass(c, parity):
    """Effective masses of correlators c [..., Lt] (real parts), the last axis time; entry Lt-1 is NaN."""
    if parity not in (1, -1):
        raise ValueError("time parity must be +1 or -1")
    c = np.asarray(c, dtype=float)
    lt = c.shape[-1]
    with np.errstate(all="ignore"):
        ratio = c[..., :-1] / c[..., 1:]
        y = np.where(np.isfinite(ratio) & (ratio > 0), np.log(np.where(ratio > 0, ratio, 1.0)), np.nan)
    a = 0.5 * lt - np.arange(lt - 1)
    m = np.full(c.shape, np.nan)
    m[..., :-1] = effective_mass_at(y, a, a - 1, parity)
    return m


def pcac_mass(axial, pion):
    """m(t) = (C_axial(t + 1) - C_axial(t - 1)) / (4 C_pion(t)), indices mod Lt (docs/conventions.md section 9), for
    arrays [..., Lt]; NaN where C_pion(t) = 0."""
    axial, pion = np.asarray(axial, dtype=float), np.asarray(pion, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = (np.roll(axial, -1, axis=-1) - np.roll(axial, 1, axis=-1)) / (4 * pion)
    return np.where(pion != 0, m, np.nan)


# ----------------------------------------------------------------------------------------------------------------
# Fits of C(t) = A (exp(-m t) + s exp(-m (Lt - t)))
# ----------------------------------------------------------------------------------------------------------------

def model(t, amplitude, mass, lt, parity):
    """A (exp(-m t) + s exp(-m (Lt - t)))."""
    t = np.asarray(t, dtype=float)
    return amplitude * (np.exp(-mass * t) + parity * np.exp(-mass * (lt - t)))


def covariance_is_singular(cov, samples):
    """True when cov [n, n] from `samples` independent rows cannot be inverted reliably: samples - 1 < n (its rank
    is at most samples - 1) or its condition number (of the correlation matrix) exceeds COND_LIMIT."""
    n = cov.shape[0]
    if samples - 1 < n:
        return True
    d = np.sqrt(np.diag(cov))
    if not np.all(d > 0):
        return True
    return bool(np.linalg.cond(cov / np.outer(d, d)) > COND_LIMIT)


def whitener(cov, correlated):
    """A matrix W with chi^2 = |W r|^2: the inverse Cholesky factor of cov, or 1/sigma on the diagonal."""
    if correlated:
        return scipy.linalg.inv(np.linalg.cholesky(cov))
    return np.diag(1.0 / np.sqrt(np.diag(cov)))


def whitened(t, p, weight, lt, parity):
    """(W f(t; A, m), W df/dA, W df/dm) for parameters p [..., 2] (A, m): arrays [..., n]."""
    amplitude, mass = p[..., 0:1], p[..., 1:2]
    e1, e2 = np.exp(-mass * t), parity * np.exp(-mass * (lt - t))
    da = e1 + e2
    dm = -amplitude * (t * e1 + (lt - t) * e2)
    return (amplitude * da) @ weight.T, da @ weight.T, dm @ weight.T


def fit_once(t, y, weight, lt, parity, start):
    """(amplitude, mass, chi^2) of one fit: Levenberg-Marquardt (scipy) on the whitened residuals W (f - y)."""
    wy = weight @ y

    def residuals(p):
        return whitened(t, p, weight, lt, parity)[0] - wy

    def jacobian(p):
        return np.stack(whitened(t, p, weight, lt, parity)[1:], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = scipy.optimize.least_squares(residuals, start, jac=jacobian, method="lm", xtol=1e-15, ftol=1e-15,
                                         gtol=1e-15, max_nfev=2000)
    return float(r.x[0]), float(r.x[1]), float(2 * r.cost)


def fit_samples(t, ys, weight, lt, parity, start, steps=30):
    """The fits of many data sets ys [N, n] at once: Gauss-Newton from `start` (the fit of their mean, close to
    each); a data set whose steps do not settle to 1e-13 relative is fitted alone by fit_once. Returns [N, 2]."""
    wy = ys @ weight.T
    p = np.tile(np.asarray(start, dtype=float), (ys.shape[0], 1))
    for _ in range(steps):
        f, da, dm = whitened(t, p, weight, lt, parity)
        jac = np.stack([da, dm], axis=2)
        step = np.linalg.solve(np.einsum("kni,knj->kij", jac, jac), np.einsum("kni,kn->ki", jac, wy - f))
        p = p + step
        done = np.all(np.abs(step) <= 1e-13 * np.abs(p), axis=1)
        if done.all():
            break
    for k in np.flatnonzero(~done | ~np.all(np.isfinite(p), axis=1)):
        p[k] = fit_once(t, ys[k], weight, lt, parity, start)[:2]
    return p


def start_values(t, y, lt, parity):
    """A first guess (amplitude, mass): the median effective mass of the data in the range, the amplitude that
    matches the first point."""
    full = np.full(lt, np.nan)
    full[t] = y
    m = effective_mass(full, parity)
    m = m[np.isfinite(m)]
    mass = float(np.median(m)) if m.size else 0.5
    return np.array([float(y[0] / model(t[0], 1.0, mass, lt, parity)), mass])


def fit_range(samples, mean, tmin, tmax, lt, parity, correlated):
    """The fit of the mean correlator over t = tmin..tmax and of each jackknife sample [N, Lt], the covariance
    fixed from the samples. Returns a dict: tmin, tmax, mass, mass_error, amplitude, amplitude_error, chi2, dof,
    chi2_per_dof, p_value, correlated (as used: False when the covariance was singular), singular,
    mass_samples [N]. Raises FitError for too few points or a range outside 0..Lt-1."""
    if not 0 <= tmin < tmax < lt:
        raise FitError(f"fit range {tmin}..{tmax} outside 0..{lt - 1} or empty")
    t = np.arange(tmin, tmax + 1)
    if t.size < 3:
        raise FitError(f"fit range {tmin}..{tmax} has {t.size} points: at least 3 are needed for 2 parameters")
    cov = jackknife_covariance(samples[:, t])
    singular = correlated and covariance_is_singular(cov, samples.shape[0])
    used = correlated and not singular
    weight = whitener(cov, used)
    y = np.asarray(mean, dtype=float)[t]
    amplitude, mass, chi2 = fit_once(t, y, weight, lt, parity, start_values(t, y, lt, parity))
    fits = fit_samples(t, samples[:, t], weight, lt, parity, [amplitude, mass])
    dof = t.size - 2
    return {"tmin": int(tmin), "tmax": int(tmax), "mass": float(mass), "mass_error": float(jackknife_error(fits[:, 1])),
            "amplitude": float(amplitude), "amplitude_error": float(jackknife_error(fits[:, 0])), "chi2": chi2,
            "dof": dof, "chi2_per_dof": chi2 / dof, "p_value": float(scipy.stats.chi2.sf(chi2, dof)),
            "correlated": bool(used), "singular": bool(singular), "mass_samples": fits[:, 1]}


def central_fit(samples, mean, tmin, tmax, lt, parity, correlated):
    """(chi2, dof, p_value, mass) of the fit of the mean only (no jackknife): the plateau scan's fit."""
    t = np.arange(tmin, tmax + 1)
    cov = jackknife_covariance(samples[:, t])
    used = correlated and not covariance_is_singular(cov, samples.shape[0])
    y = np.asarray(mean, dtype=float)[t]
    _, mass, chi2 = fit_once(t, y, whitener(cov, used), lt, parity, start_values(t, y, lt, parity))
    dof = t.size - 2
    return chi2, dof, float(scipy.stats.chi2.sf(chi2, dof)), mass


def propose_range(samples, mean, lt, parity, correlated, p_min=0.05, min_points=3):
    """The plateau the report proposes: every range tmin..tmax with 1 <= tmin, at least min_points points, tmax up
    to Lt/2 (Lt/2 - 1 for the sinh form, whose C(Lt/2) vanishes) and mean data of one sign is fitted (the mean
    only; negative data, such as the axial correlator's, give a negative amplitude); among the fits with p-value
    >= p_min and a positive mass the range with the most points wins, ties going to the smaller tmin. Returns
    (tmin, tmax, accepted): accepted False when no range reached p_min (then the range of largest p-value).
    Raises FitError when no range can be fitted."""
    last = lt // 2 if parity == 1 else lt // 2 - 1
    best, fallback = None, None
    for tmin in range(1, last - min_points + 2):
        for tmax in range(tmin + min_points - 1, last + 1):
            window = np.asarray(mean)[tmin:tmax + 1]
            if not (np.all(window > 0) or np.all(window < 0)):
                continue
            try:
                _, _, p, mass = central_fit(samples, mean, tmin, tmax, lt, parity, correlated)
            except (np.linalg.LinAlgError, ValueError):
                continue
            if not (math.isfinite(p) and mass > 0):
                continue
            key = (tmax - tmin, -tmin)
            if p >= p_min and (best is None or key > best[0]):
                best = (key, tmin, tmax)
            if fallback is None or p > fallback[0]:
                fallback = (p, tmin, tmax)
    if best is not None:
        return best[1], best[2], True
    if fallback is not None:
        return fallback[1], fallback[2], False
    raise FitError("no range of at least 3 points of one sign between t = 1 and Lt/2 to fit")
