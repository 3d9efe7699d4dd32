"""load_lua: read Lua Torch7's binary serialization (`torch.save(path, obj)`, `.t7` files).

The format (torch7's File.lua), little-endian: every object starts with an int32 type tag:

    0 nil | 1 number (float64) | 2 string (int32 length, bytes) | 5 boolean (int32)
    3 table: int32 reference index, int32 n, then n (key, value) objects
    4 torch object: int32 reference index, version string "V 1" (int32 length, bytes),
      class name string, then the class's own data:
        Storage: long n, then n elements;
        Tensor: int32 ndim, ndim longs sizes, ndim longs strides, long offset (1-based),
                then the storage object;
        anything else (nn modules): one object, the table of its fields
    6/8 (7 legacy) function: [int32 reference index,] int32 size, bytecode, upvalue table

A reference index seen before stands for the same object (shared storages, cycles).
Longs are 8 bytes unless long_size=4. Lua functions are kept as bytecode (`LuaFunction`) and
never run. nn modules become flambeau.legacy.nn modules, with 1-based dimensions and indices
moved to 0-based; other classes become `TorchObject`s.
"""

from __future__ import annotations

import math
import os
import struct

import flambeau

from . import nn as lnn

TYPE_NIL, TYPE_NUMBER, TYPE_STRING, TYPE_TABLE, TYPE_TORCH, TYPE_BOOLEAN = 0, 1, 2, 3, 4, 5
TYPE_FUNCTION, LEGACY_TYPE_RECUR_FUNCTION, TYPE_RECUR_FUNCTION = 6, 7, 8

# Torch7 tensor/storage element types (CUDA ones load on the CPU).
_ELEMENTS = {
    "Double": flambeau.float64,
    "Float": flambeau.float32,
    "Half": flambeau.float16,
    "Byte": flambeau.uint8,
    "Char": flambeau.int8,
    "Short": flambeau.int16,
    "Int": flambeau.int32,
    "Long": flambeau.int64,
    "Cuda": flambeau.float32,
    "CudaDouble": flambeau.float64,
    "CudaHalf": flambeau.float16,
    "CudaByte": flambeau.uint8,
    "CudaChar": flambeau.int8,
    "CudaShort": flambeau.int16,
    "CudaInt": flambeau.int32,
    "CudaLong": flambeau.int64,
}
_MAX_DEPTH = 400


class T7ReaderError(ValueError):
    """The data is not a valid (or supported) Torch7 binary serialization.

    >>> try:
    ...     flambeau.legacy.load_lua(bytes([1, 0]))
    ... except flambeau.legacy.T7ReaderError as e:
    ...     print(e)
    truncated file: an int needs 4 bytes at byte 0, 2 left
    """


class LuaFunction:
    """A serialized Lua function: its bytecode and upvalues, never executed."""

    def __init__(self, bytecode, upvalues):
        self.bytecode, self.upvalues = bytecode, upvalues

    def __repr__(self):
        return f"LuaFunction({len(self.bytecode)} bytes of bytecode)"


class TorchObject:
    """An instance of a Torch7 class this package does not model: its class name and fields."""

    def __init__(self, typename, fields):
        self.torch_typename = typename
        self.fields = fields

    def __getattr__(self, name):
        fields = self.__dict__.get("fields") or {}
        if isinstance(fields, dict) and name in fields:
            return fields[name]
        raise AttributeError(name)

    def __repr__(self):
        return f"TorchObject({self.torch_typename!r})"


class _Reader:
    def __init__(self, data, long_size):
        if long_size not in (4, 8):
            raise ValueError("long_size must be 4 or 8")
        self.data = memoryview(data)
        self.pos = 0
        self.long_fmt = "<q" if long_size == 8 else "<i"
        self.long_size = long_size
        self.memo = {}
        self.depth = 0

    # -- primitives ------------------------------------------------------------------
    def _take(self, n, what):
        if n < 0:
            raise T7ReaderError(f"negative length {n} for {what} at byte {self.pos}")
        if self.pos + n > len(self.data):
            raise T7ReaderError(
                f"truncated file: {what} needs {n} bytes at byte {self.pos}, "
                f"{len(self.data) - self.pos} left"
            )
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def int(self):
        return struct.unpack("<i", self._take(4, "an int"))[0]

    def long(self):
        return struct.unpack(self.long_fmt, self._take(self.long_size, "a long"))[0]

    def double(self):
        return struct.unpack("<d", self._take(8, "a number"))[0]

    def string(self):
        n = self.int()
        raw = bytes(self._take(n, "a string"))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw  # Lua strings are byte strings

    def _count(self, n, itemsize, what):
        # Refuse sizes the remaining bytes cannot hold before allocating anything.
        if n < 0 or n * itemsize > len(self.data) - self.pos:
            raise T7ReaderError(f"invalid or truncated {what} of {n} elements at byte {self.pos}")
        return n

    # -- objects -------------------------------------------------------------------------
    def object(self):
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise T7ReaderError(f"objects nested deeper than {_MAX_DEPTH} levels")
        try:
            return self._object()
        finally:
            self.depth -= 1

    def _object(self):
        start = self.pos
        tag = self.int()
        if tag == TYPE_NIL:
            return None
        if tag == TYPE_NUMBER:
            v = self.double()
            return int(v) if v.is_integer() and abs(v) < 2**53 else v
        if tag == TYPE_BOOLEAN:
            return self.int() == 1
        if tag == TYPE_STRING:
            return self.string()
        if tag in (TYPE_FUNCTION, TYPE_RECUR_FUNCTION, LEGACY_TYPE_RECUR_FUNCTION):
            return self._function(tag)
        if tag in (TYPE_TABLE, TYPE_TORCH):
            index = self.int()
            if index in self.memo:
                return self.memo[index]
            if tag == TYPE_TABLE:
                return self._table(index)
            return self._torch(index)
        raise T7ReaderError(f"unknown type tag {tag} at byte {start}")

    def _function(self, tag):
        index = self.int() if tag != TYPE_FUNCTION else None
        if index is not None and index in self.memo:
            return self.memo[index]
        size = self.int()
        func = LuaFunction(bytes(self._take(size, "function bytecode")), None)
        if index is not None:
            self.memo[index] = func
        func.upvalues = self.object()
        return func

    def _table(self, index):
        table = {}
        self.memo[index] = table  # before the contents: tables may refer to themselves
        n = self._count(self.int(), 8, "table")
        for _ in range(n):
            key = self.object()
            value = self.object()
            try:
                table[key] = value
            except TypeError as e:
                raise T7ReaderError(f"unhashable table key {type(key).__name__}") from e
        return table

    def _torch(self, index):
        version = self.string()
        if isinstance(version, str) and version.startswith("V "):
            class_name = self.string()
        else:  # files from before versioning store the class name directly
            class_name = version
        if not isinstance(class_name, str):
            raise T7ReaderError("class name is not text")
        if class_name.startswith("torch.") and class_name.endswith("Storage"):
            obj = self._storage(class_name)
            self.memo[index] = obj
            return obj
        if class_name.startswith("torch.") and class_name.endswith("Tensor"):
            obj = self._tensor(class_name)
            self.memo[index] = obj
            return obj
        # Other classes store one object, the table of their fields. Register a
        # placeholder first so that cycles resolve to the finished object.
        holder = _Pending()
        self.memo[index] = holder
        fields = self.object()
        obj = _build(class_name, fields)
        self.memo[index] = obj
        _patch_pending(obj, holder)
        return obj

    def _element_type(self, class_name, suffix):
        kind = class_name[len("torch.") : -len(suffix)]
        if kind not in _ELEMENTS:
            raise T7ReaderError(f"unsupported Torch7 type {class_name}")
        return _ELEMENTS[kind]

    def _storage(self, class_name):
        dtype = self._element_type(class_name, "Storage")
        itemsize = flambeau.empty(0, dtype=dtype).element_size()
        n = self._count(self.long(), itemsize, class_name)
        raw = bytearray(self._take(n * itemsize, class_name))
        if n == 0:
            return flambeau.empty(0, dtype=dtype)
        return flambeau.frombuffer(raw, dtype=dtype).clone()

    def _tensor(self, class_name):
        dtype = self._element_type(class_name, "Tensor")
        ndim = self.int()
        if ndim < 0 or ndim > 64:
            raise T7ReaderError(f"{class_name} with {ndim} dimensions")
        size = [self.long() for _ in range(ndim)]
        stride = [self.long() for _ in range(ndim)]
        offset = self.long() - 1
        storage = self.object()
        if ndim == 0 or storage is None:
            return flambeau.empty(0, dtype=dtype)
        if not isinstance(storage, flambeau.Tensor) or storage.dtype != dtype:
            raise T7ReaderError(f"{class_name} does not hold a matching storage")
        if any(s < 0 for s in size) or any(s < 0 for s in stride) or offset < 0:
            raise T7ReaderError(f"{class_name} with negative sizes, strides or offset")
        if math.prod(size) == 0:
            return flambeau.empty(size, dtype=dtype)
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= storage.numel():
            raise T7ReaderError(
                f"{class_name} of size {size} and strides {stride} at offset {offset} "
                f"overruns its storage of {storage.numel()} elements"
            )
        return storage.as_strided(size, stride, offset)


class _Pending:
    """Stands for an object while its fields are read (only reachable through cycles)."""


def _patch_pending(obj, holder):
    # Replace references to the placeholder inside obj's own fields (one level of cycle).
    fields = vars(obj) if hasattr(obj, "__dict__") else {}
    for k, v in list(fields.items()):
        if v is holder:
            setattr(obj, k, obj)
        elif isinstance(v, list):
            fields[k] = [obj if x is holder else x for x in v]


# -- nn modules ----------------------------------------------------------------------------


def _as_list(table):
    """A Lua array ({1: a, 2: b, ...}) as a Python list; other tables unchanged."""
    if isinstance(table, dict) and table and all(isinstance(k, int) for k in table):
        keys = sorted(table)
        if keys == list(range(1, len(keys) + 1)):
            return [table[k] for k in keys]
    if isinstance(table, dict) and not table:
        return []
    return table


def _zero_based(v):
    """A Lua 1-based position (dimension or index) as a Python one; negatives are kept."""
    return v - 1 if isinstance(v, int) and v > 0 else v


def _sizes(v):
    if isinstance(v, flambeau.Tensor):
        return [int(s) for s in v.tolist()]
    if isinstance(v, dict):
        return [int(s) for s in _as_list(v)]
    return v


# Fields holding 1-based positions, per class (and its subclasses).
_ONE_BASED = {
    "JoinTable": ("dimension",),
    "SplitTable": ("dimension",),
    "SelectTable": ("index",),
    "NarrowTable": ("offset",),
    "Concat": ("dimension",),
    "Parallel": ("inputDimension", "outputDimension"),
    "Narrow": ("dimension", "index"),
    "Select": ("dimension", "index"),
    "Squeeze": ("dim",),
    "Unsqueeze": ("pos",),
    "Replicate": ("dim",),
    "Padding": ("dim", "index"),
    "Sum": ("dimension",),
    "Mean": ("dimension",),
    "Max": ("dimension",),
    "Min": ("dimension",),
}
_RENAMES = {"lambda": "lambd"}


def _fix_module(obj, name):
    """Derive what the legacy classes keep beside Torch7's fields."""
    if isinstance(obj, lnn.Container) and hasattr(obj, "modules"):
        obj.modules = list(_as_list(obj.modules) or [])
    for field in _ONE_BASED.get(name, ()):
        if hasattr(obj, field):
            setattr(obj, field, _zero_based(getattr(obj, field)))
    if name == "Transpose" and hasattr(obj, "permutations"):
        obj.permutations = [tuple(_zero_based(d) for d in _as_list(p)) for p in
                            _as_list(obj.permutations)]  # fmt: skip
    if name in ("View", "Reshape") and hasattr(obj, "size"):
        obj.size = _sizes(obj.size)
        obj.numElements = math.prod(obj.size)
        obj.__dict__.setdefault("numInputDims", None)
        obj.__dict__.setdefault("batchMode", None)
    if name == "LookupTable":
        pad = getattr(obj, "paddingValue", 0)
        obj.paddingValue = pad - 1 if isinstance(pad, int) and pad > 0 else None
        obj.__dict__.setdefault("maxNorm", None)
        obj.__dict__.setdefault("normType", 2.0)
        obj.__dict__.setdefault("shouldScaleGradByFreq", False)
    if isinstance(obj, lnn.SpatialConvolution):
        obj.__dict__.setdefault("padW", 0)
        obj.__dict__.setdefault("padH", obj.padW)
        obj.stride, obj.padding = [obj.dH, obj.dW], [obj.padH, obj.padW]
        obj.dilation = [getattr(obj, "dilationH", 1), getattr(obj, "dilationW", 1)]
        obj.output_padding = [0, 0]
    if isinstance(obj, lnn.SpatialFullConvolution):
        obj.__dict__.setdefault("adjW", 0)
        obj.__dict__.setdefault("adjH", 0)
        obj.stride, obj.padding = [obj.dH, obj.dW], [obj.padH, obj.padW]
        obj.dilation, obj.output_padding = [1, 1], [obj.adjH, obj.adjW]
    if isinstance(obj, lnn.VolumetricConvolution):
        obj.stride = [obj.dT, obj.dH, obj.dW]
        obj.padding = [getattr(obj, "padT", 0), getattr(obj, "padH", 0), getattr(obj, "padW", 0)]
        obj.dilation, obj.output_padding = [1, 1, 1], [0, 0, 0]
    if isinstance(obj, lnn.TemporalConvolution):
        obj.stride, obj.padding, obj.dilation, obj.output_padding = [obj.dW], [0], [1], [0]
    if isinstance(obj, lnn.SpatialMaxPooling):
        obj.kernel, obj.stride_ = [obj.kH, obj.kW], [obj.dH, obj.dW]
        obj.padding = [getattr(obj, "padH", 0), getattr(obj, "padW", 0)]
        obj.__dict__.setdefault("ceil_mode", False)
    if isinstance(obj, lnn.VolumetricMaxPooling):
        obj.kernel, obj.stride_ = [obj.kT, obj.kH, obj.kW], [obj.dT, obj.dH, obj.dW]
        obj.padding = [getattr(obj, "padT", 0), getattr(obj, "padH", 0), getattr(obj, "padW", 0)]
        obj.__dict__.setdefault("ceil_mode", False)
    if isinstance(obj, lnn.SpatialAveragePooling):
        obj.__dict__.setdefault("ceil_mode", False)
        obj.__dict__.setdefault("count_include_pad", True)
        obj.__dict__.setdefault("divide", True)
    if isinstance(obj, lnn.BatchNormalization):
        obj.__dict__.setdefault("affine", getattr(obj, "weight", None) is not None)
        if (
            getattr(obj, "running_var", None) is None
            and getattr(obj, "running_std", None) is not None
        ):
            # Old Torch7 files keep 1/sqrt(var + eps).
            obj.running_var = obj.running_std.pow(-2) - obj.eps
        for k in ("weight", "bias", "gradWeight", "gradBias", "save_mean", "save_std"):
            obj.__dict__.setdefault(k, None)
    if isinstance(obj, lnn.Dropout):
        obj.__dict__.setdefault("v2", False)
        obj.__dict__.setdefault("inplace", False)
        obj.__dict__.setdefault("stochastic_inference", False)
    for flag in ("inplace",):
        if flag in _INPLACE_DEFAULT.get(name, ()):
            obj.__dict__.setdefault(flag, False)
    if isinstance(obj, (lnn.Linear, lnn.SpatialConvolution, lnn.Bilinear)):
        obj.__dict__.setdefault("bias", None)
        obj.__dict__.setdefault("gradBias", None)


_INPLACE_DEFAULT = {n: ("inplace",) for n in ("Threshold", "ReLU", "HardTanh", "ReLU6",
                                            "LeakyReLU", "ELU", "RReLU")}  # fmt: skip


def _build(class_name, fields):
    pkg, _, name = class_name.partition(".")
    cls = getattr(lnn, name, None) if pkg == "nn" else None
    if not (isinstance(cls, type) and issubclass(cls, (lnn.Module, lnn.Criterion))):
        return TorchObject(class_name, fields)
    if not isinstance(fields, dict):
        raise T7ReaderError(f"{class_name} is not stored as a table of fields")
    obj = cls.__new__(cls)
    # The base state first (output, gradInput, train), then Torch7's fields over it.
    (lnn.Module if issubclass(cls, lnn.Module) else lnn.Criterion).__init__(obj)
    for key, value in fields.items():
        if not isinstance(key, str):
            continue
        key = _RENAMES.get(key, key)
        if key in ("output", "gradInput") and isinstance(value, dict):
            value = _as_list(value)
        setattr(obj, key, value)
    _fix_module(obj, name)
    return obj


def load_lua(path, long_size=8):
    """Read a Torch7 binary file (`torch.save(path, obj)` in Lua, 'binary' mode).

    `path` is a file name, a path-like object, bytes, or a binary file object. Numbers
    come back as int or float, strings as str (bytes when not UTF-8), tables as dicts
    (Lua arrays as lists), tensors as flambeau tensors (views keep sharing their storage),
    storages as 1-D tensors, nn modules and criteria as flambeau.legacy.nn objects with
    0-based dimensions. Malformed or truncated data raises T7ReaderError.

    >>> import struct
    >>> flambeau.legacy.load_lua(struct.pack("<id", 1, 2.5))  # a Torch7 number: tag 1, float64
    2.5
    >>> flambeau.legacy.load_lua(struct.pack("<ii5s", 2, 5, b"hello"))  # tag 2: a string
    'hello'
    """
    if isinstance(path, (bytes, bytearray, memoryview)):
        data = bytes(path)
    elif hasattr(path, "read"):
        data = path.read()
    else:
        with open(os.fspath(path), "rb") as f:
            data = f.read()
    reader = _Reader(data, long_size)
    try:
        obj = reader.object()
    except RecursionError as e:  # pragma: no cover - guarded by _MAX_DEPTH
        raise T7ReaderError("objects nested too deeply") from e
    return _arrays_to_lists(obj, {})


def _arrays_to_lists(obj, done):
    """Turn Lua arrays inside plain tables into lists, once per table (tables may be shared
    or refer to themselves)."""
    if not isinstance(obj, dict):
        return obj
    if id(obj) in done:
        return done[id(obj)]
    done[id(obj)] = obj
    for k in list(obj):
        obj[k] = _arrays_to_lists(obj[k], done)
    result = _as_list(obj) if obj else obj
    done[id(obj)] = result
    return result
