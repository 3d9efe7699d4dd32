"""PyTorch's legacy tensor types: ``FloatTensor``, ``LongTensor``, ... as constructors and
``isinstance`` checks, the ``flambeau.Tensor(...)`` constructor, ``Tensor.type()``,
``typename`` and moving to accelerator devices by name (``.cuda()``, ``.xpu()``, ...).

Type strings keep PyTorch's spelling (``'torch.FloatTensor'``): programs compare
``x.type()`` against those literals, so they port unchanged. ``x.type(...)`` also accepts
``'flambeau.FloatTensor'``.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from flambeau import _C
from flambeau._dtype_aliases import strided
from flambeau._size import Size

# dtype -> the legacy type name PyTorch gives a CPU tensor of that dtype.
_TYPE_NAMES = {
    _C.float32: "FloatTensor",
    _C.float64: "DoubleTensor",
    _C.float16: "HalfTensor",
    _C.bfloat16: "BFloat16Tensor",
    _C.int64: "LongTensor",
    _C.int32: "IntTensor",
    _C.int16: "ShortTensor",
    _C.int8: "CharTensor",
    _C.uint8: "ByteTensor",
    _C.bool: "BoolTensor",
    _C.complex64: "ComplexFloatTensor",
    _C.complex128: "ComplexDoubleTensor",
}
_DTYPE_OF_NAME = {name: dtype for dtype, name in _TYPE_NAMES.items()}


def _check_cpu(device, ctor: str) -> None:
    if device is None:
        return
    dev = device if isinstance(device, _C.device) else _C.device(device)
    if dev.type != "cpu":
        raise RuntimeError(
            f"legacy constructor {ctor} expects device type: cpu but device type: {dev.type} "
            "was passed"
        )


def _is_shape(args) -> bool:
    if len(args) == 1 and isinstance(args[0], Size):
        return True
    return len(args) > 0 and all(
        isinstance(a, builtins.int) and not isinstance(a, builtins.bool) for a in args
    )


def _construct(ctor: str, dtype, args, device, *, any_dtype: bool, on=None):
    """The legacy constructor: (), (*sizes), (Size), (Tensor), (storage) or (data).
    The legacy types make CPU tensors; ``on`` is Tensor.new's device (any)."""
    if on is None:
        _check_cpu(device, ctor)
    if not args:
        return _C.empty((0,), dtype=dtype, device=on)
    if _is_shape(args):
        shape = tuple(args[0]) if isinstance(args[0], Size) else tuple(args)
        for s in shape:
            if s < 0:
                raise RuntimeError(
                    f"Trying to create tensor with negative dimension {s}: {list(shape)}"
                )
        return _C.empty(shape, dtype=dtype, device=on)
    if len(args) > 1:
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(
            f"{ctor}() received an invalid combination of arguments - got ({got}); expected "
            "(), (*sizes), (Size), (Tensor other) or (data)"
        )
    (data,) = args
    if isinstance(data, _C.Tensor):
        if not any_dtype and data.dtype != dtype:
            raise TypeError(f"{ctor}(): expected a tensor of dtype {dtype}, got {data.dtype}")
        return data.view_as(data)  # an alias, as PyTorch's constructor returns
    from flambeau.storage import TypedStorage, UntypedStorage

    if isinstance(data, (UntypedStorage, TypedStorage)):  # a 1-D view of all of it
        return _C.empty((0,), dtype=dtype, device=data.device).set_(data)
    if isinstance(data, (builtins.int, builtins.float, builtins.complex, builtins.bool)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if not (isinstance(data, Sequence) or hasattr(data, "__array__")):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    return _C.tensor(data, dtype=dtype, device=on)


def _new(self, *args, device=None):
    """Tensor.new: PyTorch's legacy constructor in this tensor's dtype, on its device
    (or ``device``): ``x.new(2, 3)`` (uninitialized), ``x.new(size)``, ``x.new(data)``,
    ``x.new(storage)``, ``x.new(tensor)`` (that tensor itself, aliased), ``x.new()``.

    >>> x = flambeau.zeros(2, dtype=flambeau.float64)
    >>> x.new(2, 3).shape, x.new([1, 2])
    (flambeau.Size([2, 3]), tensor([1., 2.], dtype=flambeau.float64))
    """
    on = self.device if device is None else _C.device(device)
    return _construct("new", self.dtype, args, device, any_dtype=True, on=on)


_new.__name__ = _new.__qualname__ = "new"  # as errors name it


class _LegacyTensorType(type):
    """Metaclass of the legacy types: calling one constructs a tensor of its dtype (and
    layout), and ``isinstance(t, FloatTensor)`` tests a CPU tensor's dtype and layout (as
    PyTorch does: a sparse tensor is a ``flambeau.sparse.FloatTensor``, not a
    ``flambeau.FloatTensor``)."""

    def __call__(cls, *args, device=None):
        return cls._construct(cls.__name__, cls.dtype, args, device)

    def __instancecheck__(cls, obj) -> bool:
        return (
            isinstance(obj, _C.Tensor)
            and obj.dtype == cls.dtype
            and obj.device.type == "cpu"
            and obj.layout == cls.layout
        )

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def make_legacy_type(name: str, dtype, *, layout, module: str, construct, doc: str):
    """A legacy type: construct(type name, dtype, args, device) makes its tensors."""
    attrs = {
        "dtype": dtype,
        "layout": layout,
        "is_cuda": False,
        "is_sparse": layout is not strided,
        "__module__": module,
        "__doc__": doc,
        "_construct": staticmethod(construct),
    }
    return _LegacyTensorType(name, (), attrs)


def _make_type(name: str, dtype):
    return make_legacy_type(
        name,
        dtype,
        layout=strided,
        module="flambeau",
        construct=lambda ctor, dt, args, device: _construct(
            ctor, dt, args, device, any_dtype=False
        ),
        doc=f"Legacy constructor of {dtype} CPU tensors; also an isinstance check.\n\n"
        f">>> x = flambeau.{name}([1, 0])\n"
        f">>> x.dtype, isinstance(x, flambeau.{name})\n"
        f"({dtype!r}, True)\n"
        f">>> flambeau.{name}(2, 3).shape\n"
        "flambeau.Size([2, 3])\n",
    )


LEGACY_TYPES = {name: _make_type(name, dtype) for name, dtype in _DTYPE_OF_NAME.items()}


def _tensor_new(cls, *args, device=None):
    # flambeau.Tensor(...): PyTorch's legacy constructor in the default dtype; a tensor
    # argument of any dtype is returned as an alias.
    out = _construct("Tensor", _C.get_default_dtype(), args, device, any_dtype=True)
    if cls is _C.Tensor:
        return out
    # A subclass's constructor (``MyTensor(data)``, ``super().__new__(cls, data)``) makes
    # an instance of the subclass, as PyTorch's does.
    from flambeau._tensor_extras import _as_subclass

    return _as_subclass(out, cls)


def _tensor_init(self, *args, **kwargs):
    """The tensor is complete when __new__ returns it."""


def tensor_type_name(t) -> str:
    name = _TYPE_NAMES.get(t.dtype)
    if name is None:
        raise RuntimeError(f"no legacy tensor type name for dtype {t.dtype}")
    if t.device.type == "cpu":
        return f"torch.{name}"
    return f"torch.{t.device.type}.{name}"


def _parse_type_string(s: str):
    """'torch.FloatTensor', 'flambeau.cuda.LongTensor', ... -> (device type or None, dtype)."""
    parts = s.split(".")
    if len(parts) in (2, 3) and parts[0] in ("torch", "flambeau") and parts[-1] in _DTYPE_OF_NAME:
        return (parts[1] if len(parts) == 3 else "cpu"), _DTYPE_OF_NAME[parts[-1]]
    raise ValueError(f"invalid type: {s!r}")


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """The legacy type name with no argument; else self converted to the given dtype,
    type string (``'torch.DoubleTensor'``) or legacy type (``flambeau.DoubleTensor``)."""
    del kwargs  # PyTorch's deprecated `async`
    if dtype is None:
        return tensor_type_name(self)
    device_type = self.device.type
    if isinstance(dtype, str):
        device_type, dtype = _parse_type_string(dtype)
    elif isinstance(dtype, _LegacyTensorType):
        if dtype.layout is not strided:  # x.type(flambeau.sparse.FloatTensor)
            return self.to("cpu", dtype.dtype, non_blocking).to_sparse()
        device_type, dtype = "cpu", dtype.dtype
    elif not isinstance(dtype, _C.dtype):
        raise TypeError("dtype must be a type, str, or dtype object")
    if device_type != self.device.type:
        if device_type not in ("cpu",):
            return _to_accelerator(self, device_type, None, non_blocking).to(dtype)
        return self.to("cpu", dtype, non_blocking)
    return self.to(dtype, non_blocking=non_blocking)


def typename(obj) -> str:
    """PyTorch's name for obj's type: 'torch.FloatTensor' for tensors, else module.qualname.

    >>> flambeau.typename(flambeau.zeros(2))
    'torch.FloatTensor'
    >>> flambeau.typename(flambeau.zeros(2, dtype=flambeau.int64))
    'torch.LongTensor'
    >>> flambeau.typename(1.5)
    'float'
    """
    if isinstance(obj, _C.Tensor):
        return tensor_type_name(obj)
    if hasattr(obj, "__qualname__"):  # classes and functions name themselves
        module, qualname = getattr(obj, "__module__", None) or "", obj.__qualname__
    else:
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def _to_accelerator(t, device_type: str, device, non_blocking: bool):
    from flambeau import backends

    if device_type not in backends._installed():
        if device_type == "cuda":
            raise AssertionError(
                "flambeau has no CUDA backend installed (no distribution provides the 'cuda' "
                f"entry point of group {backends.GROUP!r})"
            )
        raise RuntimeError(
            f"no flambeau backend provides device type {device_type!r}: install a backend "
            "plugin that provides it"
        )
    if device is None:
        target = device_type
    elif isinstance(device, builtins.int):
        target = f"{device_type}:{device}"
    else:
        target = device if isinstance(device, _C.device) else _C.device(device)
        if target.type != device_type:
            raise RuntimeError(f"Invalid device, must be {device_type} device")
    return t.to(target, non_blocking=non_blocking)


def _device_mover(device_type: str):
    def move(self, device=None, non_blocking=False, memory_format=None):
        del memory_format  # flambeau's copies to a device are contiguous
        return _to_accelerator(self, device_type, device, non_blocking)

    move.__name__ = device_type
    move.__doc__ = f"self on a {device_type} device (the backend plugin providing {device_type!r})."
    return move


def install() -> None:
    T = _C.Tensor
    T.__new__ = staticmethod(_tensor_new)
    T.__init__ = _tensor_init
    T.type = _type
    T.new = _new
    for device_type in ("cuda", "xpu", "ipu", "mtia"):
        setattr(T, device_type, _device_mover(device_type))
