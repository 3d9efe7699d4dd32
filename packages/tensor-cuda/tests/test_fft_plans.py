"""The cuFFT plans the FFT kernels run (csrc/backend/kernels/fft_plan.h), compiled for
the host with g++: each plan's advanced layout (n, inembed/onembed, strides, dists,
batch) and its repetitions are carried out with NumPy on flat buffers, as cuFFT would
read and write them, and the result must be numpy.fft's transform over the buffer's
last k dims (unnormalized, as cuFFT). Also the order in which a kernel packs a
tensor's dims (untransformed ones first, then the transformed ones as given)."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from host_build import compile_host_program


@pytest.fixture(scope="module")
def printer(tmp_path_factory):
    exe = compile_host_program("print_fft_plans.cpp", tmp_path_factory.mktemp("fft_plans"))

    def run(*args):
        out = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    return run


def _offsets(n, embed, stride):
    """Element offsets of a signal of shape n stored in an embed-shaped box."""
    return np.ravel_multi_index(np.indices(n), embed) * stride


def _execute(step, real, spectrum, forward):
    """One plan, run step["count"] times, on the flat buffers (c2c in place on
    spectrum; r2c real -> spectrum; c2r spectrum -> real)."""
    kind, n = step["kind"], tuple(step["n"])
    src = real if kind == "r2c" else spectrum
    dst = real if kind == "c2r" else spectrum
    half = n[:-1] + (n[-1] // 2 + 1,)
    in_shape = half if kind == "c2r" else n
    out_shape = half if kind == "r2c" else n
    axes = tuple(range(1, len(n) + 1))
    batch = np.arange(step["batch"]).reshape((-1,) + (1,) * len(n))
    in_idx = batch * step["idist"] + _offsets(in_shape, step["inembed"], step["istride"])
    out_idx = batch * step["odist"] + _offsets(out_shape, step["onembed"], step["ostride"])
    for e in range(step["count"]):
        x = src[e * step["in_step"] + in_idx]  # every batch read before any write
        if kind == "r2c":
            y = np.fft.rfftn(x, axes=axes)
        elif kind == "c2r":
            y = np.fft.irfftn(x, s=n, axes=axes) * np.prod(n)
        elif forward:
            y = np.fft.fftn(x, axes=axes)
        else:
            y = np.fft.ifftn(x, axes=axes) * np.prod(n)
        dst[e * step["out_step"] + out_idx] = y


CASES = [
    ((7,), 1),
    ((3, 8), 1),
    ((3, 8), 2),
    ((2, 3, 4), 3),
    ((1, 5, 1, 6), 2),
    ((3, 4, 5, 6), 4),
    ((2, 3, 4, 5, 3), 4),
    ((2, 3, 4, 5, 3), 5),
    ((3, 1, 4, 2, 5, 2), 6),
]


@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("sizes,k", CASES)
def test_c2c_plans_give_numpys_transform(printer, sizes, k, forward):
    rng = np.random.default_rng(len(sizes) * 10 + k)
    x = rng.standard_normal(sizes) + 1j * rng.standard_normal(sizes)
    buffer = x.ravel().copy()
    for step in printer("c2c", k, *sizes):
        _execute(step, None, buffer, forward)
    axes = tuple(range(len(sizes) - k, len(sizes)))
    want = (
        np.fft.fftn(x, axes=axes)
        if forward
        else np.fft.ifftn(x, axes=axes) * np.prod([sizes[a] for a in axes])
    )
    np.testing.assert_allclose(buffer.reshape(sizes), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("sizes,k", CASES + [((4, 9), 1), ((3, 5, 9), 2)])
def test_r2c_and_c2r_plans_give_numpys_transforms(printer, sizes, k):
    rng = np.random.default_rng(len(sizes) * 10 + k + 1)
    x = rng.standard_normal(sizes)
    axes = tuple(range(len(sizes) - k, len(sizes)))
    half = sizes[:-1] + (sizes[-1] // 2 + 1,)
    spectrum = np.zeros(int(np.prod(half)), dtype=complex)
    for step in printer("r2c", k, *sizes):
        _execute(step, x.ravel().copy(), spectrum, True)
    want = np.fft.rfftn(x, axes=axes)
    np.testing.assert_allclose(spectrum.reshape(half), want, rtol=1e-10, atol=1e-10)
    # c2r of that spectrum (overwritten on the way, as cuFFT's c2r may) gives back
    # the signal times its number of points.
    real = np.zeros(x.size)
    for step in printer("c2r", k, *sizes):
        _execute(step, real, spectrum, False)
    points = np.prod([sizes[a] for a in axes])
    np.testing.assert_allclose(real.reshape(sizes), x * points, rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize(
    "ndim,dims,want",
    [
        (1, [0], [0]),
        (3, [2], [0, 1, 2]),
        (3, [0], [1, 2, 0]),
        (4, [3, 1], [0, 2, 3, 1]),
        (4, [1, 3], [0, 2, 1, 3]),
        (3, [2, 0, 1], [2, 0, 1]),
    ],
)
def test_dims_are_packed_last_in_the_order_given(printer, ndim, dims, want):
    assert printer("perm", ndim, *dims) == want
