"""flambeau's autograd against PyTorch 2.13 as the oracle, over the core's operator table.

Every row of the operator table (shared/flambeau_testing/optable) whose operator has a
derivative formula (the selection of packages/autograd/tests/test_gradcheck_optable.py,
whose helpers this file reuses) and whose call can be made the same way in torch is run by
both libraries in float64 (and complex128 where the row has it) on the row's samples.
Forward outputs, first derivatives (vector-Jacobian products with the same seeded upstream
gradients) and, on the small samples, second derivatives (the gradient of grad . w) must
agree.

A row's torch callable is found by the plain-name rule (the row calls flambeau.<name>, or
a builder's wrapper that only forwards to it: torch.<name>, then torch.ops.aten.<name>,
torch.nn.functional.<name>, torch.linalg/special/fft) or taken from TORCH_CALLS. Differences
that are flambeau's (not the test's) are listed in KNOWN_DIFFERENCES and xfail strictly.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flambeau as F
from flambeau.autograd import derivatives
from flambeau.autograd.derivatives import foreach

torch = pytest.importorskip("torch")
TF = torch.nn.functional

AUTOGRAD_TESTS = Path(__file__).resolve().parents[1] / "packages" / "autograd" / "tests"
sys.path.insert(0, str(AUTOGRAD_TESTS))
from test_gradcheck_optable import (  # noqa: E402
    MAX_NUMEL,
    SAMPLED,
    _clone_target,
    _flatten,
    all_tests,
)

# Torch's deprecation and degrees-of-freedom warnings on the optable's edge samples.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

RTOL, ATOL = 1e-6, 1e-8
SECOND_ORDER_SAMPLES = 2  # per row: the first samples small enough (MAX_NUMEL)

# Row builders of the optable whose fn only forwards to flambeau.<op.name>(*args, **kwargs)
# (the foreach ones return a tuple, the in-place foreach ones the updated list).
FORWARDING = {
    ("flambeau_testing.optable.foreach", "row.<locals>.<lambda>"),
    ("flambeau_testing.optable.foreach", "returning_self.<locals>.run"),
    ("flambeau_testing.optable.nn_pool", "fn.<locals>.<lambda>"),
    ("flambeau_testing.optable.nn_resize", "fn.<locals>.<lambda>"),
    ("flambeau_testing.optable.nn_activation", "act_rows.<locals>.<lambda>"),
    ("flambeau_testing.optable.nn_conv", "conv_call.<locals>.fn"),
    ("flambeau_testing.optable.nn_conv", "conv_t_call.<locals>.fn"),
}

# Torch names of flambeau operators where the plain-name rule would not find them.
RENAMED = {
    "log_sigmoid": TF.logsigmoid,
    "adaptive_avg_pool2d_backward": torch.ops.aten._adaptive_avg_pool2d_backward,
    "adaptive_avg_pool3d_backward": torch.ops.aten._adaptive_avg_pool3d_backward,
    "pad_circular": torch.ops.aten._pad_circular,
    # torch.binary_cross_entropy_with_logits's Python binding defaults to no reduction.
    "binary_cross_entropy_with_logits": torch.ops.aten.binary_cross_entropy_with_logits,
}


def _on_copy(method):
    """x.clone().method(*args): the optable's rows of in-place methods on a fresh copy."""
    return lambda x, *a, **kw: getattr(x.clone(), method)(*a, **kw)


def _broadcast_first(op):
    """An aten loss on broadcast inputs, as torch.nn.functional calls it: the aten
    operators' derivatives assume input and target of one shape."""
    return lambda a, b, *rest, **kw: op(*torch.broadcast_tensors(a, b), *rest, **kw)


def _drop_none(op):
    return lambda *a, **kw: tuple(r for r in op(*a, **kw) if r is not None)


def _sym(a):
    return (a + a.mH) * 0.5  # as the optable's linalg rows symmetrize


aten = torch.ops.aten


def _inplace_method(name):
    def call(x, **kw):
        y = x.clone()
        getattr(y, name + "_")(**kw)
        return y

    return call


# Rows whose fn is not a plain call: the same call in torch, by row id.
TORCH_CALLS = {
    "Tensor.mH": lambda x: x.mH,
    "meshgrid": lambda *ts, **kw: torch.meshgrid(*ts, **kw),
    "meshgrid_list": lambda a, b: torch.meshgrid([a, b], indexing="xy"),
    "add": lambda a, b, **kw: torch.add(a, b, **kw),
    "add_alpha": lambda a, b: torch.add(a, b, alpha=2),
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "pow_int_float_exponent": lambda a, b: torch.pow(a, b),
    "polygamma_int": lambda a: torch.polygamma(1, a),
    "polygamma_method": lambda a: a.polygamma(2),
    "polygamma_inplace": lambda a: a.clone().polygamma_(3),
    **{
        f"polygamma_{n}{kind}": (lambda a, n=n: torch.polygamma(n, a))
        for n in range(4)
        for kind in ("", "_negative", "_poles")
    },
    "round_decimals": lambda a: torch.round(a, decimals=2),
    "round_neg_decimals": lambda a: torch.round(a, decimals=-1),
    "clamp_kwargs": lambda a, lo, hi: torch.clamp(a, min=lo, max=hi),
    "max_dim": lambda a, **kw: torch.max(a, kw["dim"], kw.get("keepdim", False)),
    "min_dim": lambda a, **kw: torch.min(a, kw["dim"], kw.get("keepdim", False)),
    "logsumexp": lambda a, dim=(), keepdim=False: torch.logsumexp(a, dim, keepdim),
    "logsumexp_big": lambda a, **kw: torch.logsumexp(a * 1000, 1),
    "view": lambda a, shape: a.view(shape),
    "view_varargs": lambda a: a.view(4, 6),
    "reshape": lambda a, shape: torch.reshape(a, shape),
    "view_as": lambda a: a.view_as(torch.zeros(6, 4)),
    "reshape_as": lambda a: a.reshape_as(torch.zeros(4, 3)),
    "unsqueeze": lambda a, dim: a.unsqueeze(dim),
    "swapdims": lambda a, x, y: a.swapdims(x, y),
    "permute": lambda a, dims: a.permute(*dims) if dims else a.permute(dims),
    "permute_tuple": lambda a: torch.permute(a, (1, 0, 2)),
    "expand": lambda a, size: a.expand(*size),
    "expand_as": lambda a: a.expand_as(torch.zeros(2, 3, 4)),
    "unfold": lambda a, *args: a.unfold(*args),
    "repeat": lambda a, reps: a.repeat(*reps),
    "flip": lambda a, dims: torch.flip(a, dims),
    "einsum": lambda *xs, equation: torch.einsum(equation, *xs),
    "tensordot": lambda a, b, dims: torch.tensordot(a, b, dims=dims),
    "linalg_cross": lambda a, b, **kw: torch.linalg.cross(a, b, **kw),
    "linalg_det": lambda a: torch.linalg.det(a),
    "linalg_inv_ex": lambda a: torch.linalg.inv_ex(a).inverse,
    "linalg_matrix_norm": lambda a, ord="fro", **kw: torch.linalg.matrix_norm(a, ord, **kw),
    "softmax_method": lambda x, dim: x.softmax(dim),
    "log_softmax_method": lambda x, dim: x.log_softmax(dim),
    "hardshrink_method": lambda x, lambd=0.5: x.hardshrink(lambd),
    "threshold_int": lambda x: TF.threshold(x, 1, 7),
    **{
        f"{name}_inplace": _inplace_method(name)
        for name in ("gelu", "silu", "mish", "elu", "selu", "celu", "leaky_relu")
        + ("hardtanh", "relu6", "hardswish", "hardsigmoid", "threshold")
    },
    "layer_norm_affine": lambda x, w, b: TF.layer_norm(x, list(w.shape), w, b),
    "native_layer_norm_affine": lambda x, w, b: torch.native_layer_norm(
        x, list(w.shape), w, b, 1e-5
    ),
    "group_norm": lambda x, w, b, n, c, hxw, g, eps: torch.group_norm(x, g, w, b, eps),
    "embedding_bag": lambda *a, **kw: torch.embedding_bag(*a, **kw)[0],
    "_thnn_fused_lstm_cell": lambda *a: aten._thnn_fused_lstm_cell(*a)[:2],
    "_thnn_fused_gru_cell": lambda *a: aten._thnn_fused_gru_cell(*a)[0],
    **{
        f"{name}_": _on_copy(name + "_")
        for name in ("scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill")
        + ("masked_fill", "masked_scatter")
    },
    "copy_": lambda a, b: a.copy_(b),
    "copy_convert": lambda a, b: a.copy_(b.to(torch.float64)),
    "fill_": lambda a: a.fill_(1),
    "zero_": lambda a: a.zero_(),
    "to": lambda a, name: a.to(getattr(torch, name)),
    "to_device_dtype": lambda a: a.to("cpu", torch.float64),
    "to_other": lambda a: a.to(torch.zeros(1, dtype=torch.int16)),
    "type_as": lambda a: a.type_as(torch.zeros(1, dtype=torch.float64)),
    "cpu": lambda a: a.cpu(),
    **{m: (lambda a, m=m: getattr(a, m)()) for m in ("float", "double", "half", "bfloat16")},
    "contiguous": lambda t, *a, **k: t.contiguous(*a, **k),
    "view_dtype": lambda a, dtype: a.view(getattr(torch, dtype)),
    "_foreach_norm": lambda *a, **k: tuple(torch._foreach_norm(*a, **k)),
    "linalg_slogdet": lambda a: tuple(torch.linalg.slogdet(a)),
    "linalg_cholesky_ex": lambda a: torch.linalg.cholesky_ex(_sym(a)).L,
    "linalg_eigvalsh": lambda a, **kw: torch.linalg.eigvalsh(_sym(a), **kw),
    "linalg_pinv": lambda a, **kw: torch.linalg.pinv(_sym(a) if kw.get("hermitian") else a, **kw),
    **{name: _broadcast_first(getattr(aten, name)) for name in ("mse_loss", "smooth_l1_loss")},
    "huber_loss": _broadcast_first(aten.huber_loss),
    "elu_backward_is_result": lambda g, y: aten.elu_backward(g, 0.5, 2.0, 1.5, True, y),
    "leaky_relu_backward": lambda g, x, negative_slope=0.01: aten.leaky_relu_backward(
        g, x, negative_slope, False
    ),
    "softplus_backward": lambda g, x, beta=1.0, threshold=20.0: aten.softplus_backward(
        g, x, beta, threshold
    ),
    "hardtanh_backward": lambda g, x, min_val=-1.0, max_val=1.0: aten.hardtanh_backward(
        g, x, min_val, max_val
    ),
    "softshrink_backward": lambda g, x, lambd=0.5: aten.softshrink_backward(g, x, lambd),
    "hardshrink_backward": lambda g, x, lambd=0.5: aten.hardshrink_backward(g, x, lambd),
    "threshold_backward": lambda g, x, threshold, value: aten.threshold_backward(g, x, threshold),
    "convolution_backward": _drop_none(aten.convolution_backward),
    "native_layer_norm_backward": _drop_none(aten.native_layer_norm_backward),
    "native_batch_norm_backward": _drop_none(aten.native_batch_norm_backward),
    "native_group_norm_backward": _drop_none(aten.native_group_norm_backward),
    "native_layer_norm_backward_affine": lambda go, x, mean, rstd, w, b: (
        aten.native_layer_norm_backward(go, x, list(w.shape), mean, rstd, w, b, [True] * 3)
    ),
    "batch_norm": lambda *a: torch.batch_norm(*a, False),
    "ctc_loss.Tensor": lambda x, tg, il, tl, **kw: torch.ctc_loss(
        torch.log_softmax(x, -1), tg, il, tl, **kw
    ),
    "_ctc_loss.Tensor": lambda x, tg, il, tl, **kw: aten._ctc_loss.Tensor(
        torch.log_softmax(x, -1), tg, il, tl, **kw
    )[0],
}

# Where flambeau differs from PyTorch, by test id (row id and dtype); each xfails strictly,
# so a fix on either side shows up as an XPASS to remove here.
_VAR_0DIM = (
    "0-dim var (N - correction = 0): torch's nan first derivative is a constant, "
    "flambeau's depends on x, so its second derivative is nan where torch's is zero"
)
_STATS = "flambeau's mean/rstd outputs are differentiable; torch marks them non-differentiable"
_SAVED_STATS = (
    "torch differentiates input through the saved mean/rstd (a total derivative that "
    "assumes they are input's statistics) and refuses them as inputs; flambeau holds them "
    "fixed and differentiates them separately"
)
_LDEXP_INT = (
    "integer exponents: torch 2.13's input gradient rounds 2 ** e to an integer, so a "
    "negative exponent contributes 0 (ldexp(1.7, [1, -2, 3]).sum(): torch 10, flambeau the "
    "true 10.25)"
)
KNOWN_DIFFERENCES: dict[str, str] = {
    "native_layer_norm_backward_affine-float64": _SAVED_STATS,
    "native_layer_norm_backward-float64": _SAVED_STATS,
    "native_batch_norm_backward-float64": _SAVED_STATS,
    "polar-float64": (
        "negative abs (outside polar's domain): torch's abs-gradient uses sgn(result) and "
        "flips sign; flambeau gives the true derivative"
    ),
    "embedding_dense_backward-float64": (
        "scale_grad_by_freq: torch's double backward ignores the 1/count scaling; flambeau's "
        "is the true derivative"
    ),
    "nll_loss_forward-float64": (
        "total_weight: 4 where torch gives 0 (reduction='none'), and differentiable in "
        "flambeau, not in torch"
    ),
    "native_layer_norm_affine-float64": _STATS,
    "native_layer_norm-float64": _STATS,
    "native_batch_norm-float64": _STATS,
    "var-float64": _VAR_0DIM,
    "var-complex128": _VAR_0DIM,
    "var_mean-float64": _VAR_0DIM,
    "var_mean-complex128": _VAR_0DIM,
    "nanmedian_dim-float64": (
        "an all-NaN row: flambeau's index is 0, torch's 2 (forward), so the gradient lands "
        "elsewhere"
    ),
    "ldexp-float64": _LDEXP_INT,
    "ldexp_complex-complex128": _LDEXP_INT,
    "value_selecting_reduction_backward-float64": (
        "repeated indices: flambeau accumulates (the optable's reference), torch's scatter "
        "keeps one write"
    ),
}


# test id -> (samples compared, of which second order, why torch took the others)
COVERAGE: dict[str, tuple[int, int, list[str]]] = {}


def _has_formula(op):
    f = derivatives.FORMULAS.get(op.name)
    if f is None:
        return op.name in derivatives.COMPOSITES or foreach.is_recorded(op.name)
    return not f.nondifferentiable


def _by_name(name):
    """The torch operator called `name` by the plain-name rule, or None."""
    if name in RENAMED:
        return RENAMED[name]
    # aten before torch.nn.functional: the optable calls the aten operator (nll_loss's
    # reduction is an int there), and F.adaptive_max_pool2d returns no indices.
    for namespace, prefix in (
        (torch, ""),
        (torch.ops.aten, ""),
        (TF, ""),
        (torch.linalg, "linalg_"),
        (torch.special, "special_"),
        (torch.fft, "fft_"),
    ):
        if name.startswith(prefix) and hasattr(namespace, name.removeprefix(prefix)):
            return getattr(namespace, name.removeprefix(prefix))
    return None


def torch_call(op):
    """(the torch callable of a row, or None, and why not)."""
    if op.id in TORCH_CALLS:
        return TORCH_CALLS[op.id], ""
    plain = op.fn is getattr(F, op.name, None)
    wrapper = (getattr(op.fn, "__module__", ""), getattr(op.fn, "__qualname__", ""))
    if plain or wrapper in FORWARDING:
        fn = _by_name(op.name)
        return fn, "" if fn is not None else f"torch has no operator named {op.name}"
    method = getattr(F.Tensor, op.name, None)
    if method is not None and op.fn is method:
        return getattr(torch.Tensor, op.name, None), f"no torch.Tensor.{op.name}"
    return None, "row calls a wrapper with no entry in TORCH_CALLS"


def _rows():
    params = []
    for op in all_tests():
        if not _has_formula(op):
            continue
        fn, why = torch_call(op)
        if op.name in SAMPLED:
            fn, why = None, "random sampling: the two generators differ"
        for dtype in ("float64", "complex128"):
            if dtype not in op.dtypes:
                continue
            tid = f"{op.id}-{dtype}"
            marks = []
            if fn is None:
                marks.append(pytest.mark.skip(reason=why))
            elif tid in KNOWN_DIFFERENCES:
                marks.append(pytest.mark.xfail(reason=KNOWN_DIFFERENCES[tid], strict=True))
            params.append(pytest.param(op, fn, dtype, id=tid, marks=marks))
    return params


# ----------------------------------------------------------------------------- conversions

_TORCH_DTYPES = {
    str(getattr(F, n)): getattr(torch, n)
    for n in ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")
    + ("uint8", "int8", "int16", "int32", "int64", "bool")
}


def _to_torch(x):
    """A flambeau tensor (or a list of them, or a dtype) as torch's."""
    if isinstance(x, F.Tensor):
        t = torch.from_numpy(np.array(x.detach().numpy()))
        return t.requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_torch(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_torch(v) for k, v in x.items()}
    if type(x).__name__ == "dtype" and str(x) in _TORCH_DTYPES:
        return _TORCH_DTYPES[str(x)]
    return x


def _numpy(t):
    if isinstance(t, F.Tensor):
        t = t.detach()
        return np.array((t.float() if t.dtype == F.bfloat16 else t).numpy())
    t = t.detach().float() if t.dtype == torch.bfloat16 else t.detach()
    return (t.to_dense() if t.layout != torch.strided else t).numpy(force=True)


def _leaves(out):
    """Every tensor of an output, nested lists and tuples flattened."""
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _leaves(o)]
    if isinstance(out, (F.Tensor, torch.Tensor)):
        return [out]
    return []


def _is_float(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def _diff(a, b):
    """'' when a and b agree, else a short description."""
    a, b = _numpy(a), _numpy(b)
    if a.shape != b.shape:
        return f"shape {a.shape} vs torch {b.shape}"
    if a.dtype.kind in "biu" or b.dtype.kind in "biu":
        bad = a != b
        return f"{int(bad.sum())} of {a.size} differ" if bad.any() else ""
    if np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True):
        return ""
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    both = ~(nan_a | nan_b)
    parts = []
    if (nan_a != nan_b).any():
        parts.append(f"NaN in {int(nan_a.sum())} elements, torch {int(nan_b.sum())}")
    if both.any() and not np.allclose(a[both], b[both], rtol=RTOL, atol=ATOL):
        parts.append(f"max abs diff {np.abs(a[both] - b[both]).max():.3g}")
    return "; ".join(parts)


# ----------------------------------------------------------------------------- the check


def _call(lib, fn, inputs, rebuild, kwargs, inplace):
    args = rebuild(inputs)
    if inplace:  # work on a non-leaf copy; the result is the updated first argument
        args[0] = _clone_target(args[0]) if lib is F else _clone_torch(args[0])
        fn(*args, **kwargs)
        return args[0]
    return fn(*args, **kwargs)


def _clone_torch(a):
    if isinstance(a, (list, tuple)):
        return type(a)(x.clone() if isinstance(x, torch.Tensor) else x for x in a)
    return a.clone() if isinstance(a, torch.Tensor) else a


def _vjp(lib, outs, inputs, vs, create_graph=False):
    """grad of sum(out * v) w.r.t. the inputs, zeros where unused; outs may be empty."""
    if not outs:
        return [lib.zeros_like(x) for x in inputs]
    grad = F.autograd.grad if lib is F else torch.autograd.grad
    gs = grad(outs, inputs, vs, retain_graph=True, create_graph=create_graph, allow_unused=True)
    return [lib.zeros_like(x) if g is None else g for g, x in zip(gs, inputs)]


def _random_like(rng, t):
    shape = tuple(t.shape)
    a = rng.standard_normal(shape)
    if t.dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return np.asarray(a)


def _derivatives(lib, leaves, inputs, mask, seed, second_order):
    """(first-order vjps, second-order vjps or None) of one library's outputs.

    The upstream gradients come from `seed` by output position and shape, so both
    libraries get the same ones; outputs outside `mask` (differentiable on one side only)
    and first derivatives that do not require grad contribute nothing.
    """
    rng = np.random.default_rng(seed)
    vs = [_random_like(rng, t) if _is_float(t) else None for t in leaves]
    outs = [(t, lib.from_numpy(v).to(t.dtype)) for t, v, m in zip(leaves, vs, mask) if m]
    diff = [x for x in inputs if x.requires_grad]
    grads = _vjp(lib, [t for t, _ in outs], diff, [v for _, v in outs], second_order)
    if not second_order:
        return grads, None
    ws = [lib.from_numpy(_random_like(rng, g)).to(g.dtype) for g in grads]
    keep = [(g, w) for g, w in zip(grads, ws) if g.requires_grad]
    return grads, _vjp(lib, [g for g, _ in keep], diff, [w for _, w in keep])


def _refuses_an_input(e):
    msg = str(e)
    return "is not differentiable with respect to argument" in msg or (
        "the derivative for '" in msg and "is not implemented" in msg
    )


def _constants_for_torch(t_inputs, run):
    """Positions of the inputs torch cannot differentiate, found one input at a time."""
    wanted = [i for i, x in enumerate(t_inputs) if x.requires_grad]
    constants = []
    for i in wanted:
        for j in wanted:
            t_inputs[j].requires_grad_(j == i)
        try:
            run()
        except (RuntimeError, NotImplementedError) as e:
            if not _refuses_an_input(e):
                raise
            constants.append(i)
    for j in wanted:
        t_inputs[j].requires_grad_(True)
    return constants


def _check_sample(op, fn, sample, seed, second_order):
    """(mismatch descriptions, or None when torch does not take the sample; why not)."""
    inputs, rebuild = _flatten(sample.args)
    t_inputs = [_to_torch(x) for x in inputs]
    inplace = op.name.endswith("_")
    where = f"[{sample.note or 'sample'}]"

    def t_rebuild(xs):
        return [_to_torch(a) for a in rebuild(xs)]

    def t_run():
        out = _leaves(_call(torch, fn, t_inputs, t_rebuild, _to_torch(sample.kwargs), inplace))
        mask = [_is_float(t) and t.requires_grad for t in out]
        _derivatives(torch, out, t_inputs, mask, seed, second_order)
        return out, mask

    try:
        try:
            tl, t_mask = t_run()
        except (RuntimeError, NotImplementedError) as e:
            if not _refuses_an_input(e):
                raise
            # Arguments torch refuses to differentiate (a loss's weight, running stats, a
            # saved mean) are constants on both sides, if any input is left to compare.
            constants = _constants_for_torch(t_inputs, t_run)
            if len(constants) == sum(x.requires_grad for x in t_inputs):
                raise
            for i in constants:
                t_inputs[i].requires_grad_(False)
                inputs[i].requires_grad_(False)
            tl, t_mask = t_run()
    except Exception as e:  # torch does not take this sample: nothing to compare
        return None, f"{type(e).__name__}: {str(e).splitlines()[0][:80]}"
    try:
        fl = _leaves(_call(F, op.fn, inputs, rebuild, sample.kwargs, inplace))
    except Exception as e:
        return [f"{where} forward: flambeau raises {type(e).__name__}: {e}"], ""
    if len(fl) != len(tl):
        return [f"{where} forward: {len(fl)} outputs vs torch {len(tl)}"], ""
    problems = [
        f"{where} forward output {i}: {d}"
        for i, (a, b) in enumerate(zip(fl, tl))
        if (d := _diff(a, b))
    ]
    f_mask = [_is_float(t) and t.requires_grad for t in fl]
    problems += [
        f"{where} output {i} requires_grad={a}, torch {b}"
        for i, (a, b) in enumerate(zip(f_mask, t_mask))
        if a != b
    ]
    mask = [a and b for a, b in zip(f_mask, t_mask)]
    try:
        got = _derivatives(F, fl, inputs, mask, seed, second_order)
    except Exception as e:
        return [*problems, f"{where} backward: flambeau raises {type(e).__name__}: {e}"], ""
    want = _derivatives(torch, tl, t_inputs, mask, seed, second_order)
    diff = [i for i, x in enumerate(inputs) if x.requires_grad]
    for order, a_s, b_s in zip(("grad", "second-order grad"), got, want):
        for i, a, b in zip(diff, a_s or (), b_s or ()):
            if d := _diff(a, b):
                problems.append(f"{where} {order} of input {i}: {d}")
    return problems, ""


@pytest.mark.parametrize("op,fn,dtype", _rows())
def test_matches_torch(op, fn, dtype):
    rng = np.random.default_rng(0)
    problems, compared, rejected, small = [], 0, [], 0
    for sample in op.samples(dtype, rng):
        arrays = [x for x in _flatten(sample.args)[0]]
        second = small < SECOND_ORDER_SAMPLES and all(x.numel() <= MAX_NUMEL for x in arrays)
        found, why = _check_sample(op, fn, sample, compared, second)
        if found is None:
            rejected.append(why)
            continue
        compared += 1
        small += second
        problems += found
    # Read by conftest.py's closing summary.
    COVERAGE[f"{op.id}-{dtype}"] = (compared, small, rejected)
    assert not problems, f"{op.id}-{dtype} differs from torch:\n" + "\n".join(problems)
    if compared == 0:
        pytest.skip(f"torch takes none of the samples: {rejected[0] if rejected else '-'}")
