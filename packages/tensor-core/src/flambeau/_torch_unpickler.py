"""The pickle reader behind loading PyTorch checkpoints: it rebuilds, and runs nothing else.

A checkpoint's pickle names the functions that rebuild it
(``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``,
``collections.OrderedDict``, ...); a plain unpickler would import and call
whatever it names. Here ``find_class`` is an allow-list: each name PyTorch
writes for tensors, parameters, sizes, devices, dtypes and containers maps to a
flambeau function that checks its arguments and builds the flambeau
equivalent, and any other name is refused before anything is imported.
REDUCE calls only what ``find_class`` handed out, BUILD sets attributes only
on an OrderedDict (a state dict's ``_metadata``), and NEWOBJ, INST and OBJ
build nothing (PyTorch's own weights-only loader let other paths through:
CVE-2025-32434). With ``weights_only=False``, for a file its caller trusts,
other names are imported as pickle does, except PyTorch's own, which flambeau
cannot provide.

The reader is pickle's pure-Python unpickler, whose opcode table can be
overridden opcode by opcode; a checkpoint's pickle is small (its storages are
records of their own), so its speed does not matter.
"""

from __future__ import annotations

import pickle
from collections import Counter, OrderedDict

import flambeau as F
from flambeau import serialization as _S

# Python 2's module names, as protocol-2 pickles write them, and a module torch renamed.
_MODULE_ALIASES = {
    "__builtin__": "builtins",
    "copy_reg": "copyreg",
    "torch.tensor": "torch._tensor",
}

_STORAGE_DTYPES = {
    "FloatStorage": "float32",
    "DoubleStorage": "float64",
    "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "ByteStorage": "uint8",
    "CharStorage": "int8",
    "ShortStorage": "int16",
    "IntStorage": "int32",
    "LongStorage": "int64",
    "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
}
_UNTYPED = ("UntypedStorage", "_UntypedStorage")

# torch's dtype names (and aliases) that flambeau has.
_DTYPES = {name: name for name in set(_STORAGE_DTYPES.values())}
_DTYPES.update(
    float="float32",
    double="float64",
    half="float16",
    short="int16",
    int="int32",
    long="int64",
    cfloat="complex64",
    cdouble="complex128",
)

# PyTorch's dtypes that flambeau lacks.
_FOREIGN_DTYPES = {"uint16", "uint32", "uint64", "complex32", "chalf", "float4_e2m1fn_x2"}
_FOREIGN_DTYPES |= {"float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"}
_FOREIGN_DTYPES |= {"float8_e8m0fnu", "qint8", "quint8", "qint32", "quint4x2", "quint2x4"}
_FOREIGN_DTYPES |= {f"int{n}" for n in range(1, 8)} | {f"uint{n}" for n in range(1, 8)}
_FOREIGN_DTYPES |= {"bits1x8", "bits2x4", "bits4x2", "bits8", "bits16"}

# What PyTorch can save that flambeau cannot hold, and how to say so.
_UNSUPPORTED = {
    "_rebuild_qtensor": "a quantized tensor",
    "_rebuild_sparse_tensor": "a sparse tensor",
    "_rebuild_sparse_csr_tensor": "a sparse tensor",
    "_rebuild_nested_tensor": "a nested tensor",
    "_rebuild_meta_tensor_no_storage": "a tensor on the meta device",
    "_rebuild_wrapper_subclass": "a tensor subclass",
    "_rebuild_device_tensor_from_numpy": "a tensor of a device without storage (XLA)",
    "_rebuild_device_tensor_from_cpu_tensor": "a tensor of a device without storage (XLA)",
    "_rebuild_xla_tensor": "an XLA tensor",
    "_rebuild_mlc_tensor": "an MLC tensor",
}


class StorageType:
    """``torch.FloatStorage`` and its kin, as a checkpoint names them: only the dtype counts."""

    __slots__ = ("name", "dtype", "untyped")

    def __init__(self, name: str, dtype: F.dtype, untyped: bool):
        self.name, self.dtype, self.untyped = name, dtype, untyped

    def __repr__(self):
        return f"torch.{self.name}"


class Storage:
    """A storage of the checkpoint once loaded: ``flat`` is a 1-D tensor of its element type.

    An untyped storage (``dtype`` uint8) is viewed as each tensor's dtype; in a file of
    the other byte order its elements are swapped when that dtype is first known.
    """

    __slots__ = ("key", "dtype", "flat", "untyped", "swap_pending", "swapped")

    def __init__(self, key, dtype, flat, untyped=False, swap_pending=False):
        self.key, self.dtype, self.flat, self.untyped = key, dtype, flat, untyped
        self.swap_pending, self.swapped = swap_pending, None


class _TypeName:
    """``torch.Tensor`` or ``torch.nn.Parameter`` as the type argument of _rebuild_from_type_v2."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return self.name


_TENSOR, _PARAMETER = _TypeName("torch.Tensor"), _TypeName("torch.nn.Parameter")


def swap_size(dtype: F.dtype) -> int:
    """The size of the units whose bytes a change of byte order reverses (complex: each half)."""
    return dtype.itemsize // (2 if dtype.is_complex else 1)


class TorchUnpickler(pickle._Unpickler):
    """Unpickles a checkpoint's pickle; ``storage_for(persistent_id)`` supplies its storages."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, storage_for, *, weights_only: bool, source: str, deferred=None):
        super().__init__(file, encoding="utf-8")
        self.storage_for, self.weights_only, self.source = storage_for, weights_only, source
        self.handed_out: dict[int, object] = {}  # id -> what find_class returned
        # Where storages are filled after the pickle is read (the legacy format), the
        # conjugated or negated copies are made then: (copy, view, conj, neg) each.
        self.deferred = deferred

    def fail(self, why: str) -> _S.UnpicklingError:
        return _S._fail(self.source, why)

    # ---- what names may be found -------------------------------------------------

    def find_class(self, module, name):
        module = _MODULE_ALIASES.get(module, module)
        found = self._builtin(module, name)
        if found is None:
            found = _S._safe_global(module, name)
        if found is None:
            if module == "torch" or module.startswith("torch."):
                raise self.fail(
                    f"the checkpoint holds {module}.{name}, a PyTorch object that flambeau "
                    "cannot rebuild (flambeau reads tensors, parameters, sizes, devices, dtypes "
                    "and containers: save the model's state_dict() instead of the model)"
                )
            if self.weights_only:
                raise self.fail(
                    f"the checkpoint asks for {module}.{name}, which is not allowed. If you trust "
                    "this file, allow it with flambeau.serialization.add_safe_globals([...]) or "
                    "the safe_globals context manager, or pass weights_only=False"
                )
            try:
                found = super().find_class(module, name)
            except (ImportError, AttributeError) as e:
                raise self.fail(f"cannot find {module}.{name} ({e})") from e
        self.handed_out[id(found)] = found
        return found

    def _builtin(self, module: str, name: str):
        """What the allow-list maps this name to, or None."""
        if module in ("torch", "torch.cuda", "torch.storage") and name.endswith("Storage"):
            return self._storage_type(name)
        if module == "torch":
            if name in _DTYPES:
                return getattr(F, _DTYPES[name])
            if name in _FOREIGN_DTYPES:
                raise self.fail(
                    f"the checkpoint holds the dtype torch.{name}, which flambeau lacks"
                )
            return {"Size": self._size, "device": self._device, "Tensor": _TENSOR}.get(name)
        if module == "torch._utils":
            if name in _UNSUPPORTED:
                raise self.fail(f"the checkpoint holds {_UNSUPPORTED[name]}, which flambeau lacks")
            if name in ("_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_tensor_v3"):
                return getattr(self, name)
            if name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
                return getattr(self, name)
        if module == "torch._tensor" and name in ("_rebuild_from_type", "_rebuild_from_type_v2"):
            return self._rebuild_from_type
        if (module, name) in (("torch.nn.parameter", "Parameter"), ("torch.nn", "Parameter")):
            return _PARAMETER
        if (module, name) == ("torch.serialization", "_get_layout"):
            return self._layout
        if module == "collections" and name in ("OrderedDict", "Counter"):
            return self._ordered_dict if name == "OrderedDict" else self._counter
        if module == "builtins" and name in ("set", "frozenset", "complex", "bytearray"):
            return getattr(self, f"_{name}")
        if (module, name) == ("_codecs", "encode"):
            return self._encode
        return None

    def _storage_type(self, name: str) -> StorageType:
        if name in _UNTYPED:
            return StorageType(name, F.uint8, untyped=True)
        if name in _STORAGE_DTYPES:
            return StorageType(name, getattr(F, _STORAGE_DTYPES[name]), untyped=False)
        raise self.fail(f"the checkpoint holds a torch.{name}, whose element type flambeau lacks")

    # ---- the opcodes that call or change objects -------------------------------------

    def persistent_load(self, pid):
        return self.storage_for(pid)

    def load_reduce(self):
        func = self.stack[-2]
        if self.weights_only and self.handed_out.get(id(func)) is not func:
            raise self.fail(f"REDUCE of {type(func).__name__}, which find_class did not give")
        pickle._Unpickler.load_reduce(self)

    dispatch[pickle.REDUCE[0]] = load_reduce

    def load_build(self):
        state, inst = self.stack[-1], self.stack[-2]
        if type(inst) in (OrderedDict, Counter) and _plain_attributes(state):
            self.stack.pop()
            inst.__dict__.update(state)  # a state dict's _metadata
        elif self._trusted(type(inst)):
            pickle._Unpickler.load_build(self)
        else:
            raise self.fail(f"BUILD of a {type(inst).__name__} is not allowed")

    dispatch[pickle.BUILD[0]] = load_build

    def _trusted(self, cls) -> bool:
        """Whether objects of cls may be built as pickle does: the caller allowed it."""
        return not self.weights_only or any(cls is c for c in _S._safe_classes.values())

    def _refuse_unless_trusted(opcode: bytes, at, name: str):
        default = pickle._Unpickler.dispatch[opcode[0]]

        def load(self):
            cls = self.stack[at] if at is not None and len(self.stack) >= -at else None
            if not self.weights_only or (isinstance(cls, type) and self._trusted(cls)):
                return default(self)
            raise self.fail(f"the pickle opcode {name} is not allowed in a checkpoint")

        return load

    dispatch[pickle.NEWOBJ[0]] = _refuse_unless_trusted(pickle.NEWOBJ, -2, "NEWOBJ")
    dispatch[pickle.NEWOBJ_EX[0]] = _refuse_unless_trusted(pickle.NEWOBJ_EX, -3, "NEWOBJ_EX")
    for _op, _name in ((pickle.INST, "INST"), (pickle.OBJ, "OBJ")):
        dispatch[_op[0]] = _refuse_unless_trusted(_op, None, _name)
    del _op, _name, _refuse_unless_trusted

    # ---- tensors and parameters --------------------------------------------------------

    def _rebuild_tensor(self, storage, offset, size, stride):
        return self._view(storage, None, offset, size, stride)

    def _rebuild_tensor_v2(
        self, storage, offset, size, stride, requires_grad, backward_hooks, metadata=None
    ):
        return self._finish(
            self._view(storage, None, offset, size, stride), requires_grad, metadata
        )

    def _rebuild_tensor_v3(
        self, storage, offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None
    ):
        if not isinstance(dtype, F.dtype):
            raise self.fail(f"_rebuild_tensor_v3 expects a dtype, got {type(dtype).__name__}")
        return self._finish(
            self._view(storage, dtype, offset, size, stride), requires_grad, metadata
        )

    def _view(self, storage, dtype, offset, size, stride) -> F.Tensor:
        if not isinstance(storage, Storage):
            raise self.fail(f"a tensor's storage is a {type(storage).__name__}")
        size, stride = self._dims(size, "size"), self._dims(stride, "stride")
        flat = self._typed(storage, dtype or storage.dtype)
        nbytes = flat.numel() * flat.element_size()
        if problem := _S._geometry_problem(size, stride, offset, flat.element_size(), nbytes):
            raise self.fail(f"tensor over storage {storage.key!r}: {problem}")
        return flat.as_strided(size, stride, flat.storage_offset() + offset)

    def _typed(self, storage: Storage, dtype: F.dtype) -> F.Tensor:
        """The storage as a flat tensor of dtype."""
        if dtype == storage.dtype:
            return storage.flat
        if not storage.untyped:
            raise self.fail(f"storage {storage.key!r} of {storage.dtype} read as {dtype}")
        raw = storage.flat
        size = swap_size(dtype)
        if storage.swap_pending and size > 1:  # bytes read in the other byte order
            if storage.swapped is None:
                _S._byteswap_(raw, size)
                storage.swapped = size
            elif storage.swapped != size:
                raise self.fail(f"storage {storage.key!r} mixes element sizes across byte orders")
        return raw[: raw.numel() - raw.numel() % dtype.itemsize].view(dtype)

    def _dims(self, v, what: str) -> tuple:
        if not isinstance(v, (tuple, list)) or not all(type(n) is int for n in v):
            raise self.fail(f"a tensor's {what} is not a sequence of integers: {str(v)[:80]}")
        return tuple(v)

    def _finish(self, t: F.Tensor, requires_grad, metadata) -> F.Tensor:
        if metadata:  # the conjugate and negative bits of a lazily conjugated or negated view
            if not isinstance(metadata, dict) or not set(metadata) <= {"conj", "neg"}:
                raise self.fail(f"unknown tensor metadata {str(metadata)[:80]}")
            conj, neg = bool(metadata.get("conj")), bool(metadata.get("neg"))
            if self.deferred is not None and (conj or neg):
                self.deferred.append((F.empty_like(t), t, conj, neg))
                t = self.deferred[-1][0]
            else:
                t = resolve_bits(t, conj, neg)
        if type(requires_grad) is not bool:
            raise self.fail(f"requires_grad is a {type(requires_grad).__name__}")
        if requires_grad:
            if not (t.dtype.is_floating_point or t.dtype.is_complex):
                raise self.fail(f"requires_grad=True is not possible for {t.dtype}")
            t.requires_grad_(True)
        return t

    def _rebuild_parameter(self, data, requires_grad, backward_hooks):
        return self._parameter(data, requires_grad)

    def _rebuild_parameter_with_state(self, data, requires_grad, backward_hooks, state):
        return self._set_state(self._parameter(data, requires_grad), state)

    def _parameter(self, data, requires_grad):
        if not isinstance(data, F.Tensor) or type(requires_grad) is not bool:
            raise self.fail("a parameter's data is not a tensor, or its requires_grad not a bool")
        try:
            from flambeau.nn import Parameter
        except ImportError:  # without flambeau-nn a parameter loads as a tensor
            return data.detach().requires_grad_(requires_grad)
        return Parameter(data, requires_grad)

    def _rebuild_from_type(self, func, new_type, args, state):
        """A tensor of a subclass, or one with Python attributes (``_rebuild_from_type_v2``)."""
        if getattr(func, "__self__", None) is not self or not isinstance(args, tuple):
            raise self.fail("_rebuild_from_type_v2 of something other than a tensor")
        t = func(*args)
        if not isinstance(t, F.Tensor):
            raise self.fail("_rebuild_from_type_v2 of something other than a tensor")
        if new_type is _PARAMETER:
            t = self._parameter(t, t.requires_grad)
        elif new_type is not _TENSOR:
            raise self.fail(f"a tensor of type {new_type!r}, which flambeau lacks")
        return self._set_state(t, state)

    def _set_state(self, t, state):
        """A tensor's Python attributes: (dict or None) or (dict or None, slots dict or None)."""
        attrs, slots = state if isinstance(state, tuple) and len(state) == 2 else (state, None)
        for part in (attrs, slots):
            if part is None or part == {}:
                continue
            if not _plain_attributes(part):
                raise self.fail(f"a tensor's state is not a dict of attributes: {str(part)[:80]}")
            for name, value in part.items():
                setattr(t, name, value)
        return t

    # ---- the other allowed names -----------------------------------------------------

    def _size(self, dims=()):
        return F.Size(self._dims(dims, "Size"))

    def _device(self, kind, index=None):
        if not isinstance(kind, str) or not (index is None or type(index) is int):
            raise self.fail(f"malformed device ({kind!r}, {index!r})")
        return _S._device(kind if index is None else f"{kind}:{index}", self.source)

    def _layout(self, name):
        if name != "torch.strided" or not hasattr(F, "strided"):
            raise self.fail(
                f"the checkpoint holds a tensor of layout {name!r}, which flambeau lacks"
            )
        return F.strided

    def _pairs(self, items) -> list:
        pairs = list(items.items()) if isinstance(items, dict) else items
        if not isinstance(pairs, (list, tuple)) or not all(
            isinstance(p, (tuple, list)) and len(p) == 2 for p in pairs
        ):
            raise self.fail("a mapping's items are not key-value pairs")
        return pairs

    def _ordered_dict(self, items=()):
        return OrderedDict(self._pairs(items))

    def _counter(self, items=()):
        return Counter(dict(self._pairs(items)))

    def _set(self, items=()):
        if not isinstance(items, (list, tuple)):
            raise self.fail("a set's items are not a list")
        return set(items)

    def _frozenset(self, items=()):
        return frozenset(self._set(items))

    def _complex(self, real=0.0, imag=0.0):
        if not all(type(v) in (int, float) for v in (real, imag)):
            raise self.fail("a complex number's parts are not numbers")
        return complex(real, imag)

    def _bytearray(self, data=b""):
        if not isinstance(data, bytes):
            raise self.fail("a bytearray's data is not bytes")
        return bytearray(data)

    def _encode(self, text, encoding="utf-8"):
        """``_codecs.encode``: how protocol 2 pickles bytes, as their latin-1 text."""
        if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
            raise self.fail("_codecs.encode is allowed only to turn latin-1 text into bytes")
        return text.encode("latin-1")


def resolve_bits(t: F.Tensor, conj: bool, neg: bool) -> F.Tensor:
    """The values of a view PyTorch marks conjugated or negated (flambeau computes them)."""
    if conj:
        t = t.conj()
    return t.neg() if neg else t


def _plain_attributes(state) -> bool:
    """Whether BUILD's state only sets ordinary attributes (no slots, no __dunder__ names)."""
    return isinstance(state, dict) and all(
        isinstance(k, str) and not (k.startswith("__") and k.endswith("__")) for k in state
    )
