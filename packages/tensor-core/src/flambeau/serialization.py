"""``flambeau.save`` and ``flambeau.load``: a pickle-free archive format.

An archive is a ZIP file (entries stored, not compressed) holding

* ``archive/manifest.json``: format name and version, the byte order, a
  table of storages, a table of tensors (storage, dtype, shape, stride,
  offset) and the saved object encoded as JSON with tagged containers;
* ``archive/data/<n>``: the raw bytes of each storage, 64-byte aligned in the
  file so that ``mmap=True`` can map them in place.

Each storage is written once, so tensors that were views of one another are
views of one storage again after loading. Loading never imports or runs code
named by the archive: anything beyond tensors, dtypes, devices and plain
Python containers and values is refused unless its class was allowed with
:func:`add_safe_globals` / :func:`safe_globals`, or ``weights_only=False``.
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import io
import json
import os
import struct
import sys
import zipfile
from collections import OrderedDict

import flambeau as F
from flambeau import _C

FORMAT = "flambeau-archive"
VERSION = 1
_MANIFEST = "archive/manifest.json"
_DATA = "archive/data/"
_ALIGN = 64
_PAD_ID = 0xF1B0  # ZIP extra-field id of the alignment padding
_MAX_MANIFEST = 1 << 30
_CHUNK = 1 << 20
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: the class was defined in Python

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals"]
__all__ += ["safe_globals", "UnpicklingError"]


class UnpicklingError(RuntimeError):
    """An archive that is corrupted, truncated, or asks for something not allowed."""


_safe_classes: dict[str, type] = {}


def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def add_safe_globals(classes) -> None:
    """Allows ``load`` (with ``weights_only=True``) to rebuild objects of these classes."""
    for cls in classes:
        _safe_classes[_class_name(cls)] = cls


def get_safe_globals() -> list[type]:
    return list(_safe_classes.values())


def clear_safe_globals() -> None:
    _safe_classes.clear()


@contextlib.contextmanager
def safe_globals(classes):
    """Allows these classes for the duration of the ``with`` block."""
    saved = dict(_safe_classes)
    add_safe_globals(classes)
    try:
        yield
    finally:
        _safe_classes.clear()
        _safe_classes.update(saved)


# ---- saving ------------------------------------------------------------------


class _Encoder:
    def __init__(self):
        self.storages: list[F.Tensor] = []  # flat uint8 CPU views, one per storage
        self.storage_index: dict[tuple[int, int], int] = {}
        self.tensors: list[dict] = []
        self.tensor_index: dict[int, int] = {}
        self.keep_alive: list = []  # ids stay unique while encoding
        self.active: set[int] = set()

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return obj if type(obj) is int else int(obj)
        if isinstance(obj, float):
            if obj == obj and obj not in (float("inf"), float("-inf")):
                return obj
            return {"$type": "float", "repr": repr(obj)}
        if isinstance(obj, F.Tensor):
            if type(obj) is F.Tensor:
                return {"$type": "tensor", "id": self._tensor(obj)}
            return self._object(obj, {"data": obj.detach(), "requires_grad": obj.requires_grad})
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
        return self._object(obj, obj.__getstate__())

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
        return {"$type": "object", "class": _class_name(cls), "state": self.encode(state)}

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


def save(obj, f) -> None:
    """Saves ``obj`` (tensors in nested dicts, lists and tuples, plain values) to ``f``.

    ``f`` is a path or a binary file object. Storage bytes are written straight
    from the tensors' memory, never copied whole.
    """
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

    The CRC is computed first (the core's fast CRC-32, over our threads), so the
    local header is complete and the bytes go from the tensor's memory to the
    file in one write. This is what ZipFile.open(info, "w") does, minus its
    zlib.crc32 (several times slower) and its data descriptor for unseekable files.
    """
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = info.compress_size = data.nbytes
    info.CRC = _C._crc32(data)
    zip64 = data.nbytes > zipfile.ZIP64_LIMIT
    start = zf.fp.tell()
    header = 30 + len(name.encode()) + (20 if zip64 else 0) + 4
    pad = -(start + header) % _ALIGN
    info.extra = struct.pack("<HH", _PAD_ID, pad) + b"\0" * pad
    zf._writecheck(info)  # duplicate names, ZIP64 allowed, archive open for writing
    info.header_offset = start
    zf._didModify = True
    zf.fp.write(info.FileHeader(zip64))
    zf.fp.write(data)
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


class _Decoder:
    def __init__(self, source, archive, manifest, mmap_path, weights_only, map_location):
        self.source = source
        self.archive = archive
        self.manifest = manifest
        self.mmap_path = mmap_path
        self.weights_only = weights_only
        self.map_location = map_location
        self.storages: dict[int, F.Tensor] = {}
        self.tensors: dict[int, F.Tensor] = {}
        self.swap = manifest.get("byteorder", sys.byteorder) != sys.byteorder

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
                return self.tensor(x["id"]).numpy()
            if kind in ("tuple", "set", "frozenset", "size"):
                items = [self.decode(v) for v in x["items"]]
                ctor = {"tuple": tuple, "set": set, "frozenset": frozenset, "size": F.Size}
                return ctor[kind](items)
            if kind in ("dict", "odict"):
                pairs = ((self.decode(k), self.decode(v)) for k, v in x["items"])
                return dict(pairs) if kind == "dict" else OrderedDict(pairs)
            if kind == "float":
                return float(x["repr"])
            if kind == "complex":
                real, imag = (self.decode(v) for v in x["parts"])
                return complex(real, imag)
            if kind in ("bytes", "bytearray"):
                raw = base64.b64decode(x["base64"], validate=True)
                return raw if kind == "bytes" else bytearray(raw)
            if kind == "dtype":
                dt = getattr(F, x["name"], None)
                if not isinstance(dt, F.dtype):
                    raise self.fail(f"unknown dtype {x['name']!r}")
                return dt
            if kind == "device":
                return F.device(x["name"])
            if kind == "object":
                return self.object(x["class"], x["state"])
        except (KeyError, TypeError, ValueError) as e:
            raise self.fail(f"malformed {kind!r} record: {e!r}") from e
        raise self.fail(f"unknown record type {kind!r}")

    def object(self, name, state):
        if not isinstance(name, str):
            raise self.fail("malformed object record")
        cls = _safe_classes.get(name)
        if cls is None and not self.weights_only:
            cls = _resolve(name)
        if cls is None or not isinstance(cls, type):
            raise self.fail(
                f"the archive asks for class {name!r}, which is not allowed. If you trust "
                "this file, allow the class with flambeau.serialization.add_safe_globals([...]) "
                "or the safe_globals context manager, or pass weights_only=False"
            )
        state = self.decode(state)
        if issubclass(cls, F.Tensor):
            return cls(state["data"], state["requires_grad"])
        obj = cls.__new__(cls)
        if hasattr(obj, "__setstate__"):
            obj.__setstate__(state)
            return obj
        # object.__getstate__'s forms: None, __dict__, or (__dict__ or None, slots).
        attrs, slots = state if isinstance(state, tuple) and len(state) == 2 else (state, None)
        for part in (attrs, slots):
            if part is not None and not isinstance(part, dict):
                raise self.fail(f"cannot restore the state of {name}")
        if attrs:
            obj.__dict__.update(attrs)
        for k, v in (slots or {}).items():
            setattr(obj, k, v)
        return obj

    def tensor(self, i):
        if i in self.tensors:
            return self.tensors[i]
        table = self.manifest["tensors"]
        if not isinstance(i, int) or not 0 <= i < len(table):
            raise self.fail(f"tensor id {i!r} is out of range")
        r = table[i]
        dtype = getattr(F, r["dtype"], None) if isinstance(r["dtype"], str) else None
        if not isinstance(dtype, F.dtype):
            raise self.fail(f"tensor {i} has unknown dtype {r['dtype']!r}")
        shape, stride, offset = r["shape"], r["stride"], r["offset"]
        ints = [*shape, *stride, offset]
        if len(shape) != len(stride) or not all(type(v) is int and v >= 0 for v in ints):
            raise self.fail(f"tensor {i} has invalid geometry {shape} / {stride} / {offset}")
        storage = self.storage(r["storage"])
        size = dtype.itemsize
        if any(s == 0 for s in shape):
            extent = 0
        else:
            extent = (offset + sum((n - 1) * s for n, s in zip(shape, stride)) + 1) * size
        if extent > storage.numel():
            raise self.fail(
                f"tensor {i} of shape {shape} and stride {stride} at offset {offset} reaches "
                f"byte {extent}, beyond its storage of {storage.numel()} bytes"
            )
        whole = storage[: storage.numel() - storage.numel() % size].view(dtype)
        t = whole.as_strided(tuple(shape), tuple(stride), offset)
        t = self.place(t, r.get("device", "cpu"))
        if r.get("requires_grad"):
            t.requires_grad_(True)
        self.tensors[i] = t
        return t

    def place(self, t, location):
        where = self.map_location
        if callable(where):
            return where(t, location)
        if isinstance(where, dict):
            where = where.get(location, location)
        target = F.device(where if where is not None else location)
        return t if target == t.device else t.to(target)

    def storage(self, j) -> F.Tensor:
        if j in self.storages:
            return self.storages[j]
        table = self.manifest["storages"]
        if not isinstance(j, int) or not 0 <= j < len(table):
            raise self.fail(f"storage id {j!r} is out of range")
        nbytes = table[j]["nbytes"]
        name = f"{_DATA}{j}"
        try:
            info = self.archive.getinfo(name)
        except KeyError:
            raise self.fail(f"storage record {name} is missing") from None
        _check_member(info, self.source)
        if type(nbytes) is not int or info.file_size != nbytes:
            raise self.fail(f"storage {name} holds {info.file_size} bytes, manifest says {nbytes}")
        start = _data_offset(self.archive, info)
        # Kernels may assume aligned elements: unaligned records are read, not mapped.
        if self.mmap_path is not None and nbytes and start % _ALIGN == 0:
            import numpy as np

            s = F.from_numpy(np.memmap(self.mmap_path, np.uint8, "c", start, (nbytes,)))
        else:
            # The core's allocator backs large blocks with huge pages: fewer page faults.
            s = F.empty(nbytes, dtype=F.uint8)
            self._read_into(info, start, memoryview(s.numpy()))
        if self.swap:
            self._byteswap(j, s.numpy())
        self.storages[j] = s
        return s

    def _read_into(self, info, start: int, dest: memoryview) -> None:
        # Straight from the file into the tensor's memory over our threads, each
        # checking the CRC of its chunks while they are still in cache.
        fd = _fileno(self.archive.fp)
        if fd is not None:
            got, crc = _C._read_crc32(fd, start, dest)
        else:  # a file object without a descriptor (BytesIO): chunk by chunk
            fp = self.archive.fp
            fp.seek(start)
            crc = got = 0
            while got < dest.nbytes:
                n = fp.readinto(dest[got : got + _CHUNK])
                if not n:
                    break
                crc = _C._crc32(dest[got : got + n], crc)
                got += n
        if got < dest.nbytes:
            raise self.fail(f"storage {info.filename} is truncated")
        if crc != info.CRC:
            raise self.fail(f"storage {info.filename} is corrupted (Bad CRC-32)")

    def _byteswap(self, j, buf):
        sizes = {
            getattr(F, r["dtype"]).itemsize // (2 if getattr(F, r["dtype"]).is_complex else 1)
            for r in self.manifest["tensors"]
            if r.get("storage") == j
        }
        if len(sizes) > 1:
            raise self.fail(f"storage {j} mixes element sizes {sorted(sizes)} across byte orders")
        if sizes and (n := sizes.pop()) > 1:
            buf.view(f"u{n}").byteswap(inplace=True)


def _fileno(fp) -> int | None:
    """The OS file descriptor behind a file object, or None (BytesIO and the like)."""
    try:
        return fp.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return None


def _data_offset(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    """Where a stored member's bytes start in the file (after its local header)."""
    archive.fp.seek(info.header_offset)
    header = archive.fp.read(30)
    if len(header) != 30 or header[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename}")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_len + extra_len


def load(f, map_location=None, *, weights_only: bool = True, mmap: bool = False):
    """Loads what :func:`save` wrote.

    ``map_location`` is a device (or its name), a dict from saved device names to
    new ones, or a callable ``(tensor, saved_device_name) -> tensor``. With
    ``mmap=True`` (``f`` must be a path) storages are mapped copy-on-write from
    the file instead of read. ``weights_only=True`` (the default) refuses any
    class not allowed through :func:`add_safe_globals`.
    """
    source = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file>")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("flambeau.load: mmap=True needs a file path, not a file object")
    try:
        with zipfile.ZipFile(f, "r") as archive:
            manifest = _read_manifest(archive, source)
            dec = _Decoder(
                source, archive, manifest, f if mmap else None, weights_only, map_location
            )
            return dec.decode(manifest["root"])
    except (zipfile.BadZipFile, EOFError, struct.error, OSError, NotImplementedError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise _fail(source, f"not a flambeau archive, or it is truncated or corrupted ({e})") from e
    except RecursionError as e:
        raise _fail(source, "the archive nests containers too deeply") from e


def _check_member(info: zipfile.ZipInfo, source) -> None:
    """flambeau writes stored, unencrypted records; anything else is refused unread."""
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
        raise _fail(source, f"record {info.filename} is compressed or encrypted")


def _read_manifest(archive: zipfile.ZipFile, source) -> dict:
    try:
        info = archive.getinfo(_MANIFEST)
    except KeyError:
        raise _fail(source, f"not a flambeau archive (no {_MANIFEST})") from None
    _check_member(info, source)
    if info.file_size > _MAX_MANIFEST:
        raise _fail(source, f"manifest of {info.file_size} bytes is too large")
    try:
        manifest = json.loads(archive.read(info))
    except (ValueError, UnicodeDecodeError) as e:
        raise _fail(source, f"manifest is not valid JSON ({e})") from e
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _fail(source, "not a flambeau archive (wrong format name)")
    version = manifest.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise _fail(
            source,
            f"archive format version {version!r} is newer than this flambeau reads "
            f"({VERSION}); upgrade flambeau-tensor-core",
        )
    for key, kind in (("storages", list), ("tensors", list)):
        if not isinstance(manifest.get(key), kind):
            raise _fail(source, f"manifest has no valid {key!r} table")
    for r in manifest["tensors"]:
        if not isinstance(r, dict) or not {"storage", "dtype", "shape", "stride", "offset"} <= set(
            r
        ):
            raise _fail(source, f"malformed tensor record {str(r)[:80]!r}")
    for r in manifest["storages"]:
        if not isinstance(r, dict) or "nbytes" not in r:
            raise _fail(source, f"malformed storage record {str(r)[:80]!r}")
    return manifest
