"""Operations on semi-structured (2:4) sparse matrices: PyTorch's set (values, indices,
t, view, detach, clone, to, mm, matmul, addmm and so linear) and to_dense.

Products expand the compressed matrix to a dense one (a scatter of the kept values) and
run the dense product: on a CPU that is the fast way, and autograd flows to the dense
operand and to the kept values. As in PyTorch, a tensor multiplies from the left only
in the orientation it was compressed in (``packed``), and from the right only as the
transpose of one (``packed_t``): ``W @ x`` and ``x @ W.t()``.
"""

from __future__ import annotations

import flambeau
from flambeau._legacy_constructors import tensor_type_name
from flambeau.overrides import _wrapped_by, redispatch_function
from flambeau.sparse import _semi_structured_pack as pack
from flambeau.sparse._base import aten_name, register
from flambeau.sparse._common_ops import _CONVERSIONS
from flambeau.sparse.semi_structured import OPS, SparseSemiStructuredTensor


def _name(s) -> str:
    return type(s).__name__


def not_supported(cls, name: str) -> NotImplementedError:
    """PyTorch's error for an operation outside the semi-structured set."""
    return NotImplementedError(
        f"{cls.__name__} only supports a specific set of operations, "
        f"can't perform requested op ({aten_name(name)})"
    )


def _torch_function(cls, func, types, args=(), kwargs=None):
    if "handle_torch_function" in getattr(getattr(func, "__code__", None), "co_names", ()):
        # A function written in Python (F.linear): it runs, and its operators come back
        # here, as PyTorch's decompose into the operators the sparse tensor handles.
        return redispatch_function(func, types, args, kwargs)
    name = getattr(func, "__name__", None)
    impl = cls._OPS.get(name)
    if impl is None and _wrapped_by(func) is not None:  # Tensor's own size, dtype, ...
        return redispatch_function(func, types, args, kwargs)
    if impl is None:
        raise not_supported(cls, name or repr(func))
    return impl(*args, **(kwargs or {}))


SparseSemiStructuredTensor.__torch_function__ = classmethod(_torch_function)


def _is_semi(x) -> bool:
    return isinstance(x, SparseSemiStructuredTensor)


@register(OPS, "to_dense")
def to_dense(s, dtype=None, *, masked_grad=None):
    """The dense matrix; differentiable with respect to the kept values."""
    stored = tuple(reversed(s.shape)) if s._sp_transposed else tuple(s.shape)
    dense = pack.expand(s._sp_values, s._sp_cols, stored)
    dense = dense.t() if s._sp_transposed else dense
    return dense if dtype is None else dense.to(dtype)


def _own_or_fail(s):
    own = s._own()
    if own is None:
        raise AssertionError(
            f"{_name(s)} holds only the compressed form of its transpose (packed is None): "
            "its values and indices are those of .t()"
        )
    return own


@register(OPS, "values")
def values(s):
    """The kept values of each row: CUTLASS's ``packed``, detached; the first
    rows * cols / 2 elements of cuSPARSELt's ``packed``, as rows x cols/2."""
    kept, _ = _own_or_fail(s)
    return kept.detach() if s.BACKEND == "cutlass" else kept


@register(OPS, "indices")
def indices(s):
    """The metadata: CUTLASS's ``meta``; the int16 words after the values in
    cuSPARSELt's ``packed``, as rows x cols/16."""
    kept, cols = _own_or_fail(s)
    if s.BACKEND == "cutlass":
        return s._pack(kept, cols)[1]
    return pack.cusparselt_split(s._pack(kept, cols)[0], s.shape)[1]


@register(OPS, "t")
def t(s):
    """The transpose: the same compressed data, read the other way."""
    return s._replace(_sp_transposed=not s._sp_transposed)


@register(OPS, "view")
def view(s, *shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, flambeau.Size)):
        shape = tuple(shape[0])
    if tuple(shape) != tuple(s.shape):
        raise NotImplementedError(
            "`view` is not implemented for SparseSemiStructuredTensor, except for the dummy "
            f"case (shape={s.shape})"
        )
    return s


# ---- products ----------------------------------------------------------------------------


def _check_operand(sparse, dense, a, b, *, left: bool) -> None:
    """PyTorch's conditions on a semi-structured operand and the dense one."""
    name = _name(sparse)
    if dense.dtype != sparse.dtype:
        raise NotImplementedError(
            f"`{name}` matmul: trying to do `A={tuple(a.shape)} @ B={tuple(b.shape)}`, with "
            f"A.dtype={a.dtype} and B.dtype={b.dtype}. This operation is only supported when "
            "A and B have the same data type."
        )
    if sparse.dtype is getattr(flambeau, "float8_e4m3fn", None):
        raise NotImplementedError(
            f"`{name}` matmul: trying to do `A={tuple(a.shape)} @ B={tuple(b.shape)}`, with "
            f"A.dtype=B.dtype={sparse.dtype}. mm is not supported for float8_e4m3fn, please "
            "use `torch._scaled_mm` instead."
        )
    usable = sparse._sp_both or (sparse._sp_transposed != left)
    if not usable:
        raise NotImplementedError(
            f"`{name}` matmul: operation is not supported"
            + (
                " (it is held compressed as its transpose: multiply it from the right)"
                if left
                else " (only its transpose's compressed form would multiply from the right: "
                "compress the transpose instead)"
            )
        )


def _dense_operands(a, b):
    """a and b for a dense product, after PyTorch's checks."""
    if _is_semi(a) and _is_semi(b):
        raise ValueError(
            "`SparseSemiStructuredTensor @ SparseSemiStructuredTensor` is not supported by "
            "the hardware"
        )
    if a.dim() != 2 or b.dim() != 2:
        raise NotImplementedError(
            "`SparseSemiStructuredTensor` matmul: Broadcasting is not implemented"
        )
    if _is_semi(a):
        _check_operand(a, b, a, b, left=True)
        return to_dense(a), b
    _check_operand(b, a, a, b, left=False)
    return a, to_dense(b)


@register(OPS, "mm")
def mm(a, b, *, out=None):
    if out is not None:
        raise not_supported(type(a if _is_semi(a) else b), "mm.out")
    return flambeau.mm(*_dense_operands(a, b))


@register(OPS, "matmul", "__matmul__")
def matmul(a, b, *, out=None):
    """mm; a dense left operand of more than two dims is folded into rows, as linear does."""
    if not _is_semi(a) and a.dim() > 2 and _is_semi(b):
        folded = mm(a.reshape(-1, a.shape[-1]), b, out=out)
        return folded.reshape(*a.shape[:-1], folded.shape[-1])
    return mm(a, b, out=out)


@register(OPS, "__rmatmul__")
def rmatmul(s, other):
    return matmul(other, s)


@register(OPS, "addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat1 @ mat2) with a dense mat1, a semi-structured mat2 and
    a 1-D input (a bias for each column)."""
    if _is_semi(input) or out is not None:
        raise not_supported(type(next(x for x in (input, mat1, mat2) if _is_semi(x))), "addmm")
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise NotImplementedError(
            "`SparseSemiStructuredTensor` matmul: Broadcasting is not implemented"
        )
    if input.dim() != 1:
        raise NotImplementedError(
            f"`SparseSemiStructuredTensor` matmul: only bias dim=1 supported. Shape={input.shape}"
        )
    if _is_semi(mat1):
        raise NotImplementedError(
            "`SparseSemiStructuredTensor` matmul: only operand B of `addmm` can be sparse"
        )
    if input.dtype != mat2.dtype:
        raise NotImplementedError(
            f"`{_name(mat2)}` matmul: trying to do `A={tuple(mat1.shape)} @ "
            f"B={tuple(mat2.shape)} + C`, with A.dtype=B.dtype={mat2.dtype} and "
            f"C.dtype={input.dtype}. This operation is only supported when A, B and C have "
            "the same data type."
        )
    a, b = _dense_operands(mat1, mat2)
    return flambeau.addmm(input, a, b, beta=beta, alpha=alpha)


# ---- conversions -------------------------------------------------------------------------


@register(OPS, "to")
def to(s, *args, copy=False, non_blocking=False, memory_format=None, **kwargs):
    """self when nothing changes (a copy with ``copy=True``): the kept values cannot
    change dtype (the backends fix the dtypes) nor leave the CPU."""
    target = flambeau.empty(0, dtype=s.dtype, device=s.device).to(*args, **kwargs)
    if target.dtype == s.dtype and target.device == s.device:
        return s.clone() if copy else s
    raise NotImplementedError(
        f"`to()` with args={args}, kwargs={kwargs} is not implemented for "
        f"SparseSemiStructuredTensor: its dtype and device are fixed."
    )


@register(OPS, "cpu")
def cpu(s, memory_format=None):
    return to(s, "cpu")


@register(OPS, "type")
def type_(s, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        return tensor_type_name(s)  # a strided-layout wrapper: the dense type name
    return to(s, dtype)


def _conversion(name, dtype):
    def convert(s, memory_format=None):
        return to(s, dtype)

    convert.__name__ = name
    return convert


for _conv, _dtype in _CONVERSIONS.items():
    register(OPS, _conv)(_conversion(_conv, _dtype))


def _blocked(name):
    def blocked(s, *args, **kwargs):
        raise not_supported(type(s), name)

    blocked.__name__ = name
    return blocked


# Shared sparse operations (_common_ops) that this layout does not have.
for _name_ in ("cuda", "_nnz", "_values", "values_copy"):
    register(OPS, _name_)(_blocked(_name_))
