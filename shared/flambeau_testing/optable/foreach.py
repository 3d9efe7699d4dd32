"""Rows for the multi-tensor (_foreach_*) operators.

Every sample is a list of tensors of mixed shapes (0-dim, empty, strided,
transposed, over the threading grain) and, for the fused fast path, lists of
same-shaped contiguous tensors. The in-place forms return None; their rows
return the updated list. References compute in float64 (int64 for integers).
"""

import numpy as np

import flambeau

from . import OpTest, Sample, make

FLOAT = ("float16", "bfloat16", "float32", "float64")
INTS = ("int32", "int64")
REAL = FLOAT + INTS + ("uint8",)


def wide(a):
    return a.astype(np.int64 if a.dtype.kind in "biu" else np.float64)


def tensor_lists(dtype, rng, n, low=-3.0, high=3.0):
    """Samples whose args are n lists of tensors (the same shapes in every list)."""

    def lists(specs):
        out = []
        for _ in range(n):
            out.append([make(s, dtype, rng, low=low, high=high, noncontig=nc) for s, nc in specs])
        return out

    mixed = [((), False), ((0,), False), ((7,), False), ((3, 5), True), ((2, 3, 40), False)]
    yield Sample(tuple(lists(mixed)), note="mixed shapes, strided")
    yield Sample(tuple(lists([((70, 600), False)] * 2)), note="over the grain")
    yield Sample(tuple(lists([((4, 3), False)])), note="one tensor")
    transposed = [[make((4, 3), dtype, rng, low=low, high=high).T] for _ in range(n)]
    yield Sample(tuple(transposed), note="transposed")
    # Several tensors, each small enough for the autograd tests' finite differences.
    yield Sample(tuple(lists([((), False), ((3,), False), ((2, 3), True)])), note="small mixed")


def is_int(dtype):
    return dtype in INTS or dtype == "uint8"


def scalar_for(dtype):
    return 2 if is_int(dtype) else 0.75


def with_scalar(base, scalar_of):
    """Appends a scalar (or scalar list, via scalar_of(dtype, n)) to each sample."""

    def samples(dtype, rng):
        for s in base(dtype, rng):
            n = len(s.args[0])
            yield Sample(s.args + (scalar_of(dtype, n),), s.kwargs, s.note)

    return samples


def returning_self(fn):
    """An in-place foreach op checked through the list it updated."""

    def run(*args, **kw):
        assert fn(*args, **kw) is args[0]  # PyTorch hands back the list it was given
        return tuple(args[0])

    return run


def each(ref):
    """A per-tensor reference over the lists (scalar lists are indexed too)."""

    def run(*args, **kw):
        n = len(args[0])
        out = []
        for i in range(n):
            picked = [a[i] if isinstance(a, list) else a for a in args]
            out.append(ref(*[wide(p) if isinstance(p, np.ndarray) else p for p in picked], **kw))
        return tuple(out)

    return run


def row(name, ref, samples, dtypes, inplace=True, ident=None, **kw):
    """The out-of-place and in-place rows of one overload."""
    fn = getattr(flambeau, name)
    rows = [
        OpTest(
            name,
            lambda *a, fn=fn, **k: tuple(fn(*a, **k)),
            each(ref),
            samples,
            dtypes,
            id=ident or name,
            **kw,
        )
    ]
    if inplace:
        fn_ = getattr(flambeau, name + "_")
        rows.append(
            OpTest(
                name + "_",
                returning_self(fn_),
                each(ref),
                samples,
                dtypes,
                id=(ident or name) + "_",
                **kw,
            )
        )
    return rows


def lists1(d, rng):
    return tensor_lists(d, rng, 1)


def lists2(d, rng):
    return tensor_lists(d, rng, 2)


def positive1(d, rng):
    return tensor_lists(d, rng, 1, low=0.25, high=3.0)


def scalars(dtype, n):
    return [scalar_for(dtype) + k for k in range(n)]


def one_scalar(dtype, n):
    return scalar_for(dtype)


TESTS = []

# add / sub: Scalar, List (alpha), ScalarList.
for name, op in [("_foreach_add", np.add), ("_foreach_sub", np.subtract)]:
    TESTS += row(
        name,
        op,
        with_scalar(lists1, one_scalar),
        REAL if name.endswith("add") else FLOAT + INTS,
        ident=name + ".Scalar",
    )
    TESTS += row(
        name,
        lambda a, b, op=op: op(a, b),
        lists2,
        REAL if name.endswith("add") else FLOAT + INTS,
        ident=name + ".List",
    )
    TESTS += row(
        name,
        lambda a, b, s, op=op: op(a, s * b),
        with_scalar(lists2, lambda d, n: scalar_for(d)),
        FLOAT + INTS,
        ident=name + ".List alpha",
    )
    TESTS += row(name, op, with_scalar(lists1, scalars), FLOAT + INTS, ident=name + ".ScalarList")

# alpha is keyword-only: the rows above pass it positionally through a wrapper.
for r in TESTS:
    if r.id.endswith("alpha") or r.id.endswith("alpha_"):
        inner = r.fn
        r.fn = lambda a, b, s, inner=inner: inner(a, b, alpha=s)

# mul / div: Scalar, List, ScalarList, Tensor.
for name, op, dtypes in [("_foreach_mul", np.multiply, REAL), ("_foreach_div", np.divide, FLOAT)]:
    nonzero = positive1 if name.endswith("div") else lists1

    def other_nonzero(d, rng, name=name):
        for s in tensor_lists(d, rng, 2):
            yield Sample((s.args[0], [np.asarray(abs(b) + 1) for b in s.args[1]]), note=s.note)

    TESTS += row(name, op, with_scalar(lists1, one_scalar), dtypes, ident=name + ".Scalar")
    TESTS += row(name, op, other_nonzero, dtypes, ident=name + ".List")
    TESTS += row(name, op, with_scalar(lists1, scalars), dtypes, ident=name + ".ScalarList")
    TESTS += row(
        name,
        op,
        with_scalar(lists1, lambda d, n: make((), d, np.random.default_rng(1), low=1, high=3)),
        dtypes,
        ident=name + ".Tensor",
    )

# maximum / minimum / clamp_min / clamp_max: Scalar and List.
for name, op in [
    ("_foreach_maximum", np.maximum),
    ("_foreach_minimum", np.minimum),
    ("_foreach_clamp_min", np.maximum),
    ("_foreach_clamp_max", np.minimum),
]:
    TESTS += row(
        name, op, with_scalar(lists1, lambda d, n: 1), FLOAT + INTS, ident=name + ".Scalar"
    )
    TESTS += row(name, op, lists2, FLOAT + INTS, ident=name + ".List")

# pow: Scalar, List, ScalarList exponents; a scalar base.
TESTS += row(
    "_foreach_pow",
    np.power,
    with_scalar(positive1, lambda d, n: 1.5),
    FLOAT,
    ident="_foreach_pow.Scalar",
)
TESTS += row(
    "_foreach_pow",
    np.power,
    with_scalar(lists1, lambda d, n: 2),
    FLOAT,
    ident="_foreach_pow.Scalar square",
)


def pow_lists(d, rng):
    for s in tensor_lists(d, rng, 2, low=0.5, high=2.0):
        yield Sample(s.args, note=s.note)


TESTS += row("_foreach_pow", np.power, pow_lists, FLOAT, ident="_foreach_pow.List")
TESTS += row(
    "_foreach_pow",
    np.power,
    with_scalar(positive1, lambda d, n: [0.5 + k for k in range(n)]),
    FLOAT,
    ident="_foreach_pow.ScalarList",
)


def rpow_samples(d, rng):
    for s in tensor_lists(d, rng, 1, low=-1.0, high=2.0):
        yield Sample((1.7, s.args[0]), note=s.note)


TESTS.append(
    OpTest(
        "_foreach_pow",
        lambda b, e: tuple(flambeau._foreach_pow(b, e)),
        lambda b, e: tuple(np.power(b, wide(x)) for x in e),
        rpow_samples,
        FLOAT,
        id="_foreach_pow.ScalarAndTensor",
    )
)

# addcmul / addcdiv: Scalar value, ScalarList, Tensor of scalars.
for name, op, dtypes in [
    ("_foreach_addcmul", np.multiply, FLOAT + INTS),
    ("_foreach_addcdiv", np.divide, FLOAT),
]:

    def three(d, rng, name=name):
        for s in tensor_lists(d, rng, 3):
            a, b, c = s.args
            if name.endswith("addcdiv"):
                c = [np.asarray(abs(x) + 0.5) for x in c]
            yield Sample((a, b, c), note=s.note)

    TESTS += row(
        name, lambda a, b, c, op=op: a + op(b, c), three, dtypes, ident=name + ".Scalar default"
    )
    TESTS += row(
        name,
        lambda a, b, c, v, op=op: a + v * op(b, c),
        with_scalar(three, lambda d, n: -2 if is_int(d) else -0.5),
        dtypes,
        ident=name + ".Scalar",
    )
    TESTS += row(
        name,
        lambda a, b, c, v, op=op: a + v * op(b, c),
        with_scalar(
            three,
            lambda d, n: (
                [k - 1 for k in range(n)] if is_int(d) else [0.5 * k - 1 for k in range(n)]
            ),
        ),
        FLOAT,
        ident=name + ".ScalarList",
    )
    TESTS += row(
        name,
        lambda a, b, c, v, op=op: a + v * op(b, c),
        with_scalar(three, lambda d, n: np.array([0.5 * k - 1 for k in range(n)])),
        FLOAT,
        ident=name + ".Tensor",
    )
    # The .Tensor reference indexes the scalars array like a list.
    for r in TESTS[-2:]:
        ref = r.ref
        r.ref = lambda a, b, c, v, ref=ref: ref(a, b, c, list(v))

# lerp: Scalar weight (both halves of the formula) and List of weights.
for w in (0.3, 0.7):
    TESTS += row(
        "_foreach_lerp",
        lambda a, b, w: a + w * (b - a),
        with_scalar(lists2, lambda d, n, w=w: w),
        FLOAT,
        ident=f"_foreach_lerp.Scalar {w}",
    )


def lerp_lists(d, rng):
    for s in tensor_lists(d, rng, 2):
        weights = [
            make(x.shape, d, rng, low=0.0, high=1.0)
            if x.ndim
            else make((), d, rng, low=0.0, high=1.0)
            for x in s.args[0]
        ]
        yield Sample(s.args + (weights,), note=s.note)


TESTS += row(
    "_foreach_lerp", lambda a, b, w: a + w * (b - a), lerp_lists, FLOAT, ident="_foreach_lerp.List"
)

# Unary operators.
for name, op, dtypes, samples in [
    ("_foreach_sqrt", np.sqrt, FLOAT, positive1),
    ("_foreach_neg", np.negative, FLOAT + INTS, lists1),
    ("_foreach_abs", np.abs, FLOAT + INTS, lists1),
    ("_foreach_exp", np.exp, FLOAT, lists1),
    ("_foreach_sign", np.sign, FLOAT + INTS, lists1),
    ("_foreach_reciprocal", np.reciprocal, FLOAT, positive1),
]:
    TESTS += row(name, op, samples, dtypes)

TESTS.append(
    OpTest(
        "_foreach_zero_",
        returning_self(flambeau._foreach_zero_),
        each(np.zeros_like),
        lists1,
        REAL + ("bool",),
    )
)
TESTS.append(
    OpTest(
        "_foreach_copy_",
        returning_self(flambeau._foreach_copy_),
        each(lambda a, b: b),
        lists2,
        REAL,
    )
)


def norm_ref(a, ord=2, dtype=None):
    flat = a.reshape(-1).astype(np.float64)
    if flat.size == 0:
        return np.float64(0.0)
    return np.linalg.norm(flat, ord)


def norm_samples(d, rng):
    for s in lists1(d, rng):
        yield s
        yield Sample(s.args, {"ord": 1}, note=s.note + ", ord 1")
        nonempty = [a for a in s.args[0] if a.size]  # inf has no identity for empty ones
        yield Sample((nonempty, float("inf")), note=s.note + ", ord inf")


TESTS.append(
    OpTest(
        "_foreach_norm",
        lambda *a, **k: tuple(flambeau._foreach_norm(*a, **k)),
        each(norm_ref),
        norm_samples,
        FLOAT,
        rtol=None,
    )
)
TESTS.append(
    OpTest(
        "_foreach_norm",
        lambda *a, **k: tuple(flambeau._foreach_norm(*a, **k)),
        each(norm_ref),
        lambda d, rng: (Sample(s.args, {"dtype": flambeau.float64}) for s in lists1(d, rng)),
        ("float32",),
        id="_foreach_norm dtype",
    )
)
