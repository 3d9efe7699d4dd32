"""``flambeau.save`` and ``flambeau.load``: a pickle-free archive format.

An archive is a ZIP file (entries stored, not compressed) holding

* ``archive/manifest.json``: format name and version, the byte order, a
  table of storages, a table of tensors (storage, dtype, shape, stride,
  offset) and the saved object encoded as JSON with tagged containers;
* ``archive/data/<n>``: the raw bytes of each storage, 64-byte aligned in the
  file so that ``mmap=True`` can map them in place.

Each storage is written once, so tensors that were views of one another are
views of one storage again after loading. Other objects are saved as pickle's
protocol 2 takes them apart: a class and its state, or a callable and its arguments.
Loading never imports or runs code named by the archive: anything beyond tensors,
dtypes, devices and plain Python containers and values is refused unless its class
(or callable) was allowed with :func:`add_safe_globals` / :func:`safe_globals`, or
``weights_only=False``.

Loading trusts no number in the archive: every record must lie within the
file, every storage is allocated only once its declared size matches the bytes
the file really holds, and every tensor must fit within its storage, so what
``load`` allocates is bounded by the size of the file. Anything malformed
raises :class:`UnpicklingError`.

``load`` also reads what PyTorch's ``torch.save`` wrote (its ZIP format and the
legacy format before it; see ``flambeau._torch_format``) and ``.safetensors``
files (``flambeau.safetensors``); ``save(obj, f, _use_torch_format=True)``
writes PyTorch's ZIP format, for a PyTorch program to load.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import copyreg
import importlib
import io
import json
import math
import os
import pickle
import struct
import sys
import types
from collections import Counter, OrderedDict

import flambeau as F
from flambeau import _C
from flambeau.overrides import DisableTorchFunctionSubclass
from flambeau.utils.hooks import warn_if_has_hooks


class _ZipfileOnFirstUse:
    """The zipfile module, imported when an archive is first read or written: with the
    pathlib it pulls in, it would add ~15 ms to importing flambeau.nn, which registers
    its safe classes here."""

    def __getattr__(self, name):
        import zipfile

        return getattr(zipfile, name)


zipfile = _ZipfileOnFirstUse()

FORMAT = "flambeau-archive"
VERSION = 1
_MANIFEST = "archive/manifest.json"
_DATA = "archive/data/"
_ALIGN = 64
_PAD_ID = 0xF1B0  # ZIP extra-field id of the alignment padding
_DATA_DESCRIPTOR = 0x08  # ZIP flag: the CRC and sizes follow the record's bytes
_CHUNK = 1 << 20
_INT64 = 1 << 63  # sizes, strides, offsets and byte counts must fit the core's int64
_MAX_NDIM = 1024  # far beyond any real tensor; bounds the work one tensor record asks for
_TENSOR_KEYS = frozenset(["storage", "dtype", "shape", "stride", "offset"])
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: the class was defined in Python
_LEGACY_TEXT_MAGIC = b"L119547037146038801333356L\n"  # torch's legacy magic, pickle protocol 0/1

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals"]
__all__ += ["safe_globals", "UnpicklingError"]


class UnpicklingError(RuntimeError, pickle.UnpicklingError):
    """An archive that is corrupted, truncated, or asks for something not allowed or available.

    A ``RuntimeError``, and a ``pickle.UnpicklingError`` as ``torch.load`` raises.

    >>> import io
    >>> try:
    ...     flambeau.load(io.BytesIO(b"not an archive"))
    ... except flambeau.serialization.UnpicklingError as e:
    ...     print(type(e).__name__, isinstance(e, RuntimeError))
    UnpicklingError True
    """


# Allowed classes and functions by "module:qualname", or by the dotted name given
# with them as (obj, "module.name") for a checkpoint that names them otherwise.
_safe_classes: dict[str, object] = {}

# Classes weights_only loading always allows, as PyTorch's own allowlist does
# (MultiStepLR keeps its milestones in a Counter); not among the safe globals.
_ALWAYS_SAFE = {"collections:Counter": Counter}

# The functions and classes that save writes as references to be found by name again.
_GLOBAL_KINDS = (type, types.FunctionType, types.BuiltinFunctionType)


def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _global_name(obj) -> str | None:
    """The "module:qualname" under which importing finds obj again, or None."""
    module, name = getattr(obj, "__module__", None), getattr(obj, "__name__", None)
    # The core's functions are defined in flambeau._C and public as flambeau.<name>.
    if module == "flambeau._C" and isinstance(name, str) and getattr(F, name, None) is obj:
        return f"flambeau:{name}"
    for qualname in (getattr(obj, "__qualname__", None), name):
        if isinstance(module, str) and isinstance(qualname, str):
            if _resolve(f"{module}:{qualname}") is obj:
                return f"{module}:{qualname}"
    return None


def _safe_global(module: str, qualname: str):
    """The object allowed under this name, or None."""
    found = _safe_classes.get(f"{module}:{qualname}")
    return found if found is not None else _safe_classes.get(f"{module}.{qualname}")


def add_safe_globals(classes) -> None:
    """Allows ``load`` (with ``weights_only=True``) to rebuild objects of these classes.

    Functions may be allowed too (a reference to one, or one a PyTorch checkpoint
    calls); an entry ``(obj, "module.name")`` allows obj under that name.

    >>> import argparse
    >>> flambeau.serialization.add_safe_globals([argparse.Namespace])
    >>> argparse.Namespace in flambeau.serialization.get_safe_globals()
    True
    """
    for entry in classes:
        if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str):
            _safe_classes[entry[1]] = entry[0]
        else:
            _safe_classes[_global_name(entry) or _class_name(entry)] = entry


def get_safe_globals() -> list:
    """The classes and functions :func:`add_safe_globals` allowed, as a list: each entry is
    the object, or an ``(obj, "module.name")`` pair for one allowed under a given name.

    >>> import fractions
    >>> with flambeau.serialization.safe_globals([fractions.Fraction]):
    ...     print(fractions.Fraction in flambeau.serialization.get_safe_globals())
    True
    """
    return [obj if ":" in key else (obj, key) for key, obj in _safe_classes.items()]


def clear_safe_globals() -> None:
    """Forgets every class and function :func:`add_safe_globals` allowed, so that
    ``load(..., weights_only=True)`` again accepts only tensors, dtypes, devices and plain
    Python containers and values.

    >>> allowed = flambeau.serialization.get_safe_globals()
    >>> flambeau.serialization.clear_safe_globals()
    >>> flambeau.serialization.get_safe_globals()
    []
    >>> flambeau.serialization.add_safe_globals(allowed)  # allow them again
    """
    _safe_classes.clear()


@contextlib.contextmanager
def safe_globals(classes):
    """Allows these classes for the duration of the ``with`` block.

    >>> import argparse, io
    >>> buf = io.BytesIO()
    >>> flambeau.save({"args": argparse.Namespace(lr=0.1)}, buf)
    >>> with flambeau.serialization.safe_globals([argparse.Namespace]):
    ...     print(flambeau.load(io.BytesIO(buf.getvalue())))
    {'args': Namespace(lr=0.1)}
    """
    saved = dict(_safe_classes)
    add_safe_globals(classes)
    try:
        yield
    finally:
        _safe_classes.clear()
        _safe_classes.update(saved)


# ---- saving ------------------------------------------------------------------


_SPARSE_LAYOUTS = ("sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc")


class _Encoder:
    def __init__(self):
        self.storages: list[F.Tensor] = []  # flat uint8 CPU views, one per storage
        self.storage_index: dict[tuple[int, int], int] = {}
        self.tensors: list[dict] = []
        self.tensor_index: dict[int, int] = {}
        self.keep_alive: list = []  # ids stay unique while encoding
        self.active: set[int] = set()
        # Objects saved as "object" or "reduce" records, by id: a second reference to
        # one is a "ref" record, so that shared objects (a Parameter or a layer used
        # twice) load as one object again and a cycle through an object can be saved.
        self.memo: dict[int, int] = {}

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if id(obj) in self.memo:
            return {"$type": "ref", "memo": self.memo[id(obj)]}
        if isinstance(obj, int):
            return obj if type(obj) is int else int(obj)
        if isinstance(obj, float):
            if obj == obj and obj not in (float("inf"), float("-inf")):
                return obj
            return {"$type": "float", "repr": repr(obj)}
        if isinstance(obj, F.Tensor):
            if type(obj) is F.Tensor:
                warn_if_has_hooks(obj)  # backward hooks are not saved
                return {"$type": "tensor", "id": self._tensor(obj)}
            if obj.layout is not F.strided:
                return self._sparse(obj)
            if type(obj).__module__.startswith("flambeau.sparse"):  # semi-structured
                raise TypeError(
                    f"flambeau.save: cannot save a {type(obj).__name__}; save its dense "
                    "form (to_dense()) and compress it again after loading"
                )
            # The plain tensor under a subclass (a subclass's own detach keeps its class).
            with DisableTorchFunctionSubclass():
                data = obj.detach()
            return self._object(obj, {"data": data, "requires_grad": obj.requires_grad})
        if isinstance(obj, (F.dtype, F.device)):
            kind = "dtype" if isinstance(obj, F.dtype) else "device"
            return {"$type": kind, "name": str(obj).removeprefix("flambeau.")}
        if isinstance(obj, complex):
            parts = [self.encode(obj.real), self.encode(obj.imag)]
            return {"$type": "complex", "parts": parts}
        if isinstance(obj, (bytes, bytearray)):
            return {"$type": type(obj).__name__, "base64": base64.b64encode(obj).decode()}
        if type(obj).__module__ == "numpy":
            return self._numpy(obj)
        if isinstance(obj, _GLOBAL_KINDS):
            return {"$type": "global", "name": self._global(obj)}
        if id(obj) in self.active:
            raise ValueError(f"flambeau.save: cannot save a self-referencing {type(obj).__name__}")
        self.active.add(id(obj))
        try:
            return self._container(obj)
        finally:
            self.active.discard(id(obj))

    def _container(self, obj):
        t = type(obj)
        if t is list:
            return [self.encode(x) for x in obj]
        if t in (tuple, set, frozenset, F.Size):
            name = {tuple: "tuple", set: "set", frozenset: "frozenset", F.Size: "size"}[t]
            return {"$type": name, "items": [self.encode(x) for x in obj]}
        if t in (dict, OrderedDict):
            items = [[self.encode(k), self.encode(v)] for k, v in obj.items()]
            return {"$type": "dict" if t is dict else "odict", "items": items}
        return self._reduced(obj)

    def _reduced(self, obj):
        """Any other object, taken apart as pickle's protocol 2 does (``__reduce_ex__``):
        one rebuilt from its class and state is an "object" record; one with a reduction
        of its own (functools.partial, datetime, defaultdict) a "reduce" record, its
        callable saved by name with its arguments, state and contents."""
        try:
            rv = obj.__reduce_ex__(2)
        except TypeError as e:
            raise TypeError(
                f"flambeau.save: cannot save an object of type {type(obj).__qualname__} ({e})"
            ) from None
        if isinstance(rv, str):  # a module-level singleton, found again by its name
            module = getattr(obj, "__module__", None) or type(obj).__module__
            return {"$type": "global", "name": self._global(_resolve(f"{module}:{rv}"), rv)}
        if not isinstance(rv, tuple) or not 2 <= len(rv) <= 6:
            raise TypeError(f"flambeau.save: {type(obj).__qualname__}.__reduce_ex__ is malformed")
        func, args, state, listitems, dictitems = (rv + (None,) * 3)[:5]
        if func is copyreg.__newobj__:
            return self._object(obj, obj.__getstate__())
        record = {
            "$type": "reduce",
            "call": self._global(func),
            "args": [self.encode(a) for a in args],
            "memo": self._remember(obj),
        }
        if state is not None:
            record["state"] = self.encode(state)
        if listitems is not None:
            record["list"] = [self.encode(v) for v in listitems]
        if dictitems is not None:
            record["items"] = [[self.encode(k), self.encode(v)] for k, v in dictitems]
        return record

    def _sparse(self, t) -> dict:
        """A sparse tensor as the arguments of its public constructor (its index and
        value tensors), rebuilt through that constructor's checks on load."""
        layout = str(t.layout).removeprefix("flambeau.")
        if layout == "sparse_coo":
            parts = [t._indices(), t._values()]
        elif layout in ("sparse_csr", "sparse_bsr"):
            parts = [t.crow_indices(), t.col_indices(), t.values()]
        else:
            parts = [t.ccol_indices(), t.row_indices(), t.values()]
        return {
            "$type": "sparse",
            "layout": layout,
            "size": list(t.shape),
            "parts": [self.encode(part.detach()) for part in parts],
            "coalesced": layout == "sparse_coo" and t.is_coalesced(),
            "requires_grad": t.requires_grad,
        }

    def _object(self, obj, state):
        cls = type(obj)
        # Only classes written in Python are rebuilt from their state; functions,
        # classes, modules and C types (NumPy's included) carry no such state.
        if not cls.__flags__ & _HEAPTYPE:
            raise TypeError(f"flambeau.save: cannot save an object of type {cls.__qualname__}")
        if _resolve(_class_name(cls)) is not cls:
            raise TypeError(
                f"flambeau.save: class {_class_name(cls)} cannot be found again by its name "
                "(local or nested in a function), so it could not be loaded"
            )
        record = {"$type": "object", "class": _class_name(cls)}
        # Subclasses of the built-in containers hold their contents outside their state,
        # as pickle's protocol 2 keeps them: __new__'s arguments (a namedtuple's fields),
        # a dict's items, a list's elements.
        if isinstance(obj, tuple):
            args = obj.__getnewargs__() if hasattr(obj, "__getnewargs__") else tuple(obj)
            record["args"] = [self.encode(a) for a in args]
        record["memo"] = self._remember(obj)  # what follows may refer back to obj
        record["state"] = self.encode(state)
        if isinstance(obj, dict):
            record["items"] = [[self.encode(k), self.encode(v)] for k, v in obj.items()]
        elif isinstance(obj, list):
            record["list"] = [self.encode(v) for v in obj]
        return record

    def _remember(self, obj) -> int:
        n = self.memo[id(obj)] = len(self.memo)
        self.keep_alive.append(obj)
        return n

    def _global(self, obj, what=None) -> str:
        """A function or class (an activation stored on a layer) is saved by its name."""
        name = _global_name(obj) if obj is not None else None
        if name is None:
            kind = "class" if isinstance(obj, type) else "function"
            what = what or getattr(obj, "__qualname__", obj)
            raise TypeError(
                f"flambeau.save: cannot save the {kind} {what!r}: "
                "it cannot be found again by its name (a lambda, or local to a function)"
            )
        return name

    def _numpy(self, obj):
        import numpy as np

        if isinstance(obj, np.generic):
            return self.encode(obj.item())
        if isinstance(obj, np.ndarray):
            t = F.from_numpy(np.ascontiguousarray(obj))
            return {"$type": "ndarray", "id": self._tensor(t)}
        raise TypeError(f"flambeau.save: cannot save an object of type {type(obj).__qualname__}")

    def _tensor(self, t: F.Tensor) -> int:
        if id(t) in self.tensor_index:
            return self.tensor_index[id(t)]
        if t.dim() > _MAX_NDIM or math.prod(t.shape) * t.element_size() >= _INT64:
            raise ValueError(
                f"flambeau.save: a tensor of shape {tuple(t.shape)} and {t.dtype} has too many "
                "dimensions or bytes to be loaded again"
            )
        self.keep_alive.append(t)
        key = (t._storage_ptr(), t._storage_nbytes())
        if key not in self.storage_index or key[0] == 0:
            self.storage_index[key] = len(self.storages)
            n = t._storage_nbytes() // t.element_size()
            flat = t.detach().as_strided((n,), (1,), 0)
            self.storages.append(flat.cpu().contiguous().view(F.uint8))
        record = {
            "storage": self.storage_index[key],
            "dtype": str(t.dtype).removeprefix("flambeau."),
            "shape": list(t.shape),
            "stride": list(t.stride()),
            "offset": t.storage_offset(),
            "requires_grad": t.requires_grad,
            "device": str(t.device),
        }
        self.tensors.append(record)
        self.tensor_index[id(t)] = len(self.tensors) - 1
        return len(self.tensors) - 1


def save(obj, f, *, _use_torch_format: bool = False) -> None:
    """Saves ``obj`` (tensors in nested dicts, lists and tuples, plain values) to ``f``.

    ``f`` is a path or a binary file object (seekable or not). Storage bytes go
    from the tensors' memory to the file a chunk at a time, never copied whole,
    each record checksummed as written: saving while another thread writes a
    tensor may store a torn value, but the file always loads.

    With ``_use_torch_format=True`` the file is in PyTorch's ZIP format instead,
    for ``torch.load`` (``weights_only=True`` included) to read: tensors,
    parameters, sizes, dtypes, devices, plain values and containers only.

    >>> import io
    >>> buf = io.BytesIO()
    >>> flambeau.save({"w": flambeau.tensor([1.0, 2.0]), "step": 3}, buf)
    >>> flambeau.load(io.BytesIO(buf.getvalue()))
    {'w': tensor([1., 2.]), 'step': 3}
    """
    if _use_torch_format:
        from flambeau import _torch_writer

        return _torch_writer.save(obj, f)
    enc = _Encoder()
    root = enc.encode(obj)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "byteorder": sys.byteorder,
        "storages": [{"nbytes": s.numel()} for s in enc.storages],
        "tensors": enc.tensors,
        "root": root,
    }
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for i, s in enumerate(enc.storages):
            _write_aligned(zf, f"{_DATA}{i}", memoryview(s.numpy()))
        zf.writestr(_MANIFEST, json.dumps(manifest, separators=(",", ":")))


def _write_aligned(zf: zipfile.ZipFile, name: str, data: memoryview) -> None:
    """Writes one stored record, its bytes 64-byte aligned in the file.

    Another thread may write the tensor while it is saved, so the CRC must be of
    exactly the bytes written: each chunk is copied once into a small buffer, then
    checksummed (the core's fast CRC-32) and written from there. A concurrent
    write can tear a value, never make the file unloadable, and memory stays at
    one chunk. The CRC then goes into the local header, rewritten in place as
    ZipFile.open(info, "w") does, or after the bytes on an unseekable file.
    """
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = info.compress_size = data.nbytes
    info.CRC = 0  # known once the bytes are written
    if not zf._seekable:
        info.flag_bits |= _DATA_DESCRIPTOR
    zip64 = data.nbytes > zipfile.ZIP64_LIMIT
    start = zf.fp.tell()
    header = 30 + len(name.encode()) + (20 if zip64 else 0) + 4
    pad = -(start + header) % _ALIGN
    info.extra = struct.pack("<HH", _PAD_ID, pad) + b"\0" * pad
    zf._writecheck(info)  # duplicate names, ZIP64 allowed, archive open for writing
    info.header_offset = start
    zf._didModify = True
    zf.fp.write(info.FileHeader(zip64))
    chunk = memoryview(bytearray(min(_CHUNK, data.nbytes)))
    crc = 0
    for pos in range(0, data.nbytes, _CHUNK):
        piece = chunk[: min(_CHUNK, data.nbytes - pos)]
        piece[:] = data[pos : pos + len(piece)]
        crc = _C._crc32(piece, crc)
        zf.fp.write(piece)
    info.CRC = crc
    if info.flag_bits & _DATA_DESCRIPTOR:
        fmt = "<LLQQ" if zip64 else "<LLLL"  # signature, CRC, stored and real sizes
        zf.fp.write(struct.pack(fmt, 0x08074B50, crc, data.nbytes, data.nbytes))
    else:
        end = zf.fp.tell()
        zf.fp.seek(start)
        zf.fp.write(info.FileHeader(zip64))
        zf.fp.seek(end)
    zf.start_dir = zf.fp.tell()
    zf.filelist.append(info)
    zf.NameToInfo[name] = info


# ---- loading -----------------------------------------------------------------


def _fail(source, why) -> UnpicklingError:
    return UnpicklingError(f"flambeau.load: {source}: {why}")


def _resolve(name: str):
    module, _, qualname = name.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError, ValueError):
        return None
    return obj


def _is_index(v) -> bool:
    """A JSON number usable as a size, stride, offset or byte count (a bool is not one)."""
    return type(v) is int and 0 <= v < _INT64


def _dtype(name) -> F.dtype | None:
    dt = getattr(F, name, None) if isinstance(name, str) else None
    return dt if isinstance(dt, F.dtype) else None


def _list(v) -> list:
    if not isinstance(v, list):
        raise TypeError(f"expected a list, got {type(v).__name__}")
    return v


class _Archive:
    """The records of a ZIP file, each found to lie within the file before it is read.

    The sizes in the ZIP directory are only claims: a record's bytes must end
    before the next record (or the directory) begins, so no record claims more
    bytes than the file holds and no two records share bytes. What ``load``
    allocates for records is therefore bounded by the size of the file.
    """

    def __init__(self, zf: zipfile.ZipFile, source):
        self.zf, self.source = zf, source
        infos = zf.infolist()
        self.names = {i.filename for i in infos}
        if len(self.names) != len(infos):
            raise _fail(source, "two records of the archive have the same name")
        self.bounds = sorted({i.header_offset for i in infos} | {zf.start_dir})

    def locate(self, name: str) -> tuple[zipfile.ZipInfo, int]:
        """A record's directory entry and where its bytes start in the file."""
        if name not in self.names:
            raise _fail(self.source, f"record {name} is missing")
        info = self.zf.getinfo(name)
        # flambeau writes stored, unencrypted records; anything else is refused unread.
        if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
            raise _fail(self.source, f"record {name} is compressed or encrypted")
        start = _data_offset(self.zf, info)
        i = bisect.bisect_right(self.bounds, info.header_offset)
        end = self.bounds[i] if i < len(self.bounds) else -1
        if info.compress_size != info.file_size or start + info.file_size > end:
            why = f"record {name} claims {info.file_size} bytes, more than the file holds there"
            raise _fail(self.source, why)
        return info, start

    def read_into(self, info: zipfile.ZipInfo, start: int, dest: memoryview) -> None:
        """Reads a record into dest (its size), checking its CRC-32."""
        # Straight from the file into the tensor's memory over our threads, each
        # checking the CRC of its chunks while they are still in cache.
        fp = self.zf.fp
        fd = _fileno(fp)
        if fd is not None:
            got, crc = _C._read_crc32(fd, start, dest)
        else:  # a file object without a descriptor (BytesIO): chunk by chunk
            fp.seek(start)
            crc = got = 0
            while got < dest.nbytes:
                part = fp.read(min(_CHUNK, dest.nbytes - got))  # may be short
                if not part:
                    break
                dest[got : got + len(part)] = part
                crc = _C._crc32(part, crc)
                got += len(part)
        if got < dest.nbytes:
            raise _fail(self.source, f"record {info.filename} is truncated")
        if crc != info.CRC:
            raise _fail(self.source, f"record {info.filename} is corrupted (Bad CRC-32)")


class _Decoder:
    def __init__(self, archive: _Archive, manifest, mmap_path, weights_only, map_location):
        self.archive = archive
        self.source = archive.source
        self.manifest = manifest
        self.mmap_path = mmap_path
        self.weights_only = weights_only
        self.map_location = map_location
        self.storages: dict[int, F.Tensor] = {}
        self.tensors: dict[int, F.Tensor] = {}
        self.memo: dict[int, object] = {}  # objects by their records' "memo" numbers
        self.swap = manifest.get("byteorder", sys.byteorder) != sys.byteorder
        # For a foreign byte order: the element sizes of the tensors over each storage.
        self.element_sizes: dict[int, set[int]] = {}
        if self.swap:
            for r in manifest["tensors"]:
                dt = _dtype(r["dtype"])
                size = dt.itemsize // (2 if dt.is_complex else 1)
                self.element_sizes.setdefault(r["storage"], set()).add(size)

    def fail(self, why):
        return _fail(self.source, why)

    def decode(self, x):
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if isinstance(x, list):
            return [self.decode(v) for v in x]
        if not isinstance(x, dict) or not isinstance(x.get("$type"), str):
            raise self.fail(f"unexpected record {str(x)[:80]!r}")
        kind = x["$type"]
        try:
            if kind == "tensor":
                return self.tensor(x["id"])
            if kind == "ndarray":
                return self.tensor(x["id"]).detach().cpu().numpy()
            if kind in ("tuple", "set", "frozenset", "size"):
                items = [self.decode(v) for v in _list(x["items"])]
                if kind == "size" and not all(type(v) is int for v in items):
                    raise TypeError("sizes are integers")
                ctor = {"tuple": tuple, "set": set, "frozenset": frozenset, "size": F.Size}
                return ctor[kind](items)
            if kind in ("dict", "odict"):
                pairs = ((self.decode(k), self.decode(v)) for k, v in _list(x["items"]))
                return dict(pairs) if kind == "dict" else OrderedDict(pairs)
            if kind == "float":
                return float(x["repr"])
            if kind == "complex":
                real, imag = (self.decode(v) for v in _list(x["parts"]))
                if not all(isinstance(v, (int, float)) for v in (real, imag)):
                    raise TypeError("complex parts are numbers")
                return complex(real, imag)
            if kind in ("bytes", "bytearray"):
                raw = base64.b64decode(x["base64"], validate=True)
                return raw if kind == "bytes" else bytearray(raw)
            if kind == "dtype":
                dt = _dtype(x["name"])
                if dt is None:
                    raise self.fail(f"unknown dtype {x['name']!r}")
                return dt
            if kind == "device":
                return self.device(x["name"])
            if kind == "object":
                return self.object(x["class"], x["state"], x)
            if kind == "reduce":
                return self.reduced(x)
            if kind == "ref":
                if x["memo"] not in self.memo:
                    raise self.fail(f"a reference to object {x['memo']!r}, not loaded before it")
                return self.memo[x["memo"]]
            if kind == "sparse":
                return self.sparse(x)
            if kind == "global":
                return self.reference(x["name"])
        except (KeyError, TypeError, ValueError) as e:
            raise self.fail(f"malformed {kind!r} record: {e!r}") from e
        raise self.fail(f"unknown record type {kind!r}")

    def sparse(self, x) -> F.Tensor:
        layout = x["layout"]
        if layout not in _SPARSE_LAYOUTS:
            raise self.fail(f"unknown sparse layout {layout!r}")
        parts = [self.decode(v) for v in _list(x["parts"])]
        size = _list(x["size"])
        if not all(type(p) is F.Tensor for p in parts) or not all(_is_index(d) for d in size):
            raise TypeError("a sparse record holds tensors and a size")
        if len(parts) != (2 if layout == "sparse_coo" else 3):
            raise TypeError(f"a {layout} record holds {len(parts)} tensors")
        if layout == "sparse_coo":  # the constructors check the indices against the size
            t = F.sparse_coo_tensor(*parts, tuple(size))
            if x.get("coalesced") is True:
                t = t.coalesce()
        else:
            t = F.sparse_compressed_tensor(*parts, tuple(size), layout=getattr(F, layout))
        if x.get("requires_grad") is True:
            t.requires_grad_(True)
        return t

    def device(self, name) -> F.device:
        return _device(name, self.source)

    def reference(self, name):
        """A function or class saved by name: allowed ones, or any with weights_only=False."""
        if not isinstance(name, str):
            raise self.fail("malformed global record")
        module, _, qualname = name.partition(":")
        found = _safe_global(module, qualname) or _ALWAYS_SAFE.get(name)
        if found is None and not self.weights_only:
            found = _resolve(name)
        if found is None:
            raise self.fail(
                f"the archive refers to {name!r}, which is not allowed. If you trust this file, "
                "allow it with flambeau.serialization.add_safe_globals([...]) or the "
                "safe_globals context manager, or pass weights_only=False"
            )
        return found

    def object(self, name, state, record=None):
        if not isinstance(name, str):
            raise self.fail("malformed object record")
        cls = _safe_classes.get(name) or _ALWAYS_SAFE.get(name)
        if cls is None and not self.weights_only:
            cls = _resolve(name)
        if cls is None or not isinstance(cls, type):
            raise self.fail(
                f"the archive asks for class {name!r}, which is not allowed. If you trust "
                "this file, allow the class with flambeau.serialization.add_safe_globals([...]) "
                "or the safe_globals context manager, or pass weights_only=False"
            )
        record = record or {}
        if issubclass(cls, F.Tensor):
            state = self.decode(state)
            state = state if isinstance(state, dict) else {}
            data, grad = state.get("data"), state.get("requires_grad")
            if not isinstance(data, F.Tensor) or type(grad) is not bool:
                raise self.fail(f"cannot restore the state of {name}")
            # Parameter-like classes construct from (data, requires_grad); others re-class.
            own = cls.__mro__[: cls.__mro__.index(F.Tensor)]
            if any("__new__" in klass.__dict__ for klass in own):
                return self.remember(record, cls(data, grad))
            return self.remember(record, data.as_subclass(cls).requires_grad_(grad))
        args = [self.decode(a) for a in _list(record.get("args", []))]
        obj = self.remember(record, cls.__new__(cls, *args))
        self.restore(obj, self.decode(state), name)
        return self.fill(obj, record)

    def remember(self, record, obj):
        """Files obj under its record's memo number (before its state is read, which
        may refer back to it), for "ref" records."""
        n = record.get("memo")
        if n is not None:
            if type(n) is not int or n in self.memo:
                raise self.fail(f"malformed memo number {n!r}")
            self.memo[n] = obj
        return obj

    def reduced(self, x):
        """A "reduce" record: its callable (allowed as a global is) called with its
        arguments, then the state and contents put back."""
        func = self.reference(x["call"])
        if not callable(func):
            raise self.fail(f"{x['call']!r} is not callable")
        obj = self.remember(x, func(*[self.decode(a) for a in _list(x["args"])]))
        if "state" in x:
            self.restore(obj, self.decode(x["state"]), x["call"])
        return self.fill(obj, x)

    def restore(self, obj, state, name) -> None:
        """Puts back an object's state as pickle does: __setstate__, or its __dict__
        (object.__getstate__'s forms: None, __dict__, or (__dict__ or None, slots))."""
        if hasattr(obj, "__setstate__"):
            obj.__setstate__(state)
            return
        attrs, slots = state if isinstance(state, tuple) and len(state) == 2 else (state, None)
        try:
            if attrs:
                obj.__dict__.update(attrs)
            for k, v in (slots or {}).items():
                setattr(obj, k, v)
        except (AttributeError, TypeError, ValueError) as e:  # state of the wrong shape
            raise self.fail(f"cannot restore the state of {name} ({e})") from e

    def fill(self, obj, record):
        """A dict or list subclass's contents, put back as pickle does (obj[k] = v,
        obj.extend); a record that holds contents the object cannot take is malformed."""
        items, elements = record.get("items"), record.get("list")
        if items is not None:
            if not isinstance(obj, dict):
                raise TypeError("items for an object that is not a dict")
            for pair in _list(items):
                k, v = _list(pair)
                obj[self.decode(k)] = self.decode(v)
        if elements is not None:
            if not isinstance(obj, list):
                raise TypeError("elements for an object that is not a list")
            obj.extend(self.decode(v) for v in _list(elements))
        return obj

    def tensor(self, i) -> F.Tensor:
        table = self.manifest["tensors"]
        if type(i) is not int or not 0 <= i < len(table):
            raise self.fail(f"tensor id {i!r} is out of range")
        if i not in self.tensors:
            r = table[i]  # checked against its storage by _check_manifest
            dtype = _dtype(r["dtype"])
            storage = self.storage(r["storage"])
            whole = storage[: storage.numel() - storage.numel() % dtype.itemsize].view(dtype)
            t = whole.as_strided(tuple(r["shape"]), tuple(r["stride"]), r["offset"])
            t = self.place(t, r.get("device", "cpu"))
            if r.get("requires_grad", False):
                t.requires_grad_(True)
            self.tensors[i] = t
        return self.tensors[i]

    def place(self, t, location: str):
        where = self.map_location
        if callable(where):
            return where(t, location)
        if isinstance(where, dict):
            where = where.get(location, location)
        return _to_device(t, where if where is not None else location, location, self.source)

    def storage(self, j: int) -> F.Tensor:
        if j in self.storages:
            return self.storages[j]
        nbytes = self.manifest["storages"][j]["nbytes"]
        s = _read_storage(self.archive, f"{_DATA}{j}", nbytes, self.mmap_path, "manifest")
        if self.swap:
            self._byteswap(j, s.numpy())
        self.storages[j] = s
        return s

    def _byteswap(self, j, buf):
        sizes = self.element_sizes.get(j, set())
        if len(sizes) > 1:
            raise self.fail(f"storage {j} mixes element sizes {sorted(sizes)} across byte orders")
        if sizes and (n := min(sizes)) > 1:
            buf.view(f"u{n}").byteswap(inplace=True)


def _device(name, source) -> F.device:
    if isinstance(name, bytes):
        name = name.decode("ascii", "replace")
    try:
        return F.device(name)
    except RuntimeError as e:
        raise _fail(source, f"unknown device {name!r}") from e


def _to_device(t: F.Tensor, where, location, source) -> F.Tensor:
    """t on the device where (a name or device) names, for a tensor saved on location."""
    target = _device(where, source)
    try:
        return t if target == t.device else t.to(target)
    except RuntimeError as e:  # no backend for that device here
        raise _fail(
            source,
            f"cannot load a tensor saved on {location!r} onto {target} ({e}); "
            "pass map_location to load it elsewhere",
        ) from e


def _read_storage(archive: _Archive, name: str, nbytes: int, mmap_path, claim: str) -> F.Tensor:
    """The bytes of a storage record as a uint8 tensor, mapped from the file where possible.

    The record is found to lie within the file, and its size to be the nbytes that
    claim ("manifest", ...) declares, before anything is allocated.
    """
    info, start = archive.locate(name)
    if info.file_size != nbytes:
        raise _fail(
            archive.source, f"storage {name} holds {info.file_size} bytes, {claim} says {nbytes}"
        )
    # Kernels may assume aligned elements: unaligned records are read, not mapped.
    if mmap_path is not None and nbytes and start % _ALIGN == 0:
        import numpy as np

        return F.from_numpy(np.memmap(mmap_path, np.uint8, "c", start, (nbytes,)))
    # The core's allocator backs large blocks with huge pages: fewer page faults.
    s = F.empty(nbytes, dtype=F.uint8)
    archive.read_into(info, start, memoryview(s.numpy()))
    return s


def _byteswap_(raw: F.Tensor, size: int) -> None:
    """Reverses the bytes of each size-byte element of a uint8 tensor, in place."""
    if size > 1 and raw.numel() >= size:
        elements = raw[: raw.numel() - raw.numel() % size].view(-1, size)
        elements.copy_(elements.flip(-1))


def _fileno(fp) -> int | None:
    """The OS file descriptor behind a file object, or None (BytesIO and the like)."""
    try:
        return fp.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return None


def _read_exactly(fp, n: int) -> bytes:
    """n bytes from fp, fewer only where the file ends: file objects may return short reads."""
    parts, got = [], 0
    while got < n:
        part = fp.read(n - got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _data_offset(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    """Where a stored member's bytes start in the file (after its local header)."""
    if info.header_offset < 0:
        raise zipfile.BadZipFile(f"bad offset for {info.filename}")
    archive.fp.seek(info.header_offset)
    header = _read_exactly(archive.fp, 30)
    if len(header) != 30 or header[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename}")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    # As ZipFile.open checks: a directory entry must not point at another record.
    if _read_exactly(archive.fp, name_len) != info.filename.encode():
        raise zipfile.BadZipFile(f"the local header of {info.filename} names another record")
    return info.header_offset + 30 + name_len + extra_len


def load(f, map_location=None, *, weights_only: bool | None = True, mmap: bool | None = False):
    """Loads what :func:`save` wrote, what ``torch.save`` wrote, or a ``.safetensors`` file.

    ``map_location`` is a device (or its name), a dict from saved device names to
    new ones, or a callable ``(tensor, saved_device_name) -> tensor`` (for a
    PyTorch checkpoint it is given each storage, as a flat tensor, and may return
    None to keep the saved device). With ``mmap=True`` (``f`` must be a path)
    storages are mapped copy-on-write from the file instead of read.
    ``weights_only=True`` (the default, as ``None`` is) refuses any class or
    function not allowed through :func:`add_safe_globals`.

    A file that is not a valid archive, or whose records do not fit the file or
    one another, raises :class:`UnpicklingError` (a ``RuntimeError``).

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "model.pt")
    ...     flambeau.save({"w": flambeau.tensor([1.0, 2.0])}, path)
    ...     print(flambeau.load(path, map_location="cpu"))
    {'w': tensor([1., 2.])}
    """
    weights_only = True if weights_only is None else weights_only
    is_path = isinstance(f, (str, os.PathLike))
    source = os.fspath(f) if is_path else getattr(f, "name", "<file>")
    if mmap and not is_path:
        raise ValueError("flambeau.load: mmap=True needs a file path, not a file object")
    if is_path and os.fspath(f).endswith(".safetensors"):  # as torch.load does
        from flambeau import safetensors

        return safetensors._load_for_torch_load(f, map_location)
    try:
        if _starts_with_pickle(f):  # torch.save(..., _use_new_zipfile_serialization=False)
            from flambeau import _torch_format

            if mmap:
                raise _fail(source, "mmap=True needs a file in a ZIP format (this is legacy)")
            return _torch_format.load_legacy(f, source, map_location, weights_only)
        with zipfile.ZipFile(f, "r") as zf:
            archive = _Archive(zf, source)
            if _MANIFEST not in archive.names:
                from flambeau import _torch_format

                mmap_path = f if mmap else None
                return _torch_format.load_zip(archive, map_location, weights_only, mmap_path)
            manifest = _read_manifest(archive)
            dec = _Decoder(archive, manifest, f if mmap else None, weights_only, map_location)
            return dec.decode(manifest["root"])
    except (zipfile.BadZipFile, EOFError, struct.error, OSError, NotImplementedError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise _fail(source, f"not a flambeau archive, or it is truncated or corrupted ({e})") from e
    except RecursionError as e:
        raise _fail(source, "the archive nests containers too deeply") from e


def _starts_with_pickle(f) -> bool:
    """Whether f begins as PyTorch's legacy format does (not ZIP): with a pickle.

    Protocols 2 and later start with the PROTO opcode; 0 and 1 have none, and
    write the format's magic number as text.
    """
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fp:
            head = fp.read(len(_LEGACY_TEXT_MAGIC))
    else:
        start = f.tell()
        head = f.read(len(_LEGACY_TEXT_MAGIC))
        f.seek(start)
    return head[:1] == b"\x80" or head == _LEGACY_TEXT_MAGIC


def _unique_keys(pairs: list) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # json would keep the last: refuse the ambiguity
        raise ValueError("an object names one key twice")
    return obj


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _read_manifest(archive: _Archive) -> dict:
    source = archive.source
    if _MANIFEST not in archive.names:
        raise _fail(source, f"not a flambeau archive (no {_MANIFEST})")
    # Its bytes lie in the file (locate), so the manifest is no larger than the file.
    info, start = archive.locate(_MANIFEST)
    raw = bytearray(info.file_size)
    archive.read_into(info, start, memoryview(raw))
    try:
        manifest = json.loads(raw, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as e:
        raise _fail(source, f"manifest is not valid JSON ({e})") from e
    _check_manifest(manifest, source)
    return manifest


def _check_manifest(m, source) -> None:
    """Refuses a manifest of the wrong shape before anything is allocated from it."""
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise _fail(source, "not a flambeau archive (wrong format name)")
    version = m.get("version")
    if type(version) is not int or version < 1:
        raise _fail(source, f"not a flambeau archive (format version {version!r})")
    if version > VERSION:
        raise _fail(
            source,
            f"archive format version {version!r} is newer than this flambeau reads "
            f"({VERSION}); upgrade flambeau-tensor-core",
        )
    if m.get("byteorder", sys.byteorder) not in ("little", "big"):
        raise _fail(source, f"unknown byte order {m['byteorder']!r}")
    for key in ("storages", "tensors"):
        if not isinstance(m.get(key), list):
            raise _fail(source, f"manifest has no valid {key!r} table")
    if "root" not in m:
        raise _fail(source, "manifest has no 'root'")
    storages = m["storages"]
    for r in storages:
        if not isinstance(r, dict) or not _is_index(r.get("nbytes")):
            raise _fail(source, f"malformed storage record {str(r)[:80]!r}")
    for i, r in enumerate(m["tensors"]):
        if why := _tensor_problem(r, storages):
            raise _fail(source, f"tensor {i}: {why}")


def _tensor_problem(r, storages: list) -> str | None:
    """What is wrong with a tensor record, its geometry checked against its storage's size."""
    if not isinstance(r, dict) or not _TENSOR_KEYS <= r.keys():
        return f"malformed record {str(r)[:80]!r}"
    j, dtype = r["storage"], _dtype(r["dtype"])
    if type(j) is not int or not 0 <= j < len(storages):
        return f"storage id {j!r} is out of range"
    if dtype is None:
        return f"unknown dtype {r['dtype']!r}"
    grad = r.get("requires_grad", False)
    if type(grad) is not bool or grad and not (dtype.is_floating_point or dtype.is_complex):
        return f"requires_grad={grad!r} is not possible for {dtype}"
    if not isinstance(r.get("device", "cpu"), str):
        return f"device {r['device']!r} is not a device name"
    shape, stride, offset = r["shape"], r["stride"], r["offset"]
    if not (isinstance(shape, list) and isinstance(stride, list)):
        return f"invalid geometry {str(shape)[:80]} / {str(stride)[:80]} / {offset!r}"
    return _geometry_problem(shape, stride, offset, dtype.itemsize, storages[j]["nbytes"])


def _geometry_problem(shape, stride, offset, itemsize: int, nbytes: int) -> str | None:
    """What is wrong with a view (sizes, strides, offset in elements) of a storage of nbytes."""
    if not (
        len(shape) == len(stride) <= _MAX_NDIM and all(map(_is_index, [*shape, *stride, offset]))
    ):
        return f"invalid geometry {str(shape)[:80]} / {str(stride)[:80]} / {offset!r}"
    # Python's integers do not overflow: the core's int64 limits are checked here.
    last = offset + sum((n - 1) * s for n, s in zip(shape, stride) if n)  # its last element
    if 0 not in shape and (last + 1) * itemsize > nbytes:
        return (
            f"shape {list(shape)} and stride {list(stride)} at offset {offset} reach byte "
            f"{(last + 1) * itemsize}, beyond its storage of {nbytes} bytes"
        )
    numel = 1
    for n in shape:
        numel = min(numel * n, _INT64)  # saturated: 1024 sizes would make a huge number
    if last >= _INT64 or numel * itemsize >= _INT64:
        return f"shape {list(shape)} and stride {list(stride)} at offset {offset} overflow int64"
    return None
