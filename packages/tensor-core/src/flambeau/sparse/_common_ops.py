"""Operations every sparse layout shares: copies, detaching, dtype/device moves."""

from __future__ import annotations

import flambeau
from flambeau.sparse._base import COMMON, register
from flambeau.sparse._legacy_types import NAME_OF_DTYPE

_CONVERSIONS = {
    "float": flambeau.float32,
    "double": flambeau.float64,
    "half": flambeau.float16,
    "bfloat16": flambeau.bfloat16,
    "long": flambeau.int64,
    "int": flambeau.int32,
    "short": flambeau.int16,
    "char": flambeau.int8,
    "byte": flambeau.uint8,
    "bool": flambeau.bool,
    "cfloat": flambeau.complex64,
    "cdouble": flambeau.complex128,
}


@register(COMMON, "to")
def to(self, *args, **kwargs):
    """Values converted as ``Tensor.to`` says; index tensors follow them to their device."""
    values = self._sp_values.to(*args, **kwargs)
    if values is self._sp_values:
        return self
    moved = {k: v.to(values.device) for k, v in self._index_tensors().items()}
    return self._replace(_sp_values=values, **moved)


@register(COMMON, "cpu")
def cpu(self, memory_format=None):
    return to(self, "cpu")


@register(COMMON, "cuda")
def cuda(self, device=None, non_blocking=False, memory_format=None):
    return to(self, "cuda" if device is None else device, non_blocking=non_blocking)


def _conversion(name, dtype):
    def convert(self, memory_format=None):
        return to(self, dtype)

    convert.__name__ = name
    convert.__doc__ = f"self with values converted to {dtype}."
    return convert


for _name, _dtype in _CONVERSIONS.items():
    register(COMMON, _name)(_conversion(_name, _dtype))


@register(COMMON, "type")
def type_(self, dtype=None, non_blocking=False, **kwargs):
    """Without arguments the legacy type name in PyTorch's spelling
    (``torch.sparse.FloatTensor``); else self converted to dtype."""
    if dtype is None:
        name = NAME_OF_DTYPE.get(self.dtype)
        if name is None:
            raise RuntimeError(f"no legacy sparse tensor type name for dtype {self.dtype}")
        return f"torch.sparse.{name}"
    return to(self, dtype, non_blocking=non_blocking)


@register(COMMON, "clone")
def clone(self, *, memory_format=None):
    copies = {k: v.clone() for k, v in self._index_tensors().items()}
    return self._replace(_sp_values=self._sp_values.clone(), **copies)


@register(COMMON, "detach")
def detach(self):
    return self._replace(_sp_values=self._sp_values.detach())


@register(COMMON, "detach_")
def detach_(self):
    self._sp_values = self._sp_values.detach()
    return self


@register(COMMON, "data")
def data(self):
    return detach(self)


@register(COMMON, "_nnz")
def nnz(self) -> int:
    """The number of specified elements."""
    return self._sp_values.shape[0]


@register(COMMON, "_values")
def raw_values(self):
    return self._sp_values


@register(COMMON, "values_copy")
def values_copy(self):
    return self.values().clone()


@register(COMMON, "is_pinned")
def is_pinned(self, device=None) -> bool:
    return False
