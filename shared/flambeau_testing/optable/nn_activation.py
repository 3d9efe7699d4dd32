"""Rows for the nn activations, softmax, dropout and embeddings (ops/nn_activation.yaml).

References are written here with NumPy/SciPy in float64 and cast to the input's
dtype; backward kernels are checked against hand-derived derivatives.
"""

import math

import numpy as np

import flambeau

from . import FLOATS, OpTest, Sample, make, unary_samples

FLOAT_ALL = ("float16", "bfloat16", "float32", "float64")
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _erf(x):
    from scipy.special import erf

    return erf(x)


def cast_like(fn):
    """fn computed in float64, returned in the input's dtype."""

    def run(*args, **kw):
        dt = next(a.dtype for a in args if isinstance(a, np.ndarray))
        conv = [a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args]
        return np.asarray(fn(*conv, **kw)).astype(dt)

    return run


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def softplus1(x):
    return np.logaddexp(0, x)


# Reference forward functions and their derivatives (x -> f, x -> f').
def gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def gelu_d(x, approximate="none"):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        t = np.tanh(k * (x + 0.044715 * x**3))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
    return 0.5 * (1 + _erf(x / math.sqrt(2))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def silu_d(x):
    s = sigmoid(x)
    return s * (1 + x * (1 - s))


def mish(x):
    return x * np.tanh(softplus1(x))


def mish_d(x):
    t = np.tanh(softplus1(x))
    return t + x * sigmoid(x) * (1 - t * t)


def elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    return np.where(x > 0, scale * x, scale * alpha * np.expm1(x * input_scale))


def elu_d(x, alpha=1.0, scale=1.0, input_scale=1.0):
    return np.where(x > 0, scale, scale * alpha * input_scale * np.exp(x * input_scale))


def softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


def softplus_d(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, 1.0, sigmoid(x * beta))


def hardswish(x):
    return x * np.clip(x + 3, 0, 6) / 6


def hardswish_d(x):
    return np.where(x < -3, 0.0, np.where(x <= 3, x / 3 + 0.5, 1.0))


def softshrink(x, lambd=0.5):
    return np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0.0))


def hardshrink(x, lambd=0.5):
    return np.where(np.abs(x) > lambd, x, 0.0)


def shrink_d(x, lambd=0.5):
    return np.where(np.abs(x) > lambd, 1.0, 0.0)


def act_samples(kwargs_list=({},), low=-3.0, high=3.0):
    def samples(d, rng):
        for kw in kwargs_list:
            for s in unary_samples(d, rng, low, high):
                yield Sample(s.args, dict(kw), s.note)

    return samples


def grad_samples(kwargs_list=({},), low=-3.0, high=3.0):
    """(grad_output, self) pairs, incl. strided and broadcast grad."""

    def samples(d, rng):
        m = lambda shape, **kw: make(shape, d, rng, low=low, high=high, **kw)  # noqa: E731
        for kw in kwargs_list:
            yield Sample((m((7,)), m((7,))), dict(kw))
            yield Sample((m((3, 5), noncontig=True), m((3, 5))), dict(kw), "strided")
            yield Sample((m((4, 3)).T, m((3, 4))), dict(kw), "transposed")
            yield Sample((m(()), m(())), dict(kw), "0-dim")
            yield Sample((m((0, 2)), m((0, 2))), dict(kw), "empty")
            yield Sample((m((2, 3, 9)), m((2, 3, 9))), dict(kw))

    return samples


def act_rows(
    name,
    f,
    df,
    kwargs_list=({},),
    low=-3.0,
    high=3.0,
    grad_name=None,
    grad_fn=None,
    dtypes=FLOAT_ALL,
    tol=None,
):
    tol = tol or {}
    fn = getattr(flambeau, name)
    rows = [
        OpTest(
            name,
            lambda x, **kw: fn(x, **kw),
            cast_like(f),
            act_samples(kwargs_list, low, high),
            dtypes=dtypes,
            **tol,
        )
    ]
    if grad_name:
        gfn = grad_fn or (lambda g, x, **kw: getattr(flambeau, grad_name)(g, x, **kw))
        rows.append(
            OpTest(
                grad_name,
                gfn,
                cast_like(lambda g, x, **kw: g * df(x, **kw)),
                grad_samples(kwargs_list, low, high),
                dtypes=dtypes,
                **tol,
            )
        )
    return rows


def inplace_row(name, f, kwargs_list=({},), low=-3.0, high=3.0):
    """Tensor.name_ on a fresh copy (the row's operator is name, checked in place)."""

    def call(x, **kw):
        y = x.clone()
        r = getattr(y, name + "_")(**kw)
        assert r is y
        return y

    return OpTest(
        name,
        call,
        cast_like(f),
        act_samples(kwargs_list, low, high),
        # float32 only: the gradcheck test (float64 rows) checks double backward, which
        # the recorder cannot give in place (it saves a detached copy of the input).
        dtypes=("float32",),
        id=f"{name}_inplace",
    )


def _elu_args(kw):
    return kw.get("alpha", 1.0), kw.get("scale", 1.0), kw.get("input_scale", 1.0)


# ---- softmax ----------------------------------------------------------------------


def softmax_ref(x, dim, dtype=None, log=False):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0:
        return np.asarray(0.0 if log else 1.0)
    m = np.max(x, axis=dim, keepdims=True)
    z = x - m
    lse = np.log(np.sum(np.exp(z), axis=dim, keepdims=True))
    return z - lse if log else np.exp(z - lse)


def softmax_samples(d, rng):
    m = lambda shape, **kw: make(shape, d, rng, **kw)  # noqa: E731
    yield Sample((m(()), 0), note="0-dim")
    yield Sample((m((0, 3)), 1), note="empty")
    yield Sample((m((7,)), 0))
    yield Sample((m((3, 5), noncontig=True), -1), note="strided")
    yield Sample((m((4, 3)).T, 0), note="transposed")
    yield Sample((m((2, 3, 40)), 1), note="middle dim")
    yield Sample((m((2, 3, 40)), 2))
    yield Sample((make((5, 300), d, rng, low=-90, high=90), 1), note="large values")


def softmax_rows(name, log):
    fn = getattr(flambeau, name)

    def ref(x, dim, dtype=None):
        return softmax_ref(x, dim, log=log).astype(x.dtype)

    def ref_dtype(x, dim, dtype=None):
        return softmax_ref(x, dim, log=log).astype(np.float64)

    def dtype_samples(d, rng):
        yield Sample((make((3, 6), d, rng), 1), {"dtype": flambeau.float64})

    return [
        OpTest(name, fn, ref, softmax_samples, dtypes=FLOAT_ALL),
        OpTest(
            name,
            lambda x, dim: getattr(x, name)(dim),
            ref,
            softmax_samples,
            dtypes=FLOATS,
            id=f"{name}_method",
        ),
        OpTest(name, fn, ref_dtype, dtype_samples, dtypes=("float32",), id=f"{name}_dtype"),
    ]


def softmax_backward_ref(log):
    def run(g, y, dim, input_dtype):
        g64, y64 = g.astype(np.float64), y.astype(np.float64)
        if log:
            r = g64 - np.exp(y64) * g64.sum(axis=dim, keepdims=True)
        else:
            r = y64 * (g64 - (g64 * y64).sum(axis=dim, keepdims=True))
        return r.astype(g.dtype)

    return run


def softmax_backward_samples(log):
    def samples(d, rng):
        dt = getattr(flambeau, d)
        for shape, dim in (((7,), 0), ((3, 5), 1), ((2, 4, 3), 1), ((0, 3), 1)):
            x = make(shape, d, rng)
            y = softmax_ref(x.astype(np.float64), dim, log=log).astype(x.dtype)
            yield Sample((make(shape, d, rng), y, dim, dt))
        x = make((4, 3), d, rng)
        y = softmax_ref(x.T.astype(np.float64), 1, log=log).astype(x.dtype)
        yield Sample((make((4, 3), d, rng).T, y, 1, dt), note="transposed grad")

    return samples


# ---- dropout and embeddings ----------------------------------------------------


def dropout_samples(d, rng):
    for p, train in ((0.3, False), (0.0, True), (1.0, True)):
        yield Sample((make((3, 4), d, rng), p, train))
    yield Sample((make((2, 3, 5), d, rng, noncontig=True), 0.5, False), note="strided")


def dropout_ref(x, p, train):
    return np.zeros_like(x) if (train and p == 1) else x.copy()


def native_dropout_ref(x, p, train):
    if train is False:
        return x.copy(), np.ones(x.shape, dtype=bool)
    return np.zeros_like(x), np.zeros(x.shape, dtype=bool)


def native_dropout_samples(d, rng):
    yield Sample((make((3, 4), d, rng), 0.4, False))
    yield Sample((make((5,), d, rng), 1.0, True), note="p=1 drops all")
    yield Sample((make((2, 6), d, rng, noncontig=True), 1.0, None), note="train=None")


def dropout_backward_samples(d, rng):
    yield Sample((make((3, 4), d, rng), rng.random((3, 4)) > 0.5, 2.0))
    yield Sample((make((2, 5), d, rng, noncontig=True), rng.random((2, 5)) > 0.3, 1.25))


def embedding_samples(d, rng):
    w = make((10, 4), d, rng)
    yield Sample((w, np.array([1, 3, 3, 9])))
    yield Sample((w, rng.integers(0, 10, (2, 3))), note="2-d indices")
    yield Sample((w, np.array(7)), note="0-dim index")
    yield Sample((w, np.zeros((0,), dtype=np.int64)), note="empty")
    yield Sample((make((4, 10), d, rng).T, np.array([0, 2])), note="transposed weight")
    if d != "float64":  # padding_idx rows get no gradient, unlike finite differences
        yield Sample((w, np.array([1, 2], dtype=np.int32)), {"padding_idx": 1}, "padding")


def embedding_dense_backward_ref(g, idx, num_weights, padding_idx, scale_grad_by_freq):
    d = g.shape[-1]
    out = np.zeros((num_weights, d), dtype=np.float64)
    flat = idx.reshape(-1)
    g2 = g.reshape(-1, d).astype(np.float64)
    counts = np.bincount(flat, minlength=num_weights)
    for i, r in enumerate(flat):
        if r == padding_idx:
            continue
        out[r] += g2[i] / (counts[r] if scale_grad_by_freq else 1)
    return out.astype(g.dtype)


def embedding_dense_backward_samples(d, rng):
    idx = np.array([[1, 3], [3, 0]])
    yield Sample((make((2, 2, 3), d, rng), idx, 5, -1, False))
    yield Sample((make((2, 2, 3), d, rng), idx, 5, 3, False), note="padding row gets none")
    yield Sample((make((2, 2, 3), d, rng), idx, 4, -1, True), note="scale_grad_by_freq")
    yield Sample((make((4, 3), d, rng, noncontig=True), np.array([0, 0, 1, 2]), 3, 0, True))


def bag_ref(
    w,
    idx,
    offsets,
    scale_grad_by_freq=False,
    mode=0,
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    w64 = w.astype(np.float64)
    starts = list(offsets)
    bounds = starts + ([] if include_last_offset else [len(idx)])
    bags = len(bounds) - 1
    out = np.zeros((bags, w.shape[1]))
    for b in range(bags):
        rows = [i for i in range(bounds[b], bounds[b + 1]) if idx[i] != padding_idx]
        if not rows:
            continue
        vals = w64[idx[rows]]
        if mode == 0:
            if per_sample_weights is not None:
                vals = vals * per_sample_weights[rows].astype(np.float64)[:, None]
            out[b] = vals.sum(0)
        elif mode == 1:
            out[b] = vals.mean(0)
        else:
            out[b] = vals.max(0)
    return out.astype(w.dtype)


def bag_samples(d, rng):
    w = make((8, 3), d, rng)
    idx = np.array([0, 2, 4, 5, 4, 3, 2, 7])
    off = np.array([0, 3, 3, 6])
    for mode in (0, 1, 2):
        yield Sample((w, idx, off), {"mode": mode}, f"mode {mode}, an empty bag")
    yield Sample((w, idx, np.array([0, 2, 8])), {"include_last_offset": True}, "last offset")
    # (arrays are converted only when positional)
    psw = make((8,), d, rng)
    yield Sample((w, idx, off, False, 0, False, psw), {}, "per-sample weights")
    yield Sample((w, idx, off), {"mode": 1, "padding_idx": 4}, "padding skipped")
    yield Sample((make((3, 8), d, rng).T, idx, off), {"mode": 2}, "transposed weight")


def bag_backward_ref(
    grad,
    idx,
    offsets,
    offset2bag,
    bag_size,
    max_indices,
    num_weights,
    scale_grad_by_freq,
    mode,
    sparse,
    psw,
    padding_idx=-1,
):
    out = np.zeros((num_weights, grad.shape[1]))
    g = grad.astype(np.float64)
    counts = np.bincount(idx, minlength=num_weights)
    if mode == 2:
        for b in range(g.shape[0]):
            for j in range(g.shape[1]):
                if max_indices[b, j] >= 0:
                    out[max_indices[b, j], j] += g[b, j]
        return out.astype(grad.dtype)
    for i, r in enumerate(idx):
        if r == padding_idx:
            continue
        b = offset2bag[i]
        s = 1.0 if psw is None else float(psw[i])
        if mode == 1:
            s /= bag_size[b]
        if scale_grad_by_freq:
            s /= counts[r]
        out[r] += s * g[b]
    return out.astype(grad.dtype)


def bag_backward_samples(d, rng):
    idx = np.array([0, 2, 4, 5, 4, 3])
    off = np.array([0, 3, 5])
    o2b = np.array([0, 0, 0, 1, 1, 2])
    size = np.array([3, 2, 1])
    g = make((3, 2), d, rng)
    none = np.zeros((3,), dtype=np.int64)
    yield Sample((g, idx, off, o2b, size, none, 6, False, 0, False, None))
    yield Sample((g, idx, off, o2b, size, none, 6, True, 1, False, None), note="mean, freq")
    yield Sample(
        (g, idx, off, o2b, size, none, 6, False, 0, False, make((6,), d, rng), 4),
        note="per-sample weights, padding",
    )
    mi = np.array([[0, 2], [5, 4], [3, -1]])
    yield Sample((g, idx, off, o2b, size, mi, 6, False, 2, False, None), note="max")


TESTS = [
    *softmax_rows("softmax", False),
    *softmax_rows("log_softmax", True),
    OpTest(
        "_softmax_backward_data",
        flambeau._softmax_backward_data,
        softmax_backward_ref(False),
        softmax_backward_samples(False),
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "_log_softmax_backward_data",
        flambeau._log_softmax_backward_data,
        softmax_backward_ref(True),
        softmax_backward_samples(True),
        dtypes=FLOAT_ALL,
    ),
    *act_rows("gelu", gelu, gelu_d, ({}, {"approximate": "tanh"}), grad_name="gelu_backward"),
    inplace_row("gelu", gelu, ({"approximate": "tanh"},)),
    *act_rows("silu", lambda x: x * sigmoid(x), silu_d, grad_name="silu_backward"),
    inplace_row("silu", lambda x: x * sigmoid(x)),
    *act_rows("mish", mish, mish_d, grad_name="mish_backward"),
    inplace_row("mish", mish),
    *act_rows(
        "elu",
        elu,
        elu_d,
        ({}, {"alpha": 0.5}, {"alpha": 1.2, "scale": 2.0, "input_scale": 0.5}),
        grad_name="elu_backward",
        grad_fn=lambda g, x, **kw: flambeau.elu_backward(g, *_elu_args(kw), False, x),
    ),
    inplace_row("elu", elu, ({"alpha": 0.7},)),
    OpTest(
        "elu_backward",
        lambda g, y: flambeau.elu_backward(g, 0.5, 2.0, 1.5, True, y),
        cast_like(lambda g, y: g * np.where(y > 0, 2.0, 1.5 * (y + 0.5 * 2.0))),
        grad_samples(),
        dtypes=FLOATS,
        id="elu_backward_is_result",
    ),
    *act_rows("selu", lambda x: elu(x, SELU_ALPHA, SELU_SCALE), None),
    inplace_row("selu", lambda x: elu(x, SELU_ALPHA, SELU_SCALE)),
    *act_rows(
        "celu", lambda x, alpha=1.0: elu(x, alpha, 1.0, 1.0 / alpha), None, ({}, {"alpha": 0.5})
    ),
    inplace_row("celu", lambda x, alpha=1.0: elu(x, alpha, 1.0, 1.0 / alpha), ({"alpha": 2.0},)),
    *act_rows(
        "leaky_relu",
        lambda x, negative_slope=0.01: np.where(x > 0, x, negative_slope * x),
        lambda x, negative_slope=0.01: np.where(x > 0, 1.0, negative_slope),
        ({}, {"negative_slope": 0.2}),
        grad_name="leaky_relu_backward",
        grad_fn=lambda g, x, negative_slope=0.01: flambeau.leaky_relu_backward(
            g, x, negative_slope, False
        ),
    ),
    inplace_row(
        "leaky_relu",
        lambda x, negative_slope=0.01: np.where(x > 0, x, negative_slope * x),
        ({"negative_slope": 0.3},),
    ),
    *act_rows(
        "softplus",
        softplus,
        softplus_d,
        ({}, {"beta": 2.0, "threshold": 3.0}),
        grad_name="softplus_backward",
        grad_fn=lambda g, x, beta=1.0, threshold=20.0: flambeau.softplus_backward(
            g, x, beta, threshold
        ),
    ),
    *act_rows(
        "hardtanh",
        lambda x, min_val=-1.0, max_val=1.0: np.clip(x, min_val, max_val),
        lambda x, min_val=-1.0, max_val=1.0: ((x > min_val) & (x < max_val)) * 1.0,
        ({}, {"min_val": -0.5, "max_val": 2.0}),
        grad_name="hardtanh_backward",
        grad_fn=lambda g, x, min_val=-1.0, max_val=1.0: flambeau.hardtanh_backward(
            g, x, min_val, max_val
        ),
    ),
    inplace_row(
        "hardtanh",
        lambda x, min_val=-1.0, max_val=1.0: np.clip(x, min_val, max_val),
        ({"min_val": 0.0, "max_val": 0.5},),
    ),
    *act_rows("relu6", lambda x: np.clip(x, 0, 6), None, low=-4.0, high=9.0),
    inplace_row("relu6", lambda x: np.clip(x, 0, 6), low=-4.0, high=9.0),
    *act_rows(
        "hardswish", hardswish, hardswish_d, low=-5.0, high=5.0, grad_name="hardswish_backward"
    ),
    inplace_row("hardswish", hardswish, low=-5.0, high=5.0),
    *act_rows(
        "hardsigmoid",
        lambda x: np.clip(x + 3, 0, 6) / 6,
        lambda x: ((x > -3) & (x < 3)) / 6.0,
        low=-5.0,
        high=5.0,
        grad_name="hardsigmoid_backward",
    ),
    inplace_row("hardsigmoid", lambda x: np.clip(x + 3, 0, 6) / 6, low=-5.0, high=5.0),
    *act_rows(
        "log_sigmoid",
        lambda x: -np.logaddexp(0, -x),
        lambda x: sigmoid(-x),
        low=-30.0,
        high=30.0,
        grad_name="log_sigmoid_backward",
    ),
    *act_rows(
        "softshrink",
        softshrink,
        shrink_d,
        ({}, {"lambd": 1.0}),
        grad_name="softshrink_backward",
        grad_fn=lambda g, x, lambd=0.5: flambeau.softshrink_backward(g, x, lambd),
    ),
    *act_rows(
        "hardshrink",
        hardshrink,
        shrink_d,
        ({}, {"lambd": 1.0}),
        grad_name="hardshrink_backward",
        grad_fn=lambda g, x, lambd=0.5: flambeau.hardshrink_backward(g, x, lambd),
    ),
    OpTest(
        "hardshrink",
        lambda x, lambd=0.5: x.hardshrink(lambd),
        cast_like(hardshrink),
        act_samples(),
        id="hardshrink_method",
    ),
    *act_rows(
        "threshold",
        lambda x, threshold, value: np.where(x > threshold, x, value),
        lambda x, threshold, value: (x > threshold) * 1.0,
        ({"threshold": 0.5, "value": -2.0}, {"threshold": -1.0, "value": 0.0}),
        grad_name="threshold_backward",
        grad_fn=lambda g, x, threshold, value: flambeau.threshold_backward(g, x, threshold),
    ),
    OpTest(
        "threshold",
        lambda x: flambeau.threshold(x, 1, 7),
        lambda x: np.where(x > 1, x, 7).astype(x.dtype),
        lambda d, rng: unary_samples(d, rng, -3, 3),
        dtypes=("int32", "int64"),
        id="threshold_int",
    ),
    inplace_row(
        "threshold",
        lambda x, threshold, value: np.where(x > threshold, x, value),
        ({"threshold": 0.0, "value": 5.0},),
    ),
    OpTest("dropout", flambeau.dropout, dropout_ref, dropout_samples, dtypes=FLOAT_ALL),
    OpTest("feature_dropout", flambeau.feature_dropout, dropout_ref, dropout_samples),
    OpTest(
        "alpha_dropout",
        flambeau.alpha_dropout,
        lambda x, p, train: x.copy(),
        lambda d, rng: [
            Sample((make((3, 4), d, rng), 0.5, False)),
            Sample((make((3, 4), d, rng), 0.0, True)),
        ],
    ),
    OpTest(
        "native_dropout",
        flambeau.native_dropout,
        native_dropout_ref,
        native_dropout_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "native_dropout_backward",
        flambeau.native_dropout_backward,
        lambda g, m, s: (g.astype(np.float64) * m * s).astype(g.dtype),
        dropout_backward_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "embedding",
        flambeau.embedding,
        lambda w, idx, **kw: w[idx.astype(np.int64)],
        embedding_samples,
        dtypes=FLOAT_ALL + ("int64",),
    ),
    OpTest(
        "embedding_dense_backward",
        flambeau.embedding_dense_backward,
        embedding_dense_backward_ref,
        embedding_dense_backward_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "embedding_bag",
        lambda *a, **kw: flambeau.embedding_bag(*a, **kw)[0],
        bag_ref,
        bag_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "_embedding_bag_backward",
        flambeau._embedding_bag_backward,
        bag_backward_ref,
        bag_backward_samples,
        dtypes=FLOATS,
    ),
]
