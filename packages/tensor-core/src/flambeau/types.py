"""flambeau.types: the type aliases PyTorch programs annotate with (torch.types).

The underscored aliases name builtins and flambeau classes that a module's own names
may shadow (``_int``, ``_device``, ``_dtype``, ``_size``...). flambeau has no symbolic
shapes (torch.compile's SymInt, SymFloat and SymBool), so an int-like value is an int
(``IntLikeType``), ``py_sym_types`` is empty, and ``PySymType`` and the ``Sym*`` names
are absent; so are ``DispatchKey`` / ``_dispatchkey`` and ``_qscheme``, whose APIs
flambeau does not have.

>>> from flambeau.types import Device, Number
>>> def zeros_on(n: Number, device: Device = None) -> flambeau.Tensor:
...     return flambeau.zeros(int(n), device=device)
>>> zeros_on(2.0, "cpu")
tensor([0., 0.])
"""

from __future__ import annotations

import os
from builtins import bool as _bool  # noqa: F401
from builtins import bytes as _bytes  # noqa: F401
from builtins import complex as _complex  # noqa: F401
from builtins import float as _float  # noqa: F401
from builtins import int as _int  # noqa: F401
from builtins import str as _str  # noqa: F401
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any, TypeAlias, Union

from flambeau import Size, Tensor  # noqa: F401
from flambeau import device as _device  # noqa: F401
from flambeau import dtype as _dtype  # noqa: F401
from flambeau import layout as _layout  # noqa: F401

if TYPE_CHECKING:
    from flambeau.autograd.graph import GradientEdge

__all__ = ["Number", "Device", "FileLike", "Storage"]

# Composite types the API talks about.
_TensorOrTensors: TypeAlias = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors: TypeAlias = Tensor | Sequence[Tensor | None]
_TensorOrTensorsOrGradEdge: TypeAlias = Union[  # noqa: UP007 - "GradientEdge" is a string
    Tensor, Sequence[Tensor], "GradientEdge", Sequence["GradientEdge"]
]
_size: TypeAlias = Size | list[int] | tuple[int, ...]
_symsize: TypeAlias = Size | Sequence[int]

# Without symbolic values, the int-, float- and bool-likes are the builtins themselves.
IntLikeType: TypeAlias = int
FloatLikeType: TypeAlias = float
BoolLikeType: TypeAlias = bool
py_sym_types: tuple = ()  # for isinstance(x, py_sym_types): no value is symbolic

# A "numeric" value, as the documentation says it; _Number is the tuple for isinstance.
Number: TypeAlias = int | float | bool
_Number = (int, float, bool)

# A path or a binary file object, as flambeau.save and flambeau.load take.
FileLike: TypeAlias = str | os.PathLike[str] | IO[bytes]

# Anything that names a device (not a flambeau.device only); None is the default device.
Device: TypeAlias = _device | str | int | None


class Storage:
    """The interface of a storage, for annotations: what flambeau's ``UntypedStorage`` and
    ``TypedStorage`` provide. A class to annotate with, not a base class: storages are not
    instances of it.

    >>> from flambeau.types import Storage
    >>> def size_in_bytes(storage: Storage) -> int:
    ...     return storage.nbytes()
    >>> size_in_bytes(flambeau.ones(3).untyped_storage())
    12
    """

    device: _device
    dtype: _dtype

    def __deepcopy__(self, memo: dict[int, Any]) -> Storage:
        raise NotImplementedError

    def element_size(self) -> int:
        raise NotImplementedError

    def is_shared(self) -> bool:
        raise NotImplementedError

    def share_memory_(self) -> Storage:
        raise NotImplementedError

    def nbytes(self) -> int:
        raise NotImplementedError

    def cpu(self) -> Storage:
        raise NotImplementedError

    def data_ptr(self) -> int:
        raise NotImplementedError
