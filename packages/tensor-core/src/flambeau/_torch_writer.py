"""Writing PyTorch's ZIP checkpoint format, for ``torch.load`` to read what flambeau saved.

``flambeau.save(obj, f, _use_torch_format=True)``. The pickle is written here
opcode by opcode (protocol 2, as ``torch.save`` writes it), because it must
name PyTorch's functions (``torch._utils._rebuild_tensor_v2``,
``torch.FloatStorage``, ...) that pickle itself could only name by importing
PyTorch. Only what ``torch.load(weights_only=True)`` accepts is written:
tensors and parameters (each storage once, so views stay views), sizes,
dtypes, devices, plain values, and lists, tuples, dicts, OrderedDicts and sets
of them (not frozensets, which ``torch.load`` refuses).
"""

from __future__ import annotations

import struct
import sys
import zipfile
from collections import Counter, OrderedDict

import flambeau as F
from flambeau import serialization as _S

_STORAGE_NAMES = {
    "float32": "FloatStorage",
    "float64": "DoubleStorage",
    "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage",
    "uint8": "ByteStorage",
    "int8": "CharStorage",
    "int16": "ShortStorage",
    "int32": "IntStorage",
    "int64": "LongStorage",
    "bool": "BoolStorage",
    "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}
_PREFIX = "archive/"


def save(obj, f) -> None:
    writer = _PickleWriter()
    writer.dump(obj)
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        _record(zf, "data.pkl", bytes(writer.out))
        _record(zf, ".format_version", b"1")
        _record(zf, ".storage_alignment", b"64")
        _record(zf, "byteorder", sys.byteorder.encode())
        for key, flat in enumerate(writer.storages):
            _S._write_aligned(zf, f"{_PREFIX}data/{key}", memoryview(flat.numpy()))
        _record(zf, "version", b"3\n")


def _record(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(_PREFIX + name, date_time=(1980, 1, 1, 0, 0, 0))
    zf.writestr(info, data, zipfile.ZIP_STORED)


class _PickleWriter:
    def __init__(self):
        self.out = bytearray(b"\x80\x02")  # PROTO 2
        self.memo: dict[int, int] = {}  # id of an object written -> its memo slot
        self.keep_alive: list = []  # ids stay unique while writing
        self.storages: list[F.Tensor] = []  # each storage's bytes, flat uint8 on the CPU
        self.storage_index: dict[tuple[int, int], tuple[int, F.dtype]] = {}

    def dump(self, obj) -> None:
        self.save(obj)
        self.out += b"."  # STOP

    # ---- opcodes ------------------------------------------------------------------------

    def put(self, obj) -> None:
        slot = len(self.memo)
        self.memo[id(obj)] = slot
        self.keep_alive.append(obj)
        self.out += b"q" + bytes([slot]) if slot < 256 else b"r" + struct.pack("<I", slot)

    def get(self, obj) -> bool:
        slot = self.memo.get(id(obj))
        if slot is None:
            return False
        self.out += b"h" + bytes([slot]) if slot < 256 else b"j" + struct.pack("<I", slot)
        return True

    def glob(self, module: str, name: str) -> None:
        self.out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"  # GLOBAL

    def call(self, module: str, name: str, *args) -> None:
        """module.name(*args), as REDUCE."""
        self.glob(module, name)
        self.write_tuple(args)
        self.out += b"R"

    def write_int(self, v: int) -> None:
        if 0 <= v < 256:
            self.out += b"K" + bytes([v])
        elif 0 <= v < 65536:
            self.out += b"M" + struct.pack("<H", v)
        elif -(2**31) <= v < 2**31:
            self.out += b"J" + struct.pack("<i", v)
        else:  # LONG1: little-endian two's complement
            raw = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
            self.out += b"\x8a" + bytes([len(raw)]) + raw

    def write_str(self, v: str) -> None:
        raw = v.encode("utf-8", "surrogatepass")
        self.out += b"X" + struct.pack("<I", len(raw)) + raw  # BINUNICODE

    def write_tuple(self, items) -> None:
        if not items:
            self.out += b")"
            return
        if len(items) > 3:
            self.out += b"("  # MARK
        for x in items:
            self.save(x)
        self.out += b"t" if len(items) > 3 else b"\x85\x86\x87"[len(items) - 1 : len(items)]

    def items(self, op: bytes, items) -> None:
        """APPENDS or SETITEMS in batches, each item a value or a (key, value) pair."""
        items = list(items)
        for start in range(0, len(items), 1000):
            self.out += b"("
            for item in items[start : start + 1000]:
                for x in item if op == b"u" else (item,):
                    self.save(x)
            self.out += op

    # ---- objects --------------------------------------------------------------------------

    def save(self, obj) -> None:
        if obj is None:
            self.out += b"N"
        elif obj is True or obj is False:
            self.out += b"\x88" if obj else b"\x89"
        elif type(obj) is int:
            self.write_int(obj)
        elif type(obj) is float:
            self.out += b"G" + struct.pack(">d", obj)
        elif type(obj) is str:
            self.write_str(obj)
        elif isinstance(obj, F.dtype):
            self.glob("torch", str(obj).removeprefix("flambeau."))
        elif not self.get(obj):
            self.save_new(obj)

    def save_new(self, obj) -> None:
        """An object that may be shared: written once, then named by its memo slot."""
        t = type(obj)
        if isinstance(obj, F.Tensor):
            self.tensor(obj)
        elif t is list:
            self.out += b"]"
            self.put(obj)
            self.items(b"e", obj)
        elif t is dict or t is OrderedDict:
            if t is dict:
                self.out += b"}"
            else:
                self.call("collections", "OrderedDict")
            self.put(obj)
            self.items(b"u", obj.items())
            if t is OrderedDict and vars(obj):  # a state dict's _metadata
                self.save(dict(vars(obj)))
                self.out += b"b"  # BUILD
            return
        elif t is tuple:
            self.write_tuple(obj)
        elif t is F.Size:
            self.call("torch", "Size", tuple(obj))
        elif t is F.device:
            self.call("torch", "device", str(obj))
        elif t is Counter:  # as pickle reduces it (an LR scheduler's milestones)
            self.call("collections", "Counter", dict(obj))
        elif t is set:  # (torch.load refuses frozensets)
            self.call("builtins", "set", list(obj))
        elif t is complex:
            self.call("builtins", "complex", obj.real, obj.imag)
        elif t is bytes:  # as protocol 2 writes bytes: their latin-1 text, encoded
            self.call("_codecs", "encode", obj.decode("latin-1"), "latin1")
        elif t is bytearray:
            self.call("builtins", "bytearray", bytes(obj))
        else:
            raise TypeError(
                f"flambeau.save(_use_torch_format=True): cannot save an object of type "
                f"{t.__qualname__}: PyTorch's format holds tensors, sizes, dtypes, devices, "
                "plain values and containers of them"
            )
        self.put(obj)

    def tensor(self, t: F.Tensor) -> None:
        cls = type(t)
        parameter = cls is not F.Tensor and cls is _nn_class("Parameter")
        if cls is not F.Tensor and not parameter and cls is not _nn_class("Buffer"):
            raise TypeError(
                f"flambeau.save(_use_torch_format=True): cannot save a tensor of type "
                f"{cls.__qualname__}"
            )
        if parameter:
            self.glob("torch._utils", "_rebuild_parameter")
            self.out += b"("
        self.glob("torch._utils", "_rebuild_tensor_v2")
        self.out += b"("
        self.persistent_id(t)
        self.write_int(t.storage_offset())
        self.write_tuple(tuple(t.shape))
        self.write_tuple(tuple(t.stride()))
        self.save(t.requires_grad)
        self.call("collections", "OrderedDict")  # no backward hooks
        self.out += b"tR"
        if parameter:
            self.save(t.requires_grad)
            self.call("collections", "OrderedDict")
            self.out += b"tR"

    def persistent_id(self, t: F.Tensor) -> None:
        """('storage', torch.<Type>Storage, key, location, element count), as BINPERSID."""
        key = (t._storage_ptr(), t._storage_nbytes())
        if key not in self.storage_index or key[0] == 0:
            n = t._storage_nbytes() // t.element_size()
            flat = t.detach().as_strided((n,), (1,), 0)
            self.storage_index[key] = (len(self.storages), t.dtype)
            self.storages.append(flat.cpu().contiguous().view(F.uint8))
            self.keep_alive.append(t)
        index, dtype = self.storage_index[key]
        if dtype != t.dtype:
            raise RuntimeError(
                "flambeau.save(_use_torch_format=True): cannot save tensors that view the same "
                f"data as different types ({dtype} and {t.dtype}), as torch.save cannot"
            )
        name = str(t.dtype).removeprefix("flambeau.")
        self.out += b"("
        self.write_str("storage")
        self.glob("torch", _STORAGE_NAMES[name])
        self.write_str(str(index))
        self.write_str(str(t.device))
        self.write_int(self.storages[index].numel() // t.element_size())
        self.out += b"tQ"  # TUPLE, BINPERSID


def _nn_class(name: str):
    """flambeau.nn's Parameter or Buffer, or None without flambeau-nn."""
    try:
        import flambeau.nn as nn
    except ImportError:
        return None
    return getattr(nn, name)
