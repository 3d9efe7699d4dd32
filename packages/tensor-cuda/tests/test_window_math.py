"""The CUDA window kernels' points (csrc/backend/kernels/window_math.h, compiled with
g++ by tests/host_kernels/print_windows.cpp) are the CPU's: every window, symmetric
and periodic, one point and many, kaiser with small and large beta (its scaled
Bessel I0 switches from the series to the asymptotic expansion at 30)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from host_build import compile_host_program

flambeau = pytest.importorskip("flambeau")


@pytest.fixture(scope="module")
def windows(tmp_path_factory):
    return compile_host_program("print_windows.cpp", tmp_path_factory.mktemp("windows"))


def host_points(exe, kind, n, periodic, alpha=0.0, beta=0.0):
    out = subprocess.run(
        [str(exe), kind, str(n), str(int(periodic)), repr(alpha), repr(beta)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return np.array([float(v) for v in out.split()])


CASES = [
    ("bartlett", {}, 0.0, 0.0),
    ("blackman", {}, 0.0, 0.0),
    ("hann", {}, 0.5, 0.5),
    ("hamming", {"alpha": 0.6, "beta": 0.4}, 0.6, 0.4),
    ("kaiser", {"beta": 12.0}, 0.0, 12.0),
    ("kaiser", {"beta": 75.0}, 0.0, 75.0),
]


@pytest.mark.parametrize("n", [1, 2, 17, 64])
@pytest.mark.parametrize("periodic", [False, True])
@pytest.mark.parametrize("kind, kwargs, alpha, beta", CASES)
def test_window_points_match_the_cpu(windows, kind, kwargs, alpha, beta, n, periodic):
    want = getattr(flambeau, f"{kind}_window")(
        n, periodic=periodic, dtype=flambeau.float64, **kwargs
    ).numpy()
    got = host_points(windows, kind, n, periodic, alpha, beta)
    assert np.array_equal(got, want)
