"""A thermal bath on every site (docs/physics.md §5.1).

Physics.  Each transmon l exchanges quanta with a bath at temperature T at
its qubit frequency f_l (Hz):

    c_down = sqrt(gamma_l (1 + nbar_l)) a_l,    c_up = sqrt(gamma_l nbar_l) a_l^dag,
    gamma_l = 1/T1_l,    nbar_l = 1 / (exp(h f_l / k_B T) - 1)

with a_l^dag truncated to the qutrit (a^dag|2> = 0).  Off (the default), the
decay is sqrt(gamma_l) a_l alone, as in the paper.  Rates in units of J,
T1 in 1/J, T in kelvin.

Detailed balance on one site: the up rate |1> <- |0> is gamma nbar, down
gamma (1 + nbar); |2> <- |1> is 2 gamma nbar, down 2 gamma (1 + nbar).  The
stationary state of one site is therefore p_n proportional to x^n,
x = nbar/(1 + nbar) = exp(-h f_l/k_B T) (the *harmonic* Boltzmann weights at
the qubit frequency: the bath sees |2> at 2 h f_l, not at the anharmonic
h (2 f_l - U_l/2pi) of the thermal start).  With the same f_l on every site
the product of these states is proportional to x^N, which commutes with
the number-conserving H and is kept by dephasing: it is an exact stationary
state of the whole array without reset (:func:`equilibrium`).

f_l is the site's *nominal* frequency: a device file's w_l, else the mean
wbar of the disorder recipe (the same on every site).  The channel table is
a property of the spec, shared by every realization of a run (the stores
hold one table for all their rows), so the realization's own detuning
dw_l (|dw_l| <= W/2 = 50 MHz) does not enter nbar_l: at 100 mK it would
change nbar_l by at most h (W/2)/k_B T = 2.4 % (1 % at 250 mK).
"""

from __future__ import annotations

import math

import numpy as np

H_PLANCK = 6.62607015e-34  # J s
K_BOLTZMANN = 1.380649e-23  # J / K


def site_frequencies_hz(spec) -> np.ndarray:
    """The nominal qubit frequency f_l of each site in Hz: a device's w_l, else wbar on every site."""
    w = spec.device.w if spec.device is not None else np.full(spec.L, spec.wbar)
    return np.asarray(w, dtype=float) * spec.J_hz


def occupations(spec) -> np.ndarray:
    """nbar_l = 1/(exp(h f_l/k_B T) - 1) of each site (0 at T = 0), shape (L,)."""
    T = spec.conditions.temperature_K
    if T == 0.0:
        return np.zeros(spec.L)
    return 1.0 / np.expm1(H_PLANCK * site_frequencies_hz(spec) / (K_BOLTZMANN * T))


def rates(spec) -> list[tuple[int, float, float]]:
    """(site, down rate gamma_l (1 + nbar_l), up rate gamma_l nbar_l) of every site with a finite T1 (J)."""
    T1 = spec.conditions.t1_sites(spec.L)
    nbar = occupations(spec)
    return [(l, (1.0 + nbar[l]) / float(T1[l]), nbar[l] / float(T1[l])) for l in range(spec.L) if math.isfinite(T1[l])]


def equilibrium(spec) -> np.ndarray:
    """The bath's stationary single-site populations (L, 3): p_n = x^n / (1 + x + x^2), x = nbar/(1 + nbar)."""
    nbar = occupations(spec)
    x = nbar / (1.0 + nbar)
    p = np.stack([np.ones_like(x), x, x * x], axis=1)
    return p / p.sum(axis=1, keepdims=True)
