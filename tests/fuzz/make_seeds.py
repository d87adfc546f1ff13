#!/usr/bin/env python3
"""make_seeds.py: writes the openQCD and MILC seeds of the fuzz corpus (tests/fuzz/corpus/openqcd, milc).

A 2x2x2x2 field that is a random gauge transformation of the unit field, U_mu(x) = g(x) g(x + mu)^dag with g(x)
Haar-random SU(3) (seeded): every link is a non-trivial SU(3) matrix and every plaquette is exactly the identity
up to rounding, so the headers' plaquette (openQCD: 3) and the checksums (MILC) are known without a gauge code.
Formats as io/gauge/openqcd.cpp and milc.cpp read them (openQCD export_cnfg(): little-endian int32 N0..N3 with
N0 = time, double plaquette, then per odd point x0 (t) slowest .. x3 (z) fastest the links U(x, mu) and
U(x - mu, mu) for mu = 0 (t), 1..3 (x, y, z); MILC version 5: magic 20103, nx ny nz nt, 64-byte stamp, order 0,
sum29, sum31, then per site x fastest .. t slowest U_x U_y U_z U_t as 3x3 complex). Run: python3 make_seeds.py DIR.
"""
import os
import struct
import sys

import numpy as np

L = 2  # every extent


def haar_su3(rng):
    z = (rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))) / np.sqrt(2)
    q, r = np.linalg.qr(z)
    q = q * (np.diag(r) / np.abs(np.diag(r)))
    return q / np.linalg.det(q) ** (1 / 3)


def field(seed):
    """links[t, z, y, x, mu] (mu = 0..3 is x, y, z, t), a gauge transform of the unit field."""
    rng = np.random.default_rng(seed)
    g = np.empty((L, L, L, L, 3, 3), complex)
    for idx in np.ndindex(L, L, L, L):
        g[idx] = haar_su3(rng)
    u = np.empty((L, L, L, L, 4, 3, 3), complex)
    for t, z, y, x in np.ndindex(L, L, L, L):
        for mu, (dx, dy, dz, dt) in enumerate([(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)]):
            fwd = g[(t + dt) % L, (z + dz) % L, (y + dy) % L, (x + dx) % L]
            u[t, z, y, x, mu] = g[t, z, y, x] @ fwd.conj().T
    return u


def matrix_bytes(m, fmt):
    return b"".join(struct.pack(fmt, v) for c in m.reshape(-1) for v in (c.real, c.imag))


def openqcd(u):
    out = struct.pack("<4i", L, L, L, L) + struct.pack("<d", 3.0)
    ours = [3, 0, 1, 2]  # openQCD direction 0 = t, 1..3 = x, y, z
    for x0, x1, x2, x3 in np.ndindex(L, L, L, L):
        if (x0 + x1 + x2 + x3) % 2 == 0:
            continue
        for oq in range(4):
            back = [x0, x1, x2, x3]
            back[oq] = (back[oq] - 1) % L
            for c in ([x0, x1, x2, x3], back):
                out += matrix_bytes(u[c[0], c[3], c[2], c[1], ours[oq]], "<d")
    return out


def rotl(v, r):
    return v if r == 0 else ((v << r) | (v >> (32 - r))) & 0xFFFFFFFF


def milc(u, fmt_char, big):
    e = ">" if big else "<"
    data = b"".join(matrix_bytes(u[t, z, y, x, mu], e + fmt_char)
                     for t, z, y, x in np.ndindex(L, L, L, L) for mu in range(4))
    words = struct.unpack(e + "%dI" % (len(data) // 4), data)
    s29 = s31 = 0
    for i, w in enumerate(words):
        s29 ^= rotl(w, i % 29)
        s31 ^= rotl(w, i % 31)
    stamp = b"Mon Nov 24 00:00:00 2026".ljust(64, b"\0")
    return struct.pack(e + "5i", 20103, L, L, L, L) + stamp + struct.pack(e + "i2I", 0, s29, s31) + data


def main():
    root = sys.argv[1]
    u = field(2026)
    os.makedirs(os.path.join(root, "openqcd"), exist_ok=True)
    os.makedirs(os.path.join(root, "milc"), exist_ok=True)
    with open(os.path.join(root, "openqcd", "gauge_transform_2x2x2x2.oqcd"), "wb") as f:
        f.write(openqcd(u))
    with open(os.path.join(root, "milc", "gauge_transform_2x2x2x2_f64_be.milc"), "wb") as f:
        f.write(milc(u, "d", True))
    with open(os.path.join(root, "milc", "gauge_transform_2x2x2x2_f32_le.milc"), "wb") as f:
        f.write(milc(u, "f", False))


if __name__ == "__main__":
    main()
