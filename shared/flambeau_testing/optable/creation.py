"""Rows for creating, copying, filling and converting tensors."""

import numpy as np

import flambeau

from . import OpTest, Sample, make
from .shape import DTYPES, FEW, GENERAL, arr, memory_format_samples

NUMERIC = ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")


def fdt(name):
    """A flambeau dtype from its name (None stays None)."""
    return None if name is None else getattr(flambeau, name)


def ndt(name):
    """The NumPy dtype flambeau's dtype converts to (bfloat16 comes back as float32)."""
    return None if name is None else np.float32 if name == "bfloat16" else np.dtype(name)


def creation(cases):
    """Samples with the row's dtype passed as dtype= to both sides."""

    def gen(dtype, rng):
        for args, kwargs in cases:
            yield Sample(args, {**kwargs, "dtype": dtype})

    return gen


def fcall(fn):
    return lambda *a, dtype=None, **k: fn(*a, dtype=fdt(dtype), **k)


def ncall(fn):
    return lambda *a, dtype=None, **k: fn(*a, dtype=ndt(dtype), **k)


SIZES = [(((2, 3),), {}), (((),), {}), (((0, 4),), {})]


def like_samples(dtype, rng):
    for shape, layout, _ in GENERAL:
        yield Sample((arr(shape, dtype, rng, layout),))


def np_to(name):
    return lambda a: a.astype(ndt(name))


def cast_samples(d, rng):
    yield Sample((make((3, 4), d, rng, low=0, high=5),))
    yield Sample((arr((3, 4), d, rng, "T"),))
    if d in ("float32", "float64"):
        # Multiples of 1/16 below 16 in magnitude: exact in every float type (bfloat16 keeps
        # 8 significant bits), and so are their neighbours one step of 1/16 away.
        yield Sample(((rng.integers(-255, 256, (2, 3)) / 16).astype(d),), note="exact in 16 bits")


def casts():
    rows = []
    for meth, name in [
        ("float", "float32"),
        ("double", "float64"),
        ("half", "float16"),
        ("bfloat16", "bfloat16"),
        ("long", "int64"),
        ("int", "int32"),
        ("short", "int16"),
        ("char", "int8"),
        ("byte", "uint8"),
        ("bool", "bool"),
    ]:
        rows.append(
            OpTest(
                meth,
                lambda a, meth=meth: getattr(a, meth)(),
                np_to(name),
                cast_samples,
                dtypes=("bool", "uint8", "int32", "float32", "float64"),
                rtol=1e-2,
                atol=1e-2,
            )
        )
    return rows


def copy_samples(dtype, rng):
    yield Sample((arr((3, 4), dtype, rng), arr((3, 4), dtype, rng, "T")))
    yield Sample((arr((3, 4), dtype, rng, "strided"), arr((4,), dtype, rng)), note="broadcast")
    yield Sample((arr((), dtype, rng), arr((), dtype, rng)))
    yield Sample((arr((0, 2), dtype, rng), arr((2,), dtype, rng)))


def np_copy_(a, b):
    out = a.copy()
    out[...] = b
    return out


def np_fill_(a, value):
    out = a.copy()
    out[...] = value
    return out


TESTS = [
    OpTest("zeros", fcall(flambeau.zeros), ncall(np.zeros), creation(SIZES), dtypes=DTYPES),
    OpTest(
        "zeros",
        lambda dtype: flambeau.zeros(2, 3, dtype=fdt(dtype)),
        lambda dtype: np.zeros((2, 3)),
        creation([((), {})]),
        dtypes=FEW,
        id="zeros_varargs",
    ),
    OpTest("ones", fcall(flambeau.ones), ncall(np.ones), creation(SIZES), dtypes=DTYPES),
    OpTest(
        "full",
        fcall(flambeau.full),
        ncall(np.full),
        creation([(((2, 3), 1), {}), (((), 2), {}), (((0,), 3), {})]),
        dtypes=DTYPES,
    ),
    OpTest(
        "empty_strided",
        lambda s, st, dtype: flambeau.empty_strided(s, st, dtype=fdt(dtype)).zero_(),
        lambda s, st, dtype: np.zeros(s, ndt(dtype)),
        creation([(((2, 3), (1, 2)), {}), (((), ()), {}), (((0, 3), (3, 1)), {})]),
        dtypes=FEW,
    ),
    OpTest("zeros_like", flambeau.zeros_like, np.zeros_like, like_samples, dtypes=DTYPES),
    OpTest("ones_like", flambeau.ones_like, np.ones_like, like_samples, dtypes=DTYPES),
    OpTest(
        "ones_like",
        lambda a: flambeau.ones_like(a, dtype=flambeau.int32),
        lambda a: np.ones_like(a, dtype=np.int32),
        like_samples,
        dtypes=FEW,
        id="ones_like_dtype",
    ),
    OpTest(
        "full_like",
        lambda a: flambeau.full_like(a, 1),
        lambda a: np.full_like(a, 1),
        like_samples,
        dtypes=DTYPES,
    ),
    OpTest(
        "zeros_like",
        flambeau.zeros_like,
        lambda a, memory_format: np.zeros_like(a),
        memory_format_samples,
        dtypes=FEW,
        id="zeros_like_memory_format",
    ),
    OpTest(
        "full_like",
        lambda a, memory_format: flambeau.full_like(a, 2, memory_format=memory_format),
        lambda a, memory_format: np.full_like(a, 2),
        memory_format_samples,
        dtypes=FEW,
        id="full_like_memory_format",
    ),
    OpTest(
        "empty_like",
        lambda a: flambeau.empty_like(a).fill_(1),
        np.ones_like,
        like_samples,
        dtypes=DTYPES,
    ),
    OpTest(
        "arange",
        fcall(flambeau.arange),
        ncall(np.arange),
        creation([((5,), {}), ((1, 10, 3), {}), ((10, 1, -3), {}), ((0,), {}), ((3, 3), {})]),
        dtypes=NUMERIC,
    ),
    OpTest(
        "arange",
        fcall(flambeau.arange),
        ncall(np.arange),
        creation(
            [
                ((0, 1, 0.1), {}),
                ((-1.5, 2.5, 0.5), {}),
                ((1, 2.2, 0.4), {}),
                ((2.5,), {}),
                ((5, -1, -0.75), {}),
            ]
        ),
        dtypes=("float32", "float64"),
        id="arange_float",
    ),
    OpTest(
        "linspace",
        fcall(flambeau.linspace),
        ncall(np.linspace),
        creation(
            [
                ((0, 1, 5), {}),
                ((-2.5, 7, 11), {}),
                ((3, 3, 1), {}),
                ((0, 1, 0), {}),
                ((10, -10, 21), {}),
            ]
        ),
        dtypes=("float16", "bfloat16", "float32", "float64", "complex64"),
    ),
    OpTest(
        "linspace",
        fcall(flambeau.linspace),
        ncall(np.linspace),
        creation([((0, 10, 6), {}), ((-4, 4, 9), {})]),
        dtypes=("int32", "int64"),
        id="linspace_int",
    ),
    OpTest(
        "logspace",
        fcall(flambeau.logspace),
        ncall(np.logspace),
        creation([((0, 3, 4), {}), ((-2, 2, 9), {}), ((0, 4, 5), {"base": 2.0}), ((1, 1, 0), {})]),
        dtypes=("float32", "float64"),
        rtol=1e-5,
    ),
    OpTest(
        "eye",
        fcall(flambeau.eye),
        lambda n, m=None, dtype=None: np.eye(n, m),
        creation([((3,), {}), ((2, 4), {}), ((4, 2), {}), ((0,), {}), ((3, 0), {})]),
        dtypes=DTYPES,
    ),
    OpTest(
        "meshgrid",
        lambda *ts, **kw: flambeau.meshgrid(*ts, **kw),
        lambda *ts, **kw: tuple(np.meshgrid(*ts, **{"indexing": "ij", **kw})),
        lambda d, rng: [
            Sample((arr((3,), d, rng), arr((4,), d, rng))),
            Sample((arr((3,), d, rng), arr((4,), d, rng), arr((2,), d, rng)), {"indexing": "xy"}),
            Sample((arr((3,), d, rng), arr((0,), d, rng)), {"indexing": "ij"}),
            Sample((arr((5,), d, rng, "strided"),)),
        ],
        dtypes=DTYPES,
    ),
    OpTest(
        "meshgrid",
        lambda a, b: flambeau.meshgrid([a, b], indexing="xy"),
        lambda a, b: tuple(np.meshgrid(a, b)),
        lambda d, rng: [Sample((arr((3,), d, rng), arr((4,), d, rng)))],
        dtypes=FEW,
        id="meshgrid_list",
    ),
    # Copies and fills.
    OpTest("copy_", lambda a, b: a.copy_(b), np_copy_, copy_samples, dtypes=DTYPES),
    OpTest(
        "copy_",
        lambda a, b: a.copy_(b.to(flambeau.float64)),
        np_copy_,
        copy_samples,
        dtypes=NUMERIC,
        id="copy_convert",
    ),
    OpTest("fill_", lambda a: a.fill_(1), lambda a: np_fill_(a, 1), like_samples, dtypes=DTYPES),
    OpTest("zero_", lambda a: a.zero_(), np.zeros_like, like_samples, dtypes=DTYPES),
    # Conversions.
    OpTest(
        "to",
        lambda a, name: a.to(fdt(name)),
        lambda a, name: a.astype(ndt(name)),
        lambda d, rng: [
            Sample((arr((3, 4), d, rng, "T"), n))
            for n in ("float64", "int32", "bool", "float16", "bfloat16", "complex64")
        ],
        dtypes=("uint8", "int64", "float32", "float64"),
        rtol=1e-2,
        atol=1e-2,
    ),
    OpTest(
        "to",
        lambda a: a.to("cpu", flambeau.float64),
        lambda a: a.astype(np.float64),
        like_samples,
        dtypes=("bool", "int64", "bfloat16", "float32"),
        id="to_device_dtype",
    ),
    OpTest(
        "to",
        lambda a: a.to(flambeau.zeros(1, dtype=flambeau.int16)),
        lambda a: a.astype(np.int16),
        like_samples,
        dtypes=("int64", "float32"),
        id="to_other",
    ),
    OpTest(
        "type_as",
        lambda a: a.type_as(flambeau.zeros(1, dtype=flambeau.float64)),
        lambda a: a.astype(np.float64),
        like_samples,
        dtypes=NUMERIC,
    ),
    OpTest("cpu", lambda a: a.cpu(), lambda a: a, like_samples, dtypes=FEW),
    *casts(),
]
