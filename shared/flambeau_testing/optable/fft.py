"""Rows for the FFT operators (ops/fft.yaml) against numpy.fft in double precision.

The samples crop and zero-pad (n, s), take odd and even lengths, every norm,
explicit, negative and reordered dims, strided inputs and length-1 signals.
NumPy has hfft and ihfft in 1-D only; their n-D references are irfftn and rfftn
of conjugates with the norm's direction swapped. test_fft.py compares the
transforms to dense DFT matrices too, and checks dtypes and errors.
"""

import numpy as np

import flambeau

from . import COMPLEX, FLOATS, OpTest, Sample, make

SWAPPED = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _wide(x):
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def _axes(x, s, dim):
    """torch.fft's n-D rule: dim, else the last len(s) dims, else all."""
    if dim is not None:
        return [dim] if isinstance(dim, int) else list(dim)
    if s is not None:
        return list(range(x.ndim - len(s), x.ndim))
    return list(range(x.ndim))


def _sizes(x, s, axes, half_spectrum):
    """s with -1 (or no s) meaning the input's size (2 * (size - 1) for the last dim
    of a half spectrum)."""
    s = [-1] * len(axes) if s is None else list(s)
    out = [x.shape[a] if v == -1 else v for a, v in zip(axes, s)]
    if half_spectrum and s and s[-1] == -1:
        out[-1] = 2 * (x.shape[axes[-1]] - 1)
    return out


def ref_nd(kind):
    """A NumPy reference with torch's (input, s, dim, norm) for an n-D transform kind."""

    def ref(x, s=None, dim=None, norm=None):
        x = _wide(x)
        axes = _axes(x, s, dim)
        if not axes:
            return x.astype(np.complex128)
        sizes = _sizes(x, s, axes, kind in ("irfft", "hfft"))
        if kind == "fft":
            return np.fft.fftn(x, sizes, axes, norm)
        if kind == "ifft":
            return np.fft.ifftn(x, sizes, axes, norm)
        if kind == "rfft":
            return np.fft.rfftn(x, sizes, axes, norm)
        if kind == "irfft":
            return np.fft.irfftn(x, sizes, axes, norm)
        if kind == "hfft":
            return np.fft.irfftn(np.conj(x), sizes, axes, SWAPPED[norm])
        return np.conj(np.fft.rfftn(x, sizes, axes, SWAPPED[norm]))  # ihfft

    return ref


def ref_1d(kind):
    nd = ref_nd(kind)

    def ref(x, n=None, dim=-1, norm=None):
        return nd(x, None if n is None else [n], [dim], norm)

    return ref


def samples_1d(dtype, rng):
    m = lambda shape, **kw: make(shape, dtype, rng, **kw)  # noqa: E731
    yield Sample((m((7,)),))
    yield Sample((m((8,)),), {"norm": "ortho"}, note="even length")
    yield Sample((m((2, 8)),), {"n": 5, "norm": "forward"}, note="cropped")
    yield Sample((m((3, 5)),), {"n": 8, "dim": 0, "norm": "backward"}, note="padded, dim 0")
    yield Sample((m((4, 3)).T,), {"n": 3}, note="transposed")
    yield Sample((m((2, 6), noncontig=True),), {"dim": -1}, note="strided")
    yield Sample((m((2, 3, 6)),), {"dim": 1, "n": 4}, note="middle dim")
    yield Sample((m((2, 1)),), {"n": 1}, note="one point")


def samples_2d(dtype, rng):
    m = lambda shape, **kw: make(shape, dtype, rng, **kw)  # noqa: E731
    yield Sample((m((4, 5)),))
    yield Sample((m((3, 4, 6)),), {"s": (5, 3), "dim": (0, 2), "norm": "ortho"}, note="pad+crop")
    yield Sample((m((4, 6)),), {"s": (-1, 7), "norm": "forward"}, note="s of -1")
    yield Sample((m((2, 3, 4)),), {"dim": (-1, -3)}, note="reordered dims")
    yield Sample((m((5, 3)).T,), {"s": (2, 4)}, note="transposed")


def samples_nd(dtype, rng, complex_to_complex=False):
    m = lambda shape, **kw: make(shape, dtype, rng, **kw)  # noqa: E731
    yield Sample((m((2, 3, 4)),))
    yield Sample((m((2, 3, 4)),), {"s": (3, 5), "norm": "ortho"}, note="last len(s) dims")
    yield Sample((m((3, 2, 5)),), {"s": (4, 2), "dim": (0, 2), "norm": "forward"})
    yield Sample((m((3, 5), noncontig=True),), {"dim": (1,)}, note="strided")
    yield Sample((m((6,)),), {"dim": 0}, note="an int dim")
    if complex_to_complex:
        yield Sample((m((2, 3)),), {"dim": ()}, note="no dims: a copy")
        yield Sample((m(()),), note="0-dim: a copy")


def nd_c2c(dtype, rng):
    return samples_nd(dtype, rng, complex_to_complex=True)


def _row(name, ref, samples, dtypes):
    """The row of fft_<name>, called as flambeau.fft.<name>."""
    return OpTest(f"fft_{name}", getattr(flambeau.fft, name), ref, samples, dtypes=dtypes)


def public_rows():
    real_input = ("rfft", "ihfft")  # the others take complex input too
    rows = []
    for kind in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        dtypes = FLOATS if kind in real_input else FLOATS + COMPLEX
        nd = nd_c2c if kind in ("fft", "ifft") else samples_nd
        rows += [
            _row(kind, ref_1d(kind), samples_1d, dtypes),
            _row(f"{kind}2", ref_nd(kind), samples_2d, dtypes),
            _row(f"{kind}n", ref_nd(kind), nd, dtypes),
        ]
    return rows


# ---- the primitives ------------------------------------------------------------

SCALE = {0: "backward", 1: "ortho", 2: "forward"}  # numpy's name for a forward transform


def _numpy_norm(normalization, forward):
    name = SCALE[normalization]
    return name if forward or name == "ortho" else SWAPPED[name]


def ref_c2c(x, dim, normalization, forward):
    fn = np.fft.fftn if forward else np.fft.ifftn
    return fn(_wide(x), axes=dim, norm=_numpy_norm(normalization, forward)) if dim else x


def ref_r2c(x, dim, normalization, onesided):
    fn = np.fft.rfftn if onesided else np.fft.fftn
    return fn(_wide(x), axes=dim, norm=_numpy_norm(normalization, True))


def ref_c2r(x, dim, normalization, last_dim_size):
    sizes = [x.shape[d] for d in dim[:-1]] + [last_dim_size]
    return np.fft.irfftn(_wide(x), sizes, dim, _numpy_norm(normalization, False))


def c2c_samples(dtype, rng):
    yield Sample((make((3, 4), dtype, rng), [0, 1], 0, True))
    yield Sample((make((3, 4), dtype, rng), [-1], 1, False))
    yield Sample((make((2, 5, 3), dtype, rng, noncontig=True), [2, 0], 2, True), note="strided")
    yield Sample((make((2, 3), dtype, rng), [], 2, True), note="no dims: a copy")
    yield Sample((make((0, 3), dtype, rng), [1], 0, True), note="empty batch")


def r2c_samples(dtype, rng):
    yield Sample((make((3, 4), dtype, rng), [0, 1], 0, True))
    yield Sample((make((3, 5), dtype, rng), [1], 1, False), note="full spectrum")
    yield Sample((make((5, 3), dtype, rng).T, [-1, 0], 2, True), note="transposed")


def c2r_samples(dtype, rng):
    yield Sample((make((3, 3), dtype, rng), [0, 1], 0, 4))
    yield Sample((make((3, 3), dtype, rng), [0, 1], 2, 5), note="odd last size")
    yield Sample((make((4, 2), dtype, rng), [0], 1, 7), note="one dim")


TESTS = public_rows() + [
    OpTest("_fft_c2c", flambeau._fft_c2c, ref_c2c, c2c_samples, dtypes=COMPLEX),
    OpTest("_fft_r2c", flambeau._fft_r2c, ref_r2c, r2c_samples, dtypes=FLOATS),
    OpTest("_fft_c2r", flambeau._fft_c2r, ref_c2r, c2r_samples, dtypes=COMPLEX),
]
