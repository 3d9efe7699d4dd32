"""Semi-structured (2:4) sparse matrices (PyTorch's ``torch.sparse.semi_structured``).

Half of every four consecutive elements of a row are zero; the matrix is stored as its
kept values and their metadata, in the layouts of PyTorch's two CUDA backends (CUTLASS,
cuSPARSELt). flambeau runs their operations on the CPU with dense ops on the compressed
form: see docs/design/sparse.rst. The data are held as the kept values and columns of
the *stored* matrix (``_sp_values``, ``_sp_cols``); a tensor is that matrix or, after
``t()``, its transpose (``_sp_transposed``). The backend layouts (``packed``, ``meta``,
``packed_t``, ``meta_t``) are built from them when asked for.
"""

from __future__ import annotations

import warnings
from collections import namedtuple

import flambeau
from flambeau.sparse import _semi_structured_pack as pack
from flambeau.sparse._base import SparseData, wrap

__all__ = [
    "SparseSemiStructuredTensor",
    "SparseSemiStructuredTensorCUTLASS",
    "SparseSemiStructuredTensorCUSPARSELT",
    "to_sparse_semi_structured",
]

_SEMI_STRUCTURED_SPARSE_CONFIG = namedtuple(
    "_SEMI_STRUCTURED_SPARSE_CONFIG",
    "sparse_min_rows sparse_min_cols dense_min_rows dense_min_cols",
)

OPS: dict = {}  # the op table (see _semi_structured_ops)


class SparseSemiStructuredTensor(SparseData):
    """A 2-D matrix with 2:4 semi-structured sparsity; the base of the two backends,
    which define ``_DTYPE_SHAPE_CONSTRAINTS``, ``from_dense`` and their layout.

    >>> from flambeau.sparse import SparseSemiStructuredTensor, to_sparse_semi_structured
    >>> A = flambeau.tensor([[0.0, 0.0, 1.0, 1.0]], dtype=flambeau.float16).tile((16, 4))
    >>> S = to_sparse_semi_structured(A)
    >>> isinstance(S, SparseSemiStructuredTensor), S.shape
    (True, flambeau.Size([16, 16]))
    """

    __slots__ = ()
    _OPS = OPS
    _BACKEND_PREFIX = "SparseSemiStructured"
    _DEFAULT_ALG_ID: int = 0
    _DTYPE_SHAPE_CONSTRAINTS: dict = {}
    _FORCE_CUTLASS: bool = False
    _FUSE_TRANSPOSE: bool = False
    _PROTOTYPE_WARNING_SHOWN: bool = False
    BACKEND: str = ""

    def __new__(
        cls,
        shape,
        packed,
        meta,
        packed_t,
        meta_t,
        compressed_swizzled_bitmask,
        fuse_transpose_cusparselt=False,
        alg_id_cusparselt=0,
        requires_grad=False,
    ):
        """A tensor of shape from the backend's compressed form of itself (packed, meta)
        and/or of its transpose (packed_t, meta_t), as PyTorch's constructor."""
        if cls is SparseSemiStructuredTensor:
            raise NotImplementedError(
                "SparseSemiStructuredTensor is a base class: construct "
                "SparseSemiStructuredTensorCUTLASS or SparseSemiStructuredTensorCUSPARSELT"
            )
        rows, cols = shape
        if packed is not None:
            values, columns = cls._unpack(packed, meta, (rows, cols))
            transposed = False
        elif packed_t is not None:
            values, columns = cls._unpack(packed_t, meta_t, (cols, rows))
            transposed = True
        else:
            raise ValueError("At least one of packed or packed_t must be provided")
        both = packed is not None and packed_t is not None
        if both:
            other = cls._unpack(packed_t, meta_t, (cols, rows))
            if not bool(pack.expand(*other, (cols, rows)).t().eq(
                pack.expand(values, columns, (rows, cols))).all()):  # fmt: skip
                raise ValueError("packed_t is not the compressed transpose of packed")
        values = values.detach().requires_grad_(requires_grad)
        return cls._make(values, columns, transposed, both,
                         fuse_transpose_cusparselt, alg_id_cusparselt)  # fmt: skip

    def __init__(self, *args, **kwargs):
        pass  # built by __new__; the core's Tensor has no constructor to run

    @classmethod
    def _make(cls, values, cols, transposed=False, both=False, fuse=False, alg_id=0):
        if not cls._PROTOTYPE_WARNING_SHOWN:
            warnings.warn(
                "The flambeau API of SparseSemiStructuredTensor follows PyTorch's, which is in "
                "prototype stage and will change in the near future.",
                UserWarning,
                stacklevel=3,
            )
            cls._PROTOTYPE_WARNING_SHOWN = True
        rows, columns = values.shape[0], values.shape[1] * 2
        shape = (columns, rows) if transposed else (rows, columns)
        return wrap(cls, shape, values.dtype, values.device, _sp_values=values, _sp_cols=cols,
                    _sp_transposed=transposed, _sp_both=both, _sp_fuse=fuse,
                    _sp_alg_id=alg_id)  # fmt: skip

    def _replace(self, shape=None, **data):
        attrs = {**self.__dict__, **data}
        values = attrs.pop("_sp_values")
        return type(self)._make(
            values, attrs["_sp_cols"], attrs["_sp_transposed"], attrs["_sp_both"],
            attrs["_sp_fuse"], attrs["_sp_alg_id"])  # fmt: skip

    # -- the layout seen from this tensor's orientation -----------------------------------

    @classmethod
    def _group(cls, dtype) -> int:
        return 4

    def _own(self):
        """(values, cols) of the compressed form of this tensor itself, or None where only
        its transpose is held."""
        if not self._sp_transposed:
            return self._sp_values, self._sp_cols
        if self._sp_both:
            return pack.select(self.to_dense(), self._group(self.dtype))
        return None

    def _of_transpose(self):
        return self.t()._own()

    @property
    def packed(self):
        own = self._own()
        return None if own is None else self._pack(*own)[0]

    @property
    def meta(self):
        own = self._own()
        return None if own is None else self._pack(*own)[1]

    @property
    def packed_t(self):
        other = self._of_transpose()
        return None if other is None else self._pack(*other)[0]

    @property
    def meta_t(self):
        other = self._of_transpose()
        return None if other is None else self._pack(*other)[1]

    @property
    def compressed_swizzled_bitmask(self):
        return None  # used by CUDA kernels of pointwise ops in 2:4 training only

    @property
    def fuse_transpose_cusparselt(self):
        return self._sp_fuse

    @property
    def alg_id_cusparselt(self):
        return self._sp_alg_id

    # -- metadata of the tensor as a whole -----------------------------------------------

    @property
    def layout(self):
        return flambeau.strided

    @property
    def is_sparse(self):
        return False

    def __repr__(self):
        return f"{type(self).__name__}(shape={self.shape!r})"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        attrs = {**self.__dict__, "_sp_values": self._sp_values.detach()}
        return _rebuild, (type(self), attrs, self.requires_grad)

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def _validate_device_dim_dtype_shape(cls, original_tensor) -> None:
        """PyTorch's checks of a dense matrix to compress (any device: flambeau's kernels
        are dense ops)."""
        if original_tensor.dim() != 2:
            raise RuntimeError(
                f"Error original_tensor.dim = {original_tensor.dim()} is not supported! "
                "Only 2d tensors are currently supported."
            )
        if not original_tensor.is_contiguous():
            raise RuntimeError(
                "Error original_tensor is not contiguous!"
                "Only contiguous tensors are currently supported."
            )
        if original_tensor.dtype not in cls._DTYPE_SHAPE_CONSTRAINTS:
            raise RuntimeError(
                f"Error original_tensor.dtype {original_tensor.dtype} is not a supported dtype "
                f"for {cls}!"
            )
        m, n = original_tensor.shape
        config = cls._DTYPE_SHAPE_CONSTRAINTS[original_tensor.dtype]
        min_rows, min_cols = config.sparse_min_rows, config.sparse_min_cols
        if m < min_rows or m % min_rows or n < min_cols or n % min_cols:
            raise RuntimeError(
                f"Error original_tensor.shape {original_tensor.shape} is not supported! "
                f"Both dimensions must be larger or equal than and a multiple of "
                f"({min_rows}, {min_cols})"
            )

    @classmethod
    def from_dense(cls, original_tensor, alg_id: int = 0):
        """The compressed form of a dense 2:4 sparse matrix; RuntimeError if the matrix is
        not 2:4 (four consecutive elements of a row hold more than two nonzeros)."""
        if cls is SparseSemiStructuredTensor:
            raise NotImplementedError
        cls._validate_device_dim_dtype_shape(original_tensor)
        values, cols = pack.select(original_tensor, cls._group(original_tensor.dtype))
        values = values.detach().requires_grad_(original_tensor.requires_grad)
        return cls._make(values, cols, fuse=SparseSemiStructuredTensor._FUSE_TRANSPOSE,
                         alg_id=alg_id)  # fmt: skip


def _rebuild(cls, attrs, requires_grad):
    values = attrs.pop("_sp_values").detach().requires_grad_(requires_grad)
    return cls._make(values, attrs["_sp_cols"], attrs["_sp_transposed"], attrs["_sp_both"],
                     attrs["_sp_fuse"], attrs["_sp_alg_id"])  # fmt: skip


class SparseSemiStructuredTensorCUTLASS(SparseSemiStructuredTensor):
    """The CUTLASS layout: ``packed`` holds the kept values (rows x cols/2), ``meta`` their
    positions, in CUTLASS's reordered 16-bit words (32-bit for int8); float32 is 1:2
    sparse (one of every two consecutive elements kept).

    >>> from flambeau.sparse import SparseSemiStructuredTensorCUTLASS
    >>> A = flambeau.tensor([[0.0, 0.0, 1.0, 1.0]], dtype=flambeau.float16).tile((32, 16))
    >>> S = SparseSemiStructuredTensorCUTLASS.from_dense(A)
    >>> S.packed.shape
    flambeau.Size([32, 32])
    >>> flambeau.equal(S.to_dense(), A)
    True
    """

    __slots__ = ()
    BACKEND = "cutlass"
    _DTYPE_SHAPE_CONSTRAINTS = {
        flambeau.int8: _SEMI_STRUCTURED_SPARSE_CONFIG(16, 128, 16, 16),
        flambeau.float16: _SEMI_STRUCTURED_SPARSE_CONFIG(32, 64, 8, 8),
        flambeau.bfloat16: _SEMI_STRUCTURED_SPARSE_CONFIG(32, 64, 8, 8),
        flambeau.float32: _SEMI_STRUCTURED_SPARSE_CONFIG(32, 32, 4, 4),
    }

    @classmethod
    def _group(cls, dtype) -> int:
        return 2 if dtype is flambeau.float32 else 4

    @classmethod
    def _pack(cls, values, cols):
        return pack.cutlass_pack(values, cols, cls._group(values.dtype))

    @classmethod
    def _unpack(cls, packed, meta, shape):
        if meta is None:
            raise ValueError("the CUTLASS layout needs meta with packed (meta_t with packed_t)")
        if tuple(packed.shape) != (shape[0], shape[1] // 2):
            raise ValueError(
                f"packed values of a {tuple(shape)} matrix must have shape "
                f"{(shape[0], shape[1] // 2)}, but got {tuple(packed.shape)}"
            )
        return pack.cutlass_unpack(packed, meta, cls._group(packed.dtype))


class SparseSemiStructuredTensorCUSPARSELT(SparseSemiStructuredTensor):
    """The cuSPARSELt layout: one buffer, ``packed``, of the kept values (rows * cols / 2)
    followed by their metadata; ``meta`` is None. cuSPARSELt's own metadata format is
    opaque, so flambeau's is its own (row-order 16-bit words, see _semi_structured_pack);
    ``alg_id`` and ``fuse_transpose_cusparselt`` are recorded and change nothing.

    >>> from flambeau.sparse import SparseSemiStructuredTensorCUSPARSELT
    >>> A = flambeau.tensor([[0.0, 0.0, 1.0, 1.0]], dtype=flambeau.float16).tile((16, 4))
    >>> S = SparseSemiStructuredTensorCUSPARSELT.from_dense(A)
    >>> S.meta is None, flambeau.equal(S.to_dense(), A)
    (True, True)
    """

    __slots__ = ()
    BACKEND = "cusparselt"
    _DTYPE_SHAPE_CONSTRAINTS = {
        flambeau.int8: _SEMI_STRUCTURED_SPARSE_CONFIG(32, 32, 16, 16),
        flambeau.float16: _SEMI_STRUCTURED_SPARSE_CONFIG(16, 16, 8, 8),
        flambeau.bfloat16: _SEMI_STRUCTURED_SPARSE_CONFIG(16, 16, 8, 8),
    }
    if hasattr(flambeau, "float8_e4m3fn"):
        _DTYPE_SHAPE_CONSTRAINTS[flambeau.float8_e4m3fn] = _SEMI_STRUCTURED_SPARSE_CONFIG(
            32, 32, 16, 16
        )

    @classmethod
    def _pack(cls, values, cols):
        return pack.cusparselt_pack(values, cols), None

    @classmethod
    def _unpack(cls, packed, meta, shape):
        return pack.cusparselt_unpack(packed, shape)


def to_sparse_semi_structured(original_tensor, transposed: bool = False, alg_id: int = 0):
    """The semi-structured (2:4) sparse form of a dense 2-D matrix: the cuSPARSELt layout,
    or CUTLASS's when ``SparseSemiStructuredTensor._FORCE_CUTLASS`` is set. The matrix's
    dtype and shape must be in the backend's ``_DTYPE_SHAPE_CONSTRAINTS``, and at most two
    of every four consecutive elements of a row nonzero (one of two for float32).

    >>> from flambeau.sparse import to_sparse_semi_structured
    >>> A = flambeau.tensor([[0.0, 0.0, 1.0, 1.0]], dtype=flambeau.float16).tile((16, 4))
    >>> S = to_sparse_semi_structured(A)
    >>> type(S).__name__
    'SparseSemiStructuredTensorCUSPARSELT'
    >>> x = flambeau.ones(16, 8, dtype=flambeau.float16)
    >>> flambeau.equal(S @ x, A @ x)
    True
    """
    if transposed:
        warnings.warn(
            "Setting transpose from `to_sparse_semi_structured` is deprecated "
            "and will be removed in a future release. "
            "`SparseSemiStructuredTensor` only support contiguous input tensors.",
            FutureWarning,
            stacklevel=2,
        )
    backend = (
        SparseSemiStructuredTensorCUTLASS
        if SparseSemiStructuredTensor._FORCE_CUTLASS
        else SparseSemiStructuredTensorCUSPARSELT
    )
    return backend.from_dense(original_tensor, alg_id=alg_id)
