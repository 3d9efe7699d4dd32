"""Rows for views, shape manipulation, joins and rearranging copies."""

import numpy as np

import flambeau

from . import OpTest, Sample, make

# Shape operators move elements without arithmetic: every dtype must work.
DTYPES = (
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
FEW = ("bool", "int64", "bfloat16", "float32", "complex64")


def memory_format_samples(dtype, rng, preserve=True):
    """4-d and 5-d inputs (contiguous, transposed, strided) with each memory format."""
    formats = [flambeau.contiguous_format, flambeau.channels_last]
    formats += [flambeau.preserve_format] if preserve else []
    for layout in ("", "T", "strided"):
        for f in formats:
            yield Sample((arr((2, 3, 4, 5), dtype, rng, layout),), {"memory_format": f})
        yield Sample(
            (arr((2, 3, 1, 2, 2), dtype, rng, layout),),
            {"memory_format": flambeau.channels_last_3d},
        )
    yield Sample((arr((0, 3, 2, 2), dtype, rng),), {"memory_format": flambeau.channels_last})


def arr(shape, dtype, rng, layout=""):
    """An array of `shape`: contiguous, "strided" (every other column) or "T" (transposed)."""
    if layout == "T":
        return make(tuple(reversed(shape)), dtype, rng).T
    # make() returns 16-bit 0-dim samples as shape (1,); keep the shape asked for.
    a = make(shape, dtype, rng, noncontig=layout == "strided")
    return a.reshape(shape) if a.ndim != len(shape) else a


def one_input(cases):
    """Samples from (shape, layout, kwargs) triples."""

    def gen(dtype, rng):
        for shape, layout, kwargs in cases:
            yield Sample((arr(shape, dtype, rng, layout),), dict(kwargs), note=f"{shape} {layout}")

    return gen


def many_inputs(cases):
    """Samples of a list of arrays from ([shapes], layout, kwargs) triples."""

    def gen(dtype, rng):
        for shapes, layout, kwargs in cases:
            arrays = [arr(s, dtype, rng, layout) for s in shapes]
            yield Sample((arrays,), dict(kwargs), note=f"{shapes} {layout}")

    return gen


GENERAL = [
    ((), "", {}),
    ((0, 3), "", {}),
    ((5,), "", {}),
    ((3, 4), "strided", {}),
    ((3, 4), "T", {}),
    ((2, 3, 4), "", {}),
]


def np_flatten(a, start_dim=0, end_dim=-1):
    if a.ndim == 0:
        return a.reshape(1)
    s, e = start_dim % a.ndim, end_dim % a.ndim
    return a.reshape(
        a.shape[:s] + (-1 if a.size else int(np.prod(a.shape[s : e + 1])),) + a.shape[e + 1 :]
    )


def np_unflatten(a, dim, sizes):
    d = dim % a.ndim
    return a.reshape(a.shape[:d] + tuple(sizes) + a.shape[d + 1 :])


def np_squeeze(a, dim=None):
    if dim is None:
        return np.squeeze(a)
    dims = (dim,) if isinstance(dim, int) else dim
    axes = tuple(d % max(a.ndim, 1) for d in dims if a.ndim and a.shape[d] == 1)
    return np.squeeze(a, axis=axes) if axes else a


def np_t(a):
    return a.T if a.ndim == 2 else a


def np_expand(a, size):
    size = tuple(a.shape[i - (len(size) - a.ndim)] if s == -1 else s for i, s in enumerate(size))
    return np.broadcast_to(a, size)


def np_narrow(a, dim, start, length):
    start = start % a.shape[dim] if start < 0 else start
    return np.take(a, range(start, start + length), axis=dim)


def np_split_sizes(a, sizes, dim):
    return tuple(np.split(a, np.cumsum(sizes)[:-1], axis=dim))


def np_split(a, split_size, dim=0):
    n = a.shape[dim]
    sizes = [min(split_size, n - i) for i in range(0, n, split_size)] or [0]
    return np_split_sizes(a, sizes, dim)


def np_chunk(a, chunks, dim=0):
    n = a.shape[dim]
    size = -(-n // chunks)
    return np_split(a, size, dim) if size else tuple(np.split(a, chunks, axis=dim))


def np_unfold(a, dimension, size, step):
    d = dimension % a.ndim
    w = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
    return np.take(w, range(0, w.shape[d], step), axis=d)


def np_as_strided(a, size, stride, storage_offset=0):
    flat = np.ascontiguousarray(a).reshape(-1)[storage_offset:]
    strides = tuple(s * flat.itemsize for s in stride)
    return np.lib.stride_tricks.as_strided(flat, size, strides).copy()


def np_diag_embed(a, offset=0, dim1=-2, dim2=-1):
    n = a.shape[-1] + abs(offset)
    out = np.zeros(a.shape[:-1] + (n, n), dtype=a.dtype)
    idx = np.arange(a.shape[-1])
    rows, cols = (idx, idx + offset) if offset >= 0 else (idx - offset, idx)
    out[..., rows, cols] = a
    nd = a.ndim + 1
    d1, d2 = dim1 % nd, dim2 % nd
    if d1 > d2:  # the diagonal's row dim lands at dim1, column dim at dim2
        out = np.swapaxes(out, -1, -2)
        d1, d2 = d2, d1
    return np.moveaxis(out, (-2, -1), (d1, d2))


def np_hstack(arrays):
    return np.hstack(arrays)


def np_roll(a, shifts, dims=None):
    return np.roll(a, shifts, axis=dims)


def m(fn):
    """Calls a Tensor method: m("view")(t, *args) == t.view(*args)."""
    return lambda t, *a, **k: getattr(t, fn)(*a, **k)


TESTS = [
    OpTest(
        "view",
        lambda a, shape: a.view(shape),
        lambda a, shape: a.reshape(shape),
        one_input(
            [
                ((), "", {"shape": (1,)}),
                ((0, 3), "", {"shape": (3, 0, 1)}),
                ((2, 3, 4), "", {"shape": (6, -1)}),
                ((3, 4), "T", {"shape": (3, 2, 2)}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "view",
        lambda a: a.view(4, 6),
        lambda a: a.reshape(4, 6),
        one_input([((2, 3, 4), "", {})]),
        dtypes=FEW,
        id="view_varargs",
    ),
    OpTest(
        "view",
        lambda a, dtype: a.view(getattr(flambeau, dtype)),
        lambda a, dtype: a.view(dtype),
        one_input(
            [
                ((3, 4), "", {"dtype": "int32"}),
                ((3, 4), "", {"dtype": "uint8"}),
                ((2, 4), "", {"dtype": "int16"}),
                ((0, 4), "", {"dtype": "int16"}),
                ((4, 8), "strided", {"dtype": "float32"}),
            ]
        ),
        dtypes=("float32", "int32"),
        id="view_dtype",
    ),
    OpTest(
        "reshape",
        lambda a, shape: flambeau.reshape(a, shape),
        np.reshape,
        one_input(
            [
                ((), "", {"shape": (1, 1)}),
                ((0, 3), "", {"shape": (-1,)}),
                ((3, 4), "strided", {"shape": (12,)}),
                ((3, 4), "T", {"shape": (2, 6)}),
                ((2, 3, 4), "", {"shape": (4, -1)}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "view_as",
        lambda a: a.view_as(flambeau.zeros(6, 4)),
        lambda a: a.reshape(6, 4),
        one_input([((2, 3, 4), "", {})]),
        dtypes=FEW,
    ),
    OpTest(
        "reshape_as",
        lambda a: a.reshape_as(flambeau.zeros(4, 3)),
        lambda a: a.reshape(4, 3),
        one_input([((3, 4), "T", {}), ((3, 4), "strided", {})]),
        dtypes=FEW,
    ),
    OpTest(
        "flatten",
        flambeau.flatten,
        np_flatten,
        one_input(
            GENERAL
            + [
                ((2, 3, 4), "", {"start_dim": 1}),
                ((2, 3, 4, 5), "strided", {"start_dim": 1, "end_dim": -2}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "unflatten",
        flambeau.unflatten,
        np_unflatten,
        one_input(
            [
                ((6,), "", {"dim": 0, "sizes": (2, 3)}),
                ((4, 6), "strided", {"dim": -1, "sizes": (3, -1)}),
                ((0, 6), "", {"dim": 1, "sizes": (2, 1, 3)}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest("ravel", flambeau.ravel, np.ravel, one_input(GENERAL), dtypes=DTYPES),
    OpTest(
        "squeeze",
        flambeau.squeeze,
        np_squeeze,
        one_input(
            [
                ((), "", {}),
                ((1, 3, 1), "", {}),
                ((1, 3, 1), "", {"dim": 0}),
                ((1, 3, 1), "", {"dim": 1}),
                ((1, 3, 1), "", {"dim": (0, 2)}),
                ((2, 1, 4), "strided", {"dim": -2}),
                ((1, 0), "", {}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "unsqueeze",
        lambda a, dim: a.unsqueeze(dim),
        lambda a, dim: np.expand_dims(a, dim),
        one_input(
            [
                ((), "", {"dim": 0}),
                ((3, 4), "T", {"dim": 1}),
                ((3, 4), "strided", {"dim": -1}),
                ((0,), "", {"dim": 0}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "transpose",
        flambeau.transpose,
        lambda a, d0, d1: np.swapaxes(a, d0, d1) if a.ndim else a,
        lambda d, rng: [
            Sample((arr((2, 3, 4), d, rng), 0, 2)),
            Sample((arr((3, 4), d, rng, "strided"), -1, 0)),
            Sample((arr((), d, rng), 0, -1)),
            Sample((arr((0, 2), d, rng), 0, 1)),
        ],
        dtypes=DTYPES,
    ),
    OpTest(
        "swapaxes",
        flambeau.swapaxes,
        np.swapaxes,
        lambda d, rng: [Sample((arr((2, 3, 4), d, rng), 0, 2))],
        dtypes=FEW,
    ),
    OpTest(
        "swapdims",
        lambda a, x, y: a.swapdims(x, y),
        np.swapaxes,
        lambda d, rng: [Sample((arr((2, 3, 4), d, rng, "strided"), 1, -1))],
        dtypes=FEW,
    ),
    OpTest(
        "t",
        flambeau.t,
        np_t,
        one_input([((), "", {}), ((4,), "", {}), ((3, 4), "strided", {}), ((0, 2), "", {})]),
        dtypes=DTYPES,
    ),
    OpTest(
        "permute",
        lambda a, dims: a.permute(*dims) if dims else a.permute(dims),
        lambda a, dims: np.transpose(a, dims),
        one_input(
            [
                ((), "", {"dims": ()}),
                ((2, 3, 4), "", {"dims": (2, 0, 1)}),
                ((3, 4), "strided", {"dims": (-1, 0)}),
                ((0, 3), "", {"dims": (1, 0)}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "permute",
        lambda a: flambeau.permute(a, (1, 0, 2)),
        lambda a: a.transpose(1, 0, 2),
        one_input([((2, 3, 4), "", {})]),
        dtypes=FEW,
        id="permute_tuple",
    ),
    OpTest(
        "movedim",
        flambeau.movedim,
        np.moveaxis,
        lambda d, rng: [
            Sample((arr((2, 3, 4), d, rng), 0, 2)),
            Sample((arr((2, 3, 4, 5), d, rng, "strided"), (0, 1), (-1, 0))),
        ],
        dtypes=DTYPES,
    ),
    OpTest(
        "moveaxis",
        flambeau.moveaxis,
        np.moveaxis,
        lambda d, rng: [Sample((arr((2, 3, 4), d, rng), (2,), (0,)))],
        dtypes=FEW,
    ),
    OpTest(
        "expand",
        lambda a, size: a.expand(*size),
        np_expand,
        one_input(
            [
                ((), "", {"size": (3, 2)}),
                ((3, 1), "", {"size": (2, 3, 4)}),
                ((1, 4), "strided", {"size": (3, -1)}),
                ((0, 1), "", {"size": (0, 5)}),
                ((1,), "", {"size": (0,)}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "expand_as",
        lambda a: a.expand_as(flambeau.zeros(2, 3, 4)),
        lambda a: np.broadcast_to(a, (2, 3, 4)),
        one_input([((3, 1), "", {})]),
        dtypes=FEW,
    ),
    OpTest(
        "narrow",
        flambeau.narrow,
        np_narrow,
        lambda d, rng: [
            Sample((arr((5, 4), d, rng), 0, 1, 3)),
            Sample((arr((5, 4), d, rng, "T"), -1, -3, 2)),
            Sample((arr((3, 4), d, rng, "strided"), 1, 4, 0)),
        ],
        dtypes=DTYPES,
    ),
    OpTest(
        "select",
        flambeau.select,
        lambda a, dim, i: np.take(a, i, axis=dim),
        lambda d, rng: [
            Sample((arr((5, 4), d, rng), 0, 1)),
            Sample((arr((5, 4), d, rng, "T"), -1, -2)),
            Sample((arr((3,), d, rng), 0, 2)),
            Sample((arr((0, 3), d, rng), 1, 2)),
        ],
        dtypes=DTYPES,
    ),
    OpTest(
        "unbind",
        flambeau.unbind,
        lambda a, dim=0: tuple(np.moveaxis(a, dim, 0)),
        one_input(
            [
                ((3, 4), "", {}),
                ((3, 4), "strided", {"dim": 1}),
                ((0, 2), "", {}),
                ((2, 3, 4), "T", {"dim": -1}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "split",
        flambeau.split,
        np_split,
        lambda d, rng: [
            Sample((arr((7, 3), d, rng), 3)),
            Sample((arr((7, 3), d, rng), 7)),
            Sample((arr((4, 6), d, rng, "strided"), 2, 1)),
            Sample((arr((0, 3), d, rng), 2)),
        ],
        dtypes=DTYPES,
    ),
    OpTest(
        "split",
        flambeau.split,
        np_split_sizes,
        lambda d, rng: [
            Sample((arr((7, 3), d, rng), [2, 0, 5], 0)),
            Sample((arr((4, 6), d, rng, "T"), (1, 5), -1)),
        ],
        dtypes=DTYPES,
        id="split_sizes",
    ),
    OpTest(
        "chunk",
        flambeau.chunk,
        np_chunk,
        lambda d, rng: [
            Sample((arr((7, 3), d, rng), 3)),
            Sample((arr((2, 3), d, rng), 5)),
            Sample((arr((4, 6), d, rng, "strided"), 4, 1)),
            Sample((arr((0, 3), d, rng), 2)),
        ],
        dtypes=DTYPES,
    ),
    OpTest(
        "tensor_split",
        flambeau.tensor_split,
        lambda a, s, dim=0: tuple(np.array_split(a, s, axis=dim)),
        lambda d, rng: [
            Sample((arr((7, 3), d, rng), 3)),
            Sample((arr((2, 3), d, rng), 4, 1)),
            Sample((arr((7, 3), d, rng, "T"), [1, 5])),
            Sample((arr((6, 4), d, rng), (-2, 10), 0)),
            Sample((arr((8,), d, rng), [5, 2])),
        ],
        dtypes=DTYPES,
    ),
    OpTest(
        "diagonal",
        flambeau.diagonal,
        np.diagonal,
        lambda d, rng: [
            Sample((arr((4, 5), d, rng),)),
            Sample((arr((4, 5), d, rng), 2)),
            Sample((arr((4, 5), d, rng, "T"), -1)),
            Sample((arr((2, 3, 4), d, rng), 1, 2, 0)),
            Sample((arr((3, 3), d, rng), 5)),
            Sample((arr((2, 3, 4), d, rng, "strided"), 0, -1, 1)),
        ],
        dtypes=DTYPES,
    ),
    OpTest(
        "unfold",
        lambda a, *args: a.unfold(*args),
        np_unfold,
        lambda d, rng: [
            Sample((arr((7,), d, rng), 0, 2, 1)),
            Sample((arr((4, 9), d, rng, "strided"), 1, 3, 2)),
            Sample((arr((5, 3), d, rng, "T"), 0, 5, 1)),
            Sample((arr((6, 2), d, rng), -2, 0, 3)),
        ],
        dtypes=DTYPES,
    ),
    OpTest(
        "as_strided",
        flambeau.as_strided,
        np_as_strided,
        lambda d, rng: [
            Sample((arr((12,), d, rng), (3, 3), (3, 1))),
            Sample((arr((3, 4), d, rng), (2, 2), (1, 4), 2)),
            Sample((arr((3, 4), d, rng), (4, 3), (0, 1))),
            Sample((arr((3, 4), d, rng), (0, 5), (100, 100))),
        ],
        dtypes=DTYPES,
    ),
    OpTest(
        "contiguous",
        m("contiguous"),
        lambda a: np.array(a, copy=True),
        one_input(GENERAL),
        dtypes=DTYPES,
    ),
    OpTest("clone", flambeau.clone, np.copy, one_input(GENERAL), dtypes=DTYPES),
    OpTest(
        "clone",
        flambeau.clone,
        lambda a, memory_format: np.copy(a),
        lambda d, rng: memory_format_samples(d, rng),
        dtypes=DTYPES,
        id="clone_memory_format",
    ),
    OpTest(
        "contiguous",
        m("contiguous"),
        lambda a, memory_format: np.array(a, copy=True),
        lambda d, rng: memory_format_samples(d, rng, preserve=False),
        dtypes=DTYPES,
        id="contiguous_memory_format",
    ),
    # Joins.
    OpTest(
        "cat",
        flambeau.cat,
        lambda ts, dim=0: np.concatenate(ts, axis=dim),
        many_inputs(
            [
                ([(2, 3), (4, 3)], "", {}),
                ([(3, 2), (3, 4), (3, 1)], "T", {"dim": 1}),
                ([(2, 3), (2, 3)], "strided", {"dim": -1}),
                ([(0, 3), (2, 3)], "", {}),
                ([(5,)], "", {}),
                ([(2, 0, 3), (2, 4, 3)], "", {"dim": 1}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "concat",
        flambeau.concat,
        lambda ts, dim=0: np.concatenate(ts, axis=dim),
        many_inputs([([(2, 3), (2, 4)], "", {"dim": 1})]),
        dtypes=FEW,
    ),
    OpTest(
        "concatenate",
        flambeau.concatenate,
        lambda ts, axis=0: np.concatenate(ts, axis=axis),
        many_inputs([([(2, 3), (2, 4)], "strided", {"axis": -1})]),
        dtypes=FEW,
    ),
    OpTest(
        "stack",
        flambeau.stack,
        lambda ts, dim=0: np.stack(ts, axis=dim),
        many_inputs(
            [
                ([(2, 3), (2, 3)], "", {}),
                ([(3, 2), (3, 2), (3, 2)], "T", {"dim": 2}),
                ([(), ()], "", {}),
                ([(0, 2)], "", {"dim": -1}),
                ([(4,), (4,)], "strided", {"dim": 1}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "hstack",
        flambeau.hstack,
        np.hstack,
        many_inputs([([(2,), (3,)], "", {}), ([(2, 3), (2, 1)], "T", {}), ([(), ()], "", {})]),
        dtypes=DTYPES,
    ),
    OpTest(
        "vstack",
        flambeau.vstack,
        np.vstack,
        many_inputs(
            [([(3,), (3,)], "", {}), ([(2, 3), (1, 3)], "strided", {}), ([(), ()], "", {})]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "dstack",
        flambeau.dstack,
        np.dstack,
        many_inputs(
            [
                ([(3,), (3,)], "", {}),
                ([(2, 3), (2, 3)], "T", {}),
                ([(2, 3, 1), (2, 3, 2)], "", {}),
                ([(), ()], "", {}),
            ]
        ),
        dtypes=DTYPES,
    ),
    # Rearranging copies.
    OpTest(
        "repeat",
        lambda a, reps: a.repeat(*reps),
        np.tile,
        one_input(
            [
                ((), "", {"reps": (2, 3)}),
                ((2, 3), "", {"reps": (2, 1)}),
                ((2, 3), "T", {"reps": (2, 1, 3)}),
                ((3, 4), "strided", {"reps": (1, 2)}),
                ((2, 3), "", {"reps": (0, 2)}),
                ((0,), "", {"reps": (3,)}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "flip",
        lambda a, dims: flambeau.flip(a, dims),
        lambda a, dims: np.flip(a, dims),
        one_input(
            [
                ((), "", {"dims": ()}),
                ((5,), "", {"dims": (0,)}),
                ((3, 4), "strided", {"dims": (0, 1)}),
                ((3, 4), "T", {"dims": (-1,)}),
                ((2, 3, 4), "", {"dims": (0, 2)}),
                ((0, 3), "", {"dims": (1,)}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "fliplr",
        flambeau.fliplr,
        np.fliplr,
        one_input([((3, 4), "T", {}), ((2, 3, 4), "", {})]),
        dtypes=FEW,
    ),
    OpTest(
        "flipud",
        flambeau.flipud,
        np.flipud,
        one_input([((5,), "", {}), ((3, 4), "strided", {})]),
        dtypes=FEW,
    ),
    OpTest(
        "roll",
        flambeau.roll,
        np_roll,
        one_input(
            [
                ((), "", {"shifts": 1}),
                ((7,), "", {"shifts": 3}),
                ((3, 4), "strided", {"shifts": -5}),
                ((3, 4), "T", {"shifts": (1, -1), "dims": (0, 1)}),
                ((2, 3, 4), "", {"shifts": 9, "dims": 2}),
                ((0, 3), "", {"shifts": 2}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "tril",
        flambeau.tril,
        lambda a, diagonal=0: np.tril(a, diagonal),
        one_input(
            [
                ((4, 5), "", {}),
                ((4, 5), "T", {"diagonal": 1}),
                ((2, 3, 4), "strided", {"diagonal": -1}),
                ((3, 3), "", {"diagonal": 5}),
                ((3, 3), "", {"diagonal": -5}),
                ((0, 3), "", {}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "triu",
        flambeau.triu,
        lambda a, diagonal=0: np.triu(a, diagonal),
        one_input(
            [
                ((4, 5), "", {}),
                ((4, 5), "T", {"diagonal": 1}),
                ((2, 3, 4), "strided", {"diagonal": -1}),
                ((3, 3), "", {"diagonal": 5}),
                ((3, 3), "", {"diagonal": -5}),
                ((2, 0, 3), "", {}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "diag",
        flambeau.diag,
        lambda a, diagonal=0: np.diag(a, diagonal),
        one_input(
            [
                ((4,), "", {}),
                ((3,), "", {"diagonal": 2}),
                ((3,), "", {"diagonal": -1}),
                ((4, 5), "T", {}),
                ((4, 5), "strided", {"diagonal": -2}),
                ((0,), "", {}),
                ((3, 3), "", {"diagonal": 4}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "diag_embed",
        flambeau.diag_embed,
        np_diag_embed,
        one_input(
            [
                ((3,), "", {}),
                ((2, 3), "", {"offset": 1}),
                ((2, 3), "T", {"offset": -2, "dim1": 0, "dim2": 2}),
                ((2, 3), "strided", {"dim1": -1, "dim2": 0}),
            ]
        ),
        dtypes=DTYPES,
    ),
]
