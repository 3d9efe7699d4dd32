"""Helpers for the tests of PyTorch checkpoints: the committed fixtures, and checkpoints
assembled opcode by opcode (the tests never import torch)."""

from __future__ import annotations

import io
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest

import flambeau as F

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
EXPECTED = dict(np.load(os.path.join(DATA, "torch_expected.npz")))


def fixture(name: str) -> str:
    return os.path.join(DATA, name)


def read_fixture(name: str) -> bytes:
    with open(fixture(name), "rb") as f:
        return f.read()


def values(t: F.Tensor) -> np.ndarray:
    t = t.detach()
    return (t.float() if t.dtype == F.bfloat16 else t).numpy()


def push(value) -> bytes:
    """The protocol-2 opcodes that push value (a plain value or a tuple of them)."""
    buf = io.BytesIO()
    p = pickle.Pickler(buf, protocol=2)
    p.fast = True  # no memo: fragments can be joined freely
    p.dump(value)
    return buf.getvalue()[2:-1]


def glob(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def call(func: bytes, *args: bytes) -> bytes:
    """func(*args) as REDUCE, each argument given as opcodes."""
    return func + b"(" + b"".join(args) + b"tR"


def storage(key="0", stype="FloatStorage", numel=4, location="cpu", module="torch") -> bytes:
    """A persistent id naming a storage, as BINPERSID."""
    return (
        b"("
        + push("storage")
        + glob(module, stype)
        + push(key)
        + push(location)
        + (push(numel) + b"tQ")
    )


def tensor(key="0", stype="FloatStorage", numel=4, offset=0, size=(4,), stride=(1,), **kw):
    """torch._utils._rebuild_tensor_v2 over a storage, as torch.save writes it."""
    grad = kw.pop("requires_grad", False)
    return call(
        glob("torch._utils", "_rebuild_tensor_v2"),
        storage(key, stype, numel, **kw),
        push(offset),
        push(size),
        push(stride),
        push(grad),
        call(glob("collections", "OrderedDict")),
    )


def pickled(body: bytes) -> bytes:
    return b"\x80\x02" + body + b"."


FOUR_FLOATS = np.arange(4, dtype=np.float32).tobytes()


def checkpoint(body: bytes, storages=None, prefix="archive", **records) -> io.BytesIO:
    """A ZIP checkpoint: data.pkl of body, data/<key> of each storage, and other records."""
    storages = {"0": FOUR_FLOATS} if storages is None else storages
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"{prefix}/data.pkl", pickled(body))
        for key, data in storages.items():
            zf.writestr(f"{prefix}/data/{key}", data)
        for name, data in records.items():
            zf.writestr(f"{prefix}/{name}", data)
        zf.writestr(f"{prefix}/version", b"3\n")
    buf.seek(0)
    return buf


def records(path_or_bytes) -> dict[str, bytes]:
    src = io.BytesIO(path_or_bytes) if isinstance(path_or_bytes, bytes) else path_or_bytes
    with zipfile.ZipFile(src) as zf:
        return {i.filename: zf.read(i.filename) for i in zf.infolist()}


def rezip(recs: dict[str, bytes]) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in recs.items():
            zf.writestr(name, data)
    buf.seek(0)
    return buf


def data_starts(src) -> dict[str, int]:
    """Where the bytes of each data/ record start in the file."""
    starts = {}
    with zipfile.ZipFile(src) as zf:
        for info in zf.infolist():
            if "/data/" in info.filename:
                zf.fp.seek(info.header_offset + 26)
                name_len, extra_len = struct.unpack("<HH", zf.fp.read(4))
                starts[info.filename] = info.header_offset + 30 + name_len + extra_len
    return starts


def nn_or_skip():
    """flambeau.nn, or a skip where the core's tests run without flambeau-nn."""
    try:
        import flambeau.nn as nn
    except ImportError:
        pytest.skip("flambeau-nn is not installed")
    return nn
