"""Every CUDA kernel this package registers, against the CPU: the shared operator table's
rows for those operators (flambeau_testing), and strided, broadcast and reduction cases.
The other test_gpu_*.py files cover each kernel family in depth."""

import pytest
from samples import UNARY_FLOAT

import flambeau

# The operators (table rows) whose every kernel this package registers.
KERNEL_OPS = {
    "fill_",
    "copy_",
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "neg",
    "abs",
    "relu",
    "sign",
    "floor",
    "ceil",
    "trunc",
    "round",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "isnan",
    "isinf",
    "isfinite",
    "isposinf",
    "isneginf",
    "isclose",
    "where",
    "maximum",
    "minimum",
    "max",
    "min",
    "clamp",
    "clamp_min",
    "clamp_max",
    "sum",
    "mean",
    "prod",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "bmm",
    "mm",
    "matmul",
    "addmm",
    "softmax",
    "log_softmax",
    "uniform_",
    "normal_",
    "bernoulli_",
    "bernoulli",
    "gather",
    "index",
    "index_select",
    "take",
    "take_along_dim",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "index_add",
    "index_copy",
    "index_fill",
    "index_put",
    "masked_fill",
    "cumsum",
    "cumprod",
    "logcumsumexp",
    "cummax",
    "cummin",
    "sort",
    "argsort",
    "msort",
    "topk",
    "kthvalue",
    "median",
    "nanmedian",
    "mode",
    "searchsorted",
    "masked_scatter",
    "embedding_dense_backward",
    "native_layer_norm",
    "layer_norm",
    "group_norm",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "mse_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "nll_loss",
    "nll_loss_forward",
    "nll_loss_backward",
    "lerp",
    "addcmul",
    "addcdiv",
} | set(UNARY_FLOAT)


def _table_rows():
    try:
        from flambeau_testing.run_on_device import select_rows
    except ImportError:
        return []
    # Complex dtypes have no CUDA kernels yet (README).
    return [op for op in select_rows(None, KERNEL_OPS) if "complex" not in op.id]


@pytest.mark.parametrize("row", _table_rows(), ids=lambda op: op.id)
def test_table_row_matches_the_cpu(row):
    from flambeau_testing import check_on_device

    report = check_on_device(row, "cuda")
    assert report.ok, report.mismatches[:5]


DTYPES = [
    flambeau.float32,
    flambeau.float64,
    flambeau.float16,
    flambeau.bfloat16,
    flambeau.int32,
    flambeau.int64,
    flambeau.int8,
    flambeau.uint8,
]


def _sample(dtype, shape=(7, 5, 3)):
    g = flambeau.Generator().manual_seed(1)
    x = flambeau.randn(shape, generator=g) * 4
    return x.to(dtype) if dtype.is_floating_point else x.round().to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_binary_strided_and_broadcast(dtype, op):
    a, b = _sample(dtype), _sample(dtype, (5, 1))
    fn = getattr(flambeau, op)
    want = fn(a.transpose(0, 1), b)
    got = fn(a.cuda().transpose(0, 1), b.cuda()).cpu()
    assert flambeau.equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fill_and_strided_fill(dtype):
    x = flambeau.zeros(6, 4, dtype=dtype, device="cuda")
    x[:, ::2].fill_(3)
    want = flambeau.zeros(6, 4, dtype=dtype)
    want[:, ::2].fill_(3)
    assert flambeau.equal(x.cpu(), want)


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("dtype", [flambeau.float32, flambeau.int64, flambeau.int32])
def test_div_modes(mode, dtype):
    a, b = _sample(dtype), _sample(dtype)
    b = flambeau.where(b == 0, flambeau.ones_like(b), b)
    want = flambeau.div(a, b, rounding_mode=mode)
    got = flambeau.div(a.cuda(), b.cuda(), rounding_mode=mode).cpu()
    assert flambeau.allclose(got.double(), want.double(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "op",
    [
        "neg",
        "abs",
        "relu",
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "sin",
        "cos",
        "tanh",
        "sigmoid",
        "reciprocal",
    ],
)
@pytest.mark.parametrize("dtype", [flambeau.float32, flambeau.float64, flambeau.float16])
def test_unary_float(op, dtype):
    x = _sample(dtype).abs() + 0.5 if op in ("log", "sqrt", "rsqrt") else _sample(dtype)
    fn = getattr(flambeau, op)
    want = fn(x.double())
    got = fn(x.cuda()).cpu().double()
    tol = 1e-2 if dtype == flambeau.float16 else 1e-5
    assert flambeau.allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dims", [None, 0, 1, (0, 2), (1, 2)])
@pytest.mark.parametrize(
    "dtype",
    [
        flambeau.float32,
        flambeau.float64,
        flambeau.int32,
        flambeau.int64,
        flambeau.bool,
        flambeau.float16,
    ],
)
def test_sum_over_dims(dims, dtype):
    x = (
        _sample(dtype, (9, 300, 4))
        if dtype != flambeau.bool
        else _sample(flambeau.float32, (9, 300, 4)) > 0
    )
    want = x.sum() if dims is None else x.sum(dims)
    got = (x.cuda().sum() if dims is None else x.cuda().sum(dims)).cpu()
    assert got.dtype == want.dtype
    tol = 1e-1 if dtype == flambeau.float16 else 1e-4
    assert flambeau.allclose(got.double(), want.double(), rtol=tol, atol=tol)
