"""Storages, as PyTorch's ``torch.storage``: ``UntypedStorage`` (the bytes a tensor views),
``TypedStorage`` (bytes seen as elements of a dtype, which PyTorch deprecates but programs
still reach through ``Tensor.storage()``) and the legacy typed classes (``FloatStorage``,
``LongStorage``, ...).

``UntypedStorage`` is the core's class (python/storage_bindings.cpp); the methods that
need no kernel of their own are added here, written over a byte tensor that views the
storage. ``share_memory_()`` moves a storage into shared memory (flambeau/_shared_memory.py)
in place: every tensor viewing it follows, as in PyTorch.
"""

from __future__ import annotations

import builtins
import os
import sys
import warnings
import weakref

from flambeau import _C, _shared_memory
from flambeau._C import UntypedStorage
from flambeau._misc_functions import frombuffer

__all__ = ["TypedStorage", "UntypedStorage"]

# Legacy class name -> dtype, in PyTorch's spelling.
_LEGACY_NAMES = {
    "DoubleStorage": _C.float64,
    "FloatStorage": _C.float32,
    "HalfStorage": _C.float16,
    "BFloat16Storage": _C.bfloat16,
    "LongStorage": _C.int64,
    "IntStorage": _C.int32,
    "ShortStorage": _C.int16,
    "CharStorage": _C.int8,
    "ByteStorage": _C.uint8,
    "BoolStorage": _C.bool,
    "ComplexFloatStorage": _C.complex64,
    "ComplexDoubleStorage": _C.complex128,
}
_LEGACY_OF_DTYPE = {dtype: name for name, dtype in _LEGACY_NAMES.items()}
# The conversion methods storages share with tensors (storage.float(), ...).
_CONVERSIONS = {
    "double": _C.float64,
    "float": _C.float32,
    "half": _C.float16,
    "bfloat16": _C.bfloat16,
    "long": _C.int64,
    "int": _C.int32,
    "short": _C.int16,
    "char": _C.int8,
    "byte": _C.uint8,
    "bool": _C.bool,
    "complex_float": _C.complex64,
    "complex_double": _C.complex128,
}


def _device(device):
    return _C.device("cpu") if device is None else _C.device(device)


# ---- UntypedStorage ------------------------------------------------------------------------


def _bytes(self) -> _C.Tensor:
    """A uint8 tensor viewing every byte of the storage."""
    return self._view(_C.uint8, 0, [self.nbytes()], [1])


def _untyped_getitem(self, idx):
    if isinstance(idx, slice):
        start, stop, step = idx.indices(self.nbytes())
        if step != 1:
            raise RuntimeError(
                f"Trying to slice with a step of {step}, but only a step of 1 is supported"
            )
        return self._slice(start, builtins.max(start, stop))
    if not isinstance(idx, builtins.int):
        raise TypeError(f"can't index a UntypedStorage with {type(idx).__name__}")
    n = self.nbytes()
    if not -n <= idx < n:
        raise IndexError(f"index {idx} out of range for storage of size {n}")
    return _bytes(self)[idx].item()


def _untyped_setitem(self, idx, value):
    if not isinstance(idx, (builtins.int, slice)):
        raise RuntimeError(f"can't index a UntypedStorage with {type(idx).__name__}")
    if isinstance(idx, builtins.int):
        n = self.nbytes()
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
    _bytes(self)[idx] = value


def _untyped_repr(self) -> str:
    body = "\n".join(f" {v}" for v in self.tolist())
    footer = f"[flambeau.storage.UntypedStorage(device={self.device}) of size {self.nbytes()}]"
    return f"{body}\n{footer}" if body else footer


def _untyped_copy_(self, source, non_blocking=None):
    del non_blocking
    src = source.untyped() if isinstance(source, TypedStorage) else source
    if not isinstance(src, UntypedStorage):
        raise TypeError(f"copy_(): expected a storage, got {type(source).__name__}")
    if src.nbytes() != self.nbytes():
        raise RuntimeError(
            f"size mismatch: storage of {self.nbytes()} bytes, source of {src.nbytes()}"
        )
    _bytes(self).copy_(_bytes(src))
    return self


def _untyped_clone(self):
    out = UntypedStorage(self.nbytes(), device=self.device)
    return _untyped_copy_(out, self)


def _untyped_to(self, *, device=None, non_blocking=False):
    dev = _device(device)
    if dev == self.device:
        return self
    return _bytes(self).to(dev, non_blocking=non_blocking).untyped_storage()


def _untyped_fill_(self, value):
    _bytes(self).fill_(value)
    return self


def _untyped_resize_(self, size):
    self._resize_bytes(builtins.int(size))
    return self


def _untyped_type(self, dtype=None, non_blocking=False):
    if dtype is None:
        return "flambeau.storage.UntypedStorage"
    return _retype(self, dtype, non_blocking)


def _retype(self, dtype, non_blocking):
    if isinstance(dtype, str):
        dtype = _LEGACY_NAMES.get(dtype.rsplit(".", 1)[-1]) or getattr(_C, dtype.rsplit(".", 1)[-1])
    elif isinstance(dtype, type) and issubclass(dtype, TypedStorage):
        dtype = dtype.dtype
    return _converted(self, dtype)


def _converted(self, dtype):
    """PyTorch's storage.float() and friends: each byte converted to an element of dtype."""
    values = _bytes(self).to(dtype)
    return TypedStorage(wrap_storage=values.untyped_storage(), dtype=dtype, _internal=True)


def _untyped_share_memory_(self):
    """Moves the bytes into shared memory (in place: the tensors viewing this storage
    follow). Storages of other devices are left as they are, as PyTorch does for CUDA."""
    if self.is_shared() or self.device.type != "cpu":
        return self
    block = _shared_memory.allocate(self.nbytes())
    self._move_to(block.view, block)
    return self


def _new_shared(cls, size, *, device=None):
    """A storage of `size` bytes in shared memory."""
    if _device(device).type != "cpu":
        return cls(size, device=device)
    block = _shared_memory.allocate(builtins.int(size))
    return UntypedStorage._from_buffer(block.view, block, True)


def _storage_of_bytes(data, device="cpu") -> UntypedStorage:
    """A new storage holding a copy of `data` (any buffer), copied as a block."""
    view = memoryview(data).cast("B")
    out = UntypedStorage(len(view))
    if len(view):
        _bytes(out).copy_(frombuffer(bytearray(view), dtype=_C.uint8))
    return out if _device(device).type == "cpu" else _untyped_to(out, device=device)


def _from_buffer(cls, buffer, byte_order="native", count=-1, offset=0, *, dtype=None):
    """A storage holding a copy of a Python buffer's bytes (PyTorch's from_buffer)."""
    del byte_order
    data = memoryview(buffer).cast("B")[offset:]
    if count >= 0:
        item = _C.empty(0, dtype=dtype or _C.uint8).element_size()
        data = data[: count * item]
    return _storage_of_bytes(data)


# The file a storage from UntypedStorage.from_file(..., shared=True) maps.
_FILENAMES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _untyped_from_file(cls, filename, shared=False, nbytes=0):
    """The first ``nbytes`` bytes of a file as a storage (PyTorch's
    ``UntypedStorage.from_file``). With ``shared=True`` the storage maps the file, which is
    created or grown to ``nbytes`` as needed, and writes reach it (``storage.filename``
    names it); otherwise the bytes are read, and the file must hold ``nbytes`` of them.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "bytes.bin")
    ...     s = flambeau.UntypedStorage.from_file(path, True, 4)
    ...     s[0] = 7
    ...     del s
    ...     flambeau.UntypedStorage.from_file(path, False, 2).tolist()
    [7, 0]
    """
    import numpy as np

    filename = os.fspath(filename)
    if shared:
        with open(filename, "ab") as f:  # created if missing; grown to nbytes
            if f.seek(0, os.SEEK_END) < nbytes:
                f.truncate(nbytes)
        size = nbytes or os.path.getsize(filename)
        arr = np.memmap(filename, dtype=np.uint8, mode="r+", shape=(size,)) if size else None
    else:
        try:
            have = os.path.getsize(filename)
        except OSError as e:
            raise RuntimeError(
                f"unable to open file <{filename}> in read-only mode: {e.strerror} ({e.errno})"
            ) from None
        if have < nbytes:
            raise RuntimeError(
                f"file <{filename}> size <{have}> is smaller than the required mapping size "
                f"<{nbytes}>"
            )
        arr = np.fromfile(filename, dtype=np.uint8, count=nbytes or have)
    if arr is None or arr.size == 0:
        return UntypedStorage(0)
    storage = _C.from_numpy(arr).untyped_storage()
    if shared:
        _FILENAMES[storage] = filename
    return storage


def _untyped_reduce_ex(self, protocol):
    del protocol
    return _rebuild_untyped, (bytes(_bytes(self.cpu()).numpy()), str(self.device))


def _rebuild_untyped(data: bytes, device: str):
    return _storage_of_bytes(data, device)


def _pin_memory(self, device="cuda"):
    del device
    raise RuntimeError("pin_memory: no accelerator backend is installed to pin memory for")


def _install_untyped() -> None:
    U = UntypedStorage
    U.__getitem__ = _untyped_getitem
    U.__setitem__ = _untyped_setitem
    U.__repr__ = _untyped_repr
    U.__str__ = _untyped_repr
    U.__iter__ = lambda self: iter(self.tolist())
    U.__copy__ = _untyped_clone
    U.__deepcopy__ = lambda self, memo: memo.setdefault(id(self), _untyped_clone(self))
    U.__reduce_ex__ = _untyped_reduce_ex
    U.__sizeof__ = lambda self: object.__sizeof__(self) + self.nbytes()
    U.tolist = lambda self: _bytes(self.cpu()).tolist()
    U.copy_ = _untyped_copy_
    U.clone = _untyped_clone
    U.fill_ = _untyped_fill_
    U.resize_ = _untyped_resize_
    U.to = _untyped_to
    U.cpu = lambda self: _untyped_to(self, device="cpu")
    U.cuda = lambda self, device=None, non_blocking=False: _untyped_to(
        self,
        device=_C.device("cuda") if device is None else _C.device("cuda", device),
        non_blocking=non_blocking,
    )
    U.type = _untyped_type
    U.untyped = lambda self: self
    U.element_size = lambda self: 1
    U.get_device = lambda self: self.device.index
    U.is_cuda = property(lambda self: self.device.type == "cuda")
    U.is_hpu = property(lambda self: self.device.type == "hpu")
    U.is_sparse = False
    U.is_sparse_csr = False
    U.is_pinned = lambda self, device="cuda": False
    U.pin_memory = _pin_memory
    U.share_memory_ = _untyped_share_memory_
    U._new_shared = classmethod(_new_shared)
    U.from_buffer = classmethod(_from_buffer)
    U.new = lambda self: UntypedStorage(0, device=self.device)
    U.byteswap = lambda self, dtype: _byteswap(self, dtype)
    U.from_file = classmethod(_untyped_from_file)
    U.filename = property(
        lambda self: _FILENAMES.get(self), doc="The file this storage maps (from_file), or None."
    )
    for name, dtype in _CONVERSIONS.items():
        setattr(U, name, lambda self, _d=dtype: _converted(self, _d))


def _byteswap(self, dtype) -> None:
    """Reverses the bytes of each element of `dtype`, in place."""
    item = _C.empty(0, dtype=dtype).element_size()
    if item == 1:
        return
    if self.nbytes() % item:
        raise RuntimeError(
            f"byteswap: {self.nbytes()} bytes are not whole elements of {item} bytes"
        )
    b = _bytes(self).view(-1, item)
    b.copy_(b.flip(1))


# ---- TypedStorage --------------------------------------------------------------------------

_warned = False


def _warn_typed_storage_removal(stacklevel: int = 2) -> None:
    """PyTorch's one-time deprecation warning for TypedStorage."""
    global _warned
    if _warned:
        return
    _warned = True
    warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
        "be the only storage class. This should only matter to you if you are using storages "
        "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
        "of tensor.storage()",
        UserWarning,
        stacklevel=stacklevel + 1,
    )


class TypedStorage:
    """Bytes seen as elements of `dtype` (deprecated in PyTorch; kept for ported code).

    >>> s = flambeau.storage.TypedStorage([1.0, 2.0, 3.0], dtype=flambeau.float32)
    >>> s.dtype, s.size(), s[1]
    (flambeau.float32, 3, 2.0)
    >>> x = flambeau.tensor([1.0, 2.0])
    >>> x.storage().tolist()
    [1.0, 2.0]
    """

    is_sparse = False

    def __new__(cls, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        if cls is not TypedStorage and cls.__dict__.get("dtype") is not None:
            # A legacy class (FloatStorage(...)): a TypedStorage of its dtype.
            if dtype is not None:
                raise RuntimeError(
                    f"{cls.__name__}.__new__ received an unexpected keyword argument 'dtype'"
                )
            return TypedStorage(
                *args, wrap_storage=wrap_storage, dtype=cls.dtype, device=device, _internal=True
            )
        self = object.__new__(TypedStorage)
        self.dtype = _C.get_default_dtype() if dtype is None else dtype
        if wrap_storage is not None:
            if args:
                raise RuntimeError("TypedStorage: wrap_storage takes no positional arguments")
            if not isinstance(wrap_storage, UntypedStorage):
                got = type(wrap_storage).__name__
                raise TypeError(f"expected UntypedStorage for argument 'wrap_storage', got {got}")
            if device is not None and _C.device(device) != wrap_storage.device:
                raise RuntimeError("TypedStorage: device must match wrap_storage's device")
            self._untyped_storage = wrap_storage
            return self
        if len(args) > 1:
            raise RuntimeError(f"TypedStorage: too many positional arguments ({len(args)})")
        arg = args[0] if args else 0
        if isinstance(arg, builtins.int) and not isinstance(arg, builtins.bool):
            if arg < 0:
                raise RuntimeError(f"TypedStorage: size must be non-negative, got {arg}")
            item = _C.empty(0, dtype=self.dtype).element_size()
            self._untyped_storage = UntypedStorage(arg * item, device=device)
        else:
            values = _C.tensor(list(arg), dtype=self.dtype, device=_device(device))
            self._untyped_storage = values.untyped_storage()
        return self

    # -- geometry
    def element_size(self) -> int:
        return _C.empty(0, dtype=self.dtype).element_size()

    def size(self) -> int:
        return self._untyped_storage.nbytes() // self.element_size()

    __len__ = size

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_hpu(self) -> bool:
        return self.device.type == "hpu"

    @property
    def filename(self):
        return None

    def get_device(self):
        return self.device.index

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def _elements(self) -> _C.Tensor:
        return self._untyped_storage._view(self.dtype, 0, [self.size()], [1])

    # -- values
    def tolist(self) -> list:
        return self._elements().tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if not isinstance(idx, builtins.int):
            raise RuntimeError(f"can't index a {type(self).__name__} with {type(idx).__name__}")
        n = self.size()
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return self._elements()[idx].item()

    def __setitem__(self, idx, value):
        if not isinstance(idx, (builtins.int, slice)):
            raise RuntimeError(f"can't index a {type(self).__name__} with {type(idx).__name__}")
        if isinstance(idx, builtins.int):
            n = self.size()
            if not -n <= idx < n:
                raise IndexError(f"index {idx} out of range for storage of size {n}")
        self._elements()[idx] = value

    def fill_(self, value):
        self._elements().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        _untyped_copy_(self._untyped_storage, source, non_blocking)
        return self

    def clone(self):
        return TypedStorage(
            wrap_storage=self._untyped_storage.clone(), dtype=self.dtype, _internal=True
        )

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return memo.setdefault(id(self), self.clone())

    def __reduce_ex__(self, protocol):
        del protocol
        return _rebuild_typed, (self._untyped_storage, str(self.dtype).removeprefix("flambeau."))

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + self.nbytes()

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        footer = (
            f"[flambeau.storage.TypedStorage(dtype={self.dtype}, device={self.device}) "
            f"of size {self.size()}]"
        )
        return f"{body}\n{footer}" if body else footer

    __str__ = __repr__

    # -- devices, memory and types
    def to(self, *, device=None, non_blocking=False):
        moved = _untyped_to(self._untyped_storage, device=device, non_blocking=non_blocking)
        return TypedStorage(wrap_storage=moved, dtype=self.dtype, _internal=True)

    def cpu(self):
        return self.to(device="cpu")

    def cuda(self, device=None, non_blocking=False):
        dev = _C.device("cuda") if device is None else _C.device("cuda", device)
        return self.to(device=dev, non_blocking=non_blocking)

    def is_shared(self) -> bool:
        return self._untyped_storage.is_shared()

    def share_memory_(self):
        self._untyped_storage.share_memory_()
        return self

    @classmethod
    def _new_shared(cls, size, *, device=None):
        dtype = cls.__dict__.get("dtype") or _C.get_default_dtype()
        item = _C.empty(0, dtype=dtype).element_size()
        untyped = UntypedStorage._new_shared(size * item, device=device)
        return TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)

    def is_pinned(self, device="cuda") -> bool:
        return False

    def pin_memory(self, device="cuda"):
        return _pin_memory(self._untyped_storage, device)

    def resizable(self) -> bool:
        return self._untyped_storage.resizable()

    def resize_(self, size):
        self._untyped_storage.resize_(builtins.int(size) * self.element_size())
        return self

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            name = _LEGACY_OF_DTYPE.get(self.dtype)
            return f"torch.{name}" if name else "flambeau.storage.TypedStorage"
        target = _retype(self._untyped_storage, dtype, non_blocking).dtype
        return TypedStorage(
            wrap_storage=self._elements().to(target).untyped_storage(), dtype=target, _internal=True
        )

    def pickle_storage_type(self) -> str:
        return _LEGACY_OF_DTYPE[self.dtype]

    def _to(self, dtype):
        return TypedStorage(
            wrap_storage=self._elements().to(dtype).untyped_storage(), dtype=dtype, _internal=True
        )

    @classmethod
    def from_buffer(cls, buffer, byte_order="native", count=-1, offset=0, *, dtype=None):
        dtype = cls.__dict__.get("dtype") or dtype or _C.get_default_dtype()
        item = _C.empty(0, dtype=dtype).element_size()
        data = memoryview(buffer).cast("B")[offset:]
        n = len(data) // item if count < 0 else count
        if n * item > len(data):
            raise ValueError(
                f"buffer has only {len(data)} bytes after offset {offset}; {n * item} requested"
            )
        if byte_order not in ("native", "little", "big"):
            raise ValueError(f"byte_order must be 'native', 'little' or 'big', got {byte_order!r}")
        raw = _storage_of_bytes(data[: n * item])
        if byte_order not in ("native", sys.byteorder):
            raw.byteswap(dtype)
        return TypedStorage(wrap_storage=raw, dtype=dtype, _internal=True)


for _name, _dtype in _CONVERSIONS.items():
    setattr(TypedStorage, _name, lambda self, _d=_dtype: self._to(_d))


def _rebuild_typed(untyped, dtype_name: str):
    return TypedStorage(wrap_storage=untyped, dtype=getattr(_C, dtype_name), _internal=True)


class _LegacyStorageMeta(type):
    """isinstance(t.storage(), FloatStorage) holds when the dtypes match, as in PyTorch."""

    def __instancecheck__(cls, instance):
        if type(instance) is TypedStorage:
            return instance.dtype == cls.dtype
        return type.__instancecheck__(cls, instance)


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    dtype = None


def _legacy_class(name: str, dtype) -> type:
    return _LegacyStorageMeta(name, (_LegacyStorage,), {"dtype": dtype, "__module__": "flambeau"})


LEGACY_STORAGES = {name: _legacy_class(name, dtype) for name, dtype in _LEGACY_NAMES.items()}


# ---- tensors and storages ------------------------------------------------------------------


def _tensor_storage(self) -> TypedStorage:
    """The tensor's storage as a TypedStorage of its dtype (deprecated in PyTorch)."""
    _warn_typed_storage_removal()
    return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)


def _typed_storage(self) -> TypedStorage:
    return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)


def _storage_type(self):
    return LEGACY_STORAGES[_LEGACY_OF_DTYPE[self.dtype]]


def _share_memory_(self):
    """Moves the tensor's storage to shared memory (a no-op when it is there already)."""
    self.untyped_storage().share_memory_()
    return self


def _is_shared(self) -> bool:
    return self.untyped_storage().is_shared()


def _source_tensor(self, source):
    """set_'s source given as a storage: a tensor of self's dtype over it."""
    if isinstance(source, TypedStorage):
        if source.dtype != self.dtype:
            raise RuntimeError(
                f"Expected a Storage of type {self.dtype} or an UntypedStorage, but got type "
                f"{source.dtype} for argument 1 'storage'"
            )
        source = source.untyped()
    return source._view(self.dtype, 0, [0], [1])


def _install_set(T) -> None:
    tensor_set_ = T.set_

    def set_(self, *args, **kwargs):
        source = args[0] if args else kwargs.get("source")
        if not isinstance(source, (UntypedStorage, TypedStorage)):
            return tensor_set_(self, *args, **kwargs)
        # A storage: PyTorch's set_(source, storage_offset=0, size=None, stride=None).
        names = ("source", "storage_offset", "size", "stride")
        bound = dict(zip(names, args), **kwargs)
        offset = bound.get("storage_offset", 0)
        size, stride = bound.get("size"), bound.get("stride")
        storage = source.untyped() if isinstance(source, TypedStorage) else source
        if size is None:
            size = (storage.nbytes() // self.element_size() - offset,)
        return tensor_set_(self, _source_tensor(self, source), offset, size, stride)

    set_.__doc__ = tensor_set_.__doc__
    T.set_ = set_


def is_storage(obj) -> bool:
    """Whether obj is a storage (an UntypedStorage or a TypedStorage).

    >>> flambeau.is_storage(flambeau.tensor([1.0]).untyped_storage())
    True
    >>> flambeau.is_storage(flambeau.tensor([1.0]))
    False
    """
    return isinstance(obj, (UntypedStorage, TypedStorage))


def install() -> None:
    _install_untyped()
    T = _C.Tensor
    T.storage = _tensor_storage
    T._typed_storage = _typed_storage
    T.storage_type = _storage_type
    T.share_memory_ = _share_memory_
    T.is_shared = _is_shared
    _install_set(T)
