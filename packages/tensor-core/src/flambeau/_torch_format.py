"""Loading checkpoints written by PyTorch's ``torch.save``, without PyTorch.

Two formats:

* the ZIP format (the default since PyTorch 1.6): records under one folder,
  ``<name>/data.pkl`` (the pickled object, tensors naming their storages by
  persistent id), ``<name>/data/<key>`` (each storage's raw bytes, stored and
  64-byte aligned), ``<name>/byteorder`` and ``<name>/version``;
* the legacy format (``_use_new_zipfile_serialization=False``): a magic
  number, a protocol version and the system's sizes, each pickled, then the
  object's pickle, the list of storage keys, and each storage's element count
  and bytes in that order.

The pickles are read by :class:`~flambeau._torch_unpickler.TorchUnpickler`,
which rebuilds and runs nothing else. Each storage is loaded once, so tensors
that were views of one storage are views of one storage again. As for
flambeau's own archives, no number is trusted: a storage is allocated only
once its bytes are known to be in the file, and every tensor must lie within
its storage; anything else raises :class:`flambeau.serialization.UnpicklingError`.
"""

from __future__ import annotations

import io
import os
import struct
import sys

import flambeau as F
from flambeau import serialization as _S
from flambeau._torch_unpickler import (
    Storage,
    StorageType,
    TorchUnpickler,
    resolve_bits,
    swap_size,
)

_MAGIC = 0x1950A86A20F9469CFC6C  # the legacy format's first pickle
_LEGACY_PROTOCOL = 1001


class _CallerError(Exception):
    """An exception of the caller's map_location callable, carried out of the unpickler."""


def load_zip(archive: _S._Archive, map_location, weights_only: bool, mmap_path):
    source = archive.source
    prefix = _prefix(archive)
    names = archive.names
    if f"{prefix}/constants.pkl" in names:
        raise _S._fail(source, "a TorchScript archive (torch.jit.save), which flambeau cannot load")
    byteorder = _small_record(archive, f"{prefix}/byteorder") or b"little"
    if byteorder not in (b"little", b"big"):
        raise _S._fail(source, f"unknown byte order {byteorder[:16]!r}")
    swap = byteorder.decode() != sys.byteorder
    restore = _restorer(map_location, source)
    storages: dict[str, Storage] = {}

    def storage_for(pid) -> Storage:
        stype, key, location, numel = _storage_id(pid, 5, source)[:4]
        if key in storages:
            return _same(storages[key], stype, numel, source)
        nbytes = numel * stype.dtype.itemsize
        raw = _S._read_storage(archive, f"{prefix}/data/{key}", nbytes, mmap_path, "its pickle")
        if swap and not stype.untyped:
            _S._byteswap_(raw, swap_size(stype.dtype))
        flat = restore(raw.view(stype.dtype), location)
        storages[key] = Storage(key, stype.dtype, flat, stype.untyped, swap and stype.untyped)
        return storages[key]

    info, start = archive.locate(f"{prefix}/data.pkl")
    data = bytearray(info.file_size)  # within the file, as locate found
    archive.read_into(info, start, memoryview(data))
    return _storage_as_tensor(_unpickle(io.BytesIO(data), storage_for, weights_only, source))


def load_legacy(f, source: str, map_location, weights_only: bool):
    """Reads the legacy format from a path or a seekable file object."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fp:
            return _Legacy(fp, source, map_location, weights_only).load()
    return _Legacy(f, source, map_location, weights_only).load()


class _Root:
    """A storage of a legacy file: allocated while the pickle is read, filled after it."""

    __slots__ = ("storage", "cpu", "filled")

    def __init__(self, storage: Storage, cpu: F.Tensor):
        self.storage, self.cpu, self.filled = storage, cpu, False


class _Legacy:
    def __init__(self, fp, source, map_location, weights_only):
        self.fp, self.source, self.weights_only = fp, source, weights_only
        self.restore = _restorer(map_location, source)
        start = fp.tell()
        self.budget = fp.seek(0, io.SEEK_END) - start  # storages cannot hold more than the file
        fp.seek(start)
        self.roots: dict[str, _Root] = {}
        self.deferred: list = []  # conjugated or negated views, computed once filled

    def small(self):
        """One of the format's own pickles (numbers, a dict, a list of keys)."""
        return _unpickle(self.fp, self.no_storage, True, self.source)

    def no_storage(self, pid):
        raise _S._fail(self.source, "a persistent id outside the object's pickle")

    def load(self):
        if self.small() != _MAGIC:
            raise _S._fail(self.source, "not a flambeau archive nor a PyTorch checkpoint")
        if (version := self.small()) != _LEGACY_PROTOCOL:
            raise _S._fail(self.source, f"legacy PyTorch format version {version!r} is unknown")
        info = self.small()
        if not isinstance(info, dict) or type(info.get("little_endian")) is not bool:
            raise _S._fail(self.source, "malformed system information")
        order = "<" if info["little_endian"] else ">"
        result = _unpickle(self.fp, self.storage_for, self.weights_only, self.source, self.deferred)
        keys = self.small()
        if not isinstance(keys, list):
            raise _S._fail(self.source, "malformed list of storage keys")
        for key in keys:
            self.fill(str(key), order)
        if unfilled := [k for k, root in self.roots.items() if not root.filled]:
            raise _S._fail(self.source, f"no data for storages {unfilled[:8]}")
        with F.no_grad():
            for copy, view, conj, neg in self.deferred:
                copy.copy_(resolve_bits(view, conj, neg))
        return _storage_as_tensor(result)

    def storage_for(self, pid) -> Storage:
        stype, key, location, numel, view = _storage_id(pid, 6, self.source)
        if key not in self.roots:
            self.budget -= numel * stype.dtype.itemsize
            if self.budget < 0:
                raise _S._fail(
                    self.source, f"storage {key!r} claims more bytes than the file holds"
                )
            cpu = F.empty(numel * stype.dtype.itemsize, dtype=F.uint8).view(stype.dtype)
            storage = Storage(key, stype.dtype, self.restore(cpu, location), stype.untyped)
            self.roots[key] = _Root(storage, cpu)
        root = _same(self.roots[key].storage, stype, numel, self.source)
        if view is None:
            return root
        # A view of part of a storage (PyTorch before 0.4): (key, offset, size) in elements.
        if not (
            isinstance(view, tuple)
            and len(view) == 3
            and all(_S._is_index(v) for v in view[1:])
            and view[1] + view[2] <= numel
        ):
            raise _S._fail(self.source, f"malformed storage view {str(view)[:80]}")
        return Storage(str(view[0]), stype.dtype, root.flat[view[1] : view[1] + view[2]])

    def fill(self, key: str, order: str):
        """Reads a storage's element count and bytes, which follow the pickles in key order."""
        root = self.roots.get(key)
        if root is None or root.filled:
            raise _S._fail(self.source, f"data for an unknown or repeated storage {key!r}")
        head = _S._read_exactly(self.fp, 8)
        if len(head) < 8 or struct.unpack(order + "q", head)[0] != root.cpu.numel():
            raise _S._fail(self.source, f"storage {key!r} is truncated or of the wrong size")
        raw = root.cpu.view(F.uint8)
        dest, got = memoryview(raw.numpy()), 0
        while got < dest.nbytes:
            part = self.fp.read(min(_S._CHUNK, dest.nbytes - got))
            if not part:
                raise _S._fail(self.source, f"storage {key!r} is truncated")
            dest[got : got + len(part)] = part
            got += len(part)
        if order != ("<" if sys.byteorder == "little" else ">"):
            if root.storage.untyped:  # its element size is known only to the tensors built
                raise _S._fail(self.source, f"untyped storage {key!r} in the other byte order")
            _S._byteswap_(raw, swap_size(root.storage.dtype))
        if root.storage.flat is not root.cpu:  # map_location moved it: the bytes follow
            root.storage.flat.copy_(root.cpu)
        root.filled = True


def _storage_as_tensor(obj):
    """A file of one storage (torch.save(t.untyped_storage())) loads as its flat tensor."""
    return obj.flat if isinstance(obj, Storage) else obj


def _unpickle(file, storage_for, weights_only: bool, source: str, deferred=None):
    try:
        unpickler = TorchUnpickler(
            file, storage_for, weights_only=weights_only, source=source, deferred=deferred
        )
        return unpickler.load()
    except _S.UnpicklingError:
        raise
    except _CallerError as e:
        raise e.__cause__ from None
    except RecursionError as e:
        raise _S._fail(source, "the pickle nests objects too deeply") from e
    except Exception as e:  # anything else a malformed pickle makes the unpickler raise
        raise _S._fail(source, f"malformed pickle ({type(e).__name__}: {e})") from e


def _prefix(archive: _S._Archive) -> str:
    """The folder that holds the records, named by the first record, as PyTorch's reader has it."""
    first = archive.zf.infolist()[0].filename if archive.names else ""
    prefix = first.partition("/")[0]
    if "/" not in first or f"{prefix}/data.pkl" not in archive.names:
        raise _S._fail(
            archive.source,
            f"not a flambeau archive (no {_S._MANIFEST}) nor a PyTorch checkpoint (no data.pkl)",
        )
    return prefix


def _small_record(archive: _S._Archive, name: str) -> bytes | None:
    if name not in archive.names:
        return None
    info, start = archive.locate(name)
    if info.file_size > 64:
        raise _S._fail(archive.source, f"record {name} is too large")
    data = bytearray(info.file_size)
    archive.read_into(info, start, memoryview(data))
    return bytes(data).strip()


def _storage_id(pid, length: int, source: str):
    """(storage type, key, location, element count[, view]) of a persistent id."""
    if not isinstance(pid, tuple) or not pid:
        raise _S._fail(source, f"malformed persistent id {str(pid)[:80]}")
    kind = pid[0].decode("ascii", "replace") if isinstance(pid[0], bytes) else pid[0]
    if kind == "module":
        raise _S._fail(
            source,
            "the checkpoint holds a whole PyTorch module (torch.save(model)), which needs "
            "PyTorch; save its state_dict() instead",
        )
    if kind != "storage" or len(pid) != length:
        raise _S._fail(source, f"malformed persistent id {str(pid)[:80]}")
    stype, key, location, numel = pid[1:5]
    if isinstance(location, bytes):
        location = location.decode("ascii", "replace")
    if not (
        isinstance(stype, StorageType)
        and isinstance(key, (str, int))
        and isinstance(location, str)
        and _S._is_index(numel)
        and _S._is_index(numel * stype.dtype.itemsize)
    ):
        raise _S._fail(source, f"malformed persistent id {str(pid)[:80]}")
    return (stype, str(key), location, numel, *pid[5:])


def _same(storage: Storage, stype: StorageType, numel: int, source: str) -> Storage:
    """A storage named again must be named with the same type and size."""
    if storage.dtype != stype.dtype or storage.flat.numel() != numel:
        raise _S._fail(source, f"storage {storage.key!r} is named with two types or sizes")
    return storage


def _restorer(map_location, source):
    """Places each storage (a flat tensor) where map_location says, as torch.load does."""
    if map_location is not None and not isinstance(map_location, (str, bytes, dict, F.device)):
        if not callable(map_location):
            raise TypeError(
                "flambeau.load: map_location should be a device, a string, a dict or a callable, "
                f"not {type(map_location).__name__}"
            )

    def restore(flat: F.Tensor, location: str) -> F.Tensor:
        where = map_location
        if isinstance(where, dict):
            where = where.get(location, location)
        elif callable(where):
            try:
                moved = where(flat, location)
            except Exception as e:
                raise _CallerError() from e
            if moved is None:
                where = None
            elif (
                isinstance(moved, F.Tensor)
                and moved.dtype == flat.dtype
                and tuple(moved.shape) == tuple(flat.shape)
            ):
                return moved.contiguous()
            else:
                raise _S._fail(source, "map_location returned something other than the storage")
        return _S._to_device(flat, location if where is None else where, location, source)

    return restore
