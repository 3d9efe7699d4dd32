"""flambeau.load on hostile PyTorch checkpoints: lying sizes, missing records, bombs, fuzzing.

Whatever the file holds, load returns or raises UnpicklingError (a RuntimeError and
a pickle.UnpicklingError), imports and calls nothing outside its allow-list, and
never allocates more than the file holds.
"""

from __future__ import annotations

import io
import pickle
import random
import struct
import time
import zipfile

import pytest
from torch_checkpoints import (
    FOUR_FLOATS,
    call,
    checkpoint,
    glob,
    push,
    read_fixture,
    records,
    rezip,
    storage,
    tensor,
)

import flambeau as F
from flambeau import serialization

Error = serialization.UnpicklingError


@pytest.fixture
def allocations(monkeypatch) -> list[int]:
    """The sizes of the storages load allocates (the core's memory, unseen by tracemalloc)."""
    sizes: list[int] = []
    empty = F.empty

    def spy(n, *args, **kwargs):
        sizes.append(n)
        return empty(n, *args, **kwargs)

    monkeypatch.setattr(F, "empty", spy)
    return sizes


@pytest.mark.parametrize(
    "body, message",
    [
        (
            tensor(size=(5,)),
            "storage '0': shape \\[5\\] .* reach byte 20, beyond its storage of 16",
        ),
        (tensor(offset=3, size=(2,)), "beyond its storage"),
        (tensor(size=(2, 2), stride=(4, 1)), "beyond its storage"),
        (tensor(size=(2**62, 4), stride=(4, 1)), "beyond its storage"),
        (tensor(size=(2**63,)), "invalid geometry"),
        (tensor(size=(2,), stride=(-1,)), "invalid geometry"),
        (tensor(size=(2,), stride=(1, 1)), "invalid geometry"),
        (tensor(size=(1,) * 1025, stride=(1,) * 1025), "invalid geometry"),
        (tensor(size=(2.5,)), "size is not a sequence of integers"),
        (tensor(size="ab"), "size is not a sequence of integers"),
        (tensor(offset=-1), "invalid geometry"),
        (tensor(requires_grad=1), "requires_grad is a int"),
        (tensor(stype="LongStorage", numel=2, size=(2,), requires_grad=True), "requires_grad=True"),
        (tensor(numel=8), "holds 16 bytes, its pickle says 32"),
        (tensor(numel=2**40), "holds 16 bytes, its pickle says 4398046511104"),
        (tensor(numel=2**62), "malformed persistent id"),
        (tensor(numel=-4), "malformed persistent id"),
        (tensor(key="1"), "record archive/data/1 is missing"),
        (tensor(key="../data.pkl"), r"record archive/data/\.\./data.pkl is missing"),
        (tensor(location=5), "malformed persistent id"),
        (tensor(location="nowhere"), "unknown device 'nowhere'"),
        (b"(" + push("storage") + push(1) + b"tQ", "malformed persistent id"),
        (push("storage") + b"Q", "malformed persistent id"),
        (b"(" + push("tensor") + b"tQ", "malformed persistent id"),
        (
            b"(" + tensor() + storage(stype="IntStorage") + b"l",
            "storage '0' is named with two types or sizes",
        ),
    ],
)
def test_lying_tensors_and_storages_are_refused(body, message, allocations):
    with pytest.raises(Error, match=message):
        F.load(checkpoint(body))
    assert sum(allocations) <= 16


def test_a_storage_claiming_more_than_the_file_is_refused_before_allocating(allocations):
    raw = records(checkpoint(tensor()).getvalue())
    f = rezip({**raw, "archive/data/0": FOUR_FLOATS * 2})  # 32 bytes where 16 are named
    with pytest.raises(Error, match="holds 32 bytes, its pickle says 16"):
        F.load(f)
    assert allocations == []


def test_missing_records_and_wrong_prefixes():
    with pytest.raises(Error, match="nor a PyTorch checkpoint"):
        F.load(rezip({"archive/version": b"3", "archive/data/0": FOUR_FLOATS}))
    with pytest.raises(Error, match="nor a PyTorch checkpoint"):
        F.load(rezip({"data.pkl": b"\x80\x02K\x01."}))  # no folder
    with pytest.raises(Error, match="nor a PyTorch checkpoint"):
        F.load(rezip({"a/data/0": b"", "b/data.pkl": b"\x80\x02K\x01."}))  # not the first one's
    assert F.load(rezip({"any/data.pkl": b"\x80\x02K\x01."})) == 1  # no version record needed


def test_compressed_records_are_refused_unread():
    """A zip bomb needs compression: PyTorch never compresses, and flambeau refuses it."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("archive/data.pkl", b"\x80\x02" + b"N0" * 5_000_000 + b"N.")
    assert len(buf.getvalue()) < 100_000
    with pytest.raises(Error, match="compressed or encrypted"):
        F.load(io.BytesIO(buf.getvalue()))
    raw = records(checkpoint(tensor()).getvalue())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", raw["archive/data.pkl"])
        zf.writestr("archive/data/0", FOUR_FLOATS, zipfile.ZIP_DEFLATED)
    with pytest.raises(Error, match="record archive/data/0 is compressed"):
        F.load(io.BytesIO(buf.getvalue()))


def test_truncated_and_corrupted_checkpoints(tmp_path):
    raw = read_fixture("torch_state_dict.pt")
    for cut in (10, len(raw) // 3, len(raw) // 2, len(raw) - 30, len(raw) - 1):
        with pytest.raises(Error):
            F.load(io.BytesIO(raw[:cut]))
    at = raw.index(b"bn.running_var")  # inside data.pkl: the CRC catches it
    bad = raw[:at] + b"X" + raw[at + 1 :]
    with pytest.raises(Error, match="Bad CRC-32"):
        F.load(io.BytesIO(bad))


@pytest.mark.parametrize(
    "pkl",
    [
        b"\x80\x02",  # no STOP
        b"\x80\x02X\xff\xff\xff\x7fabc.",  # a string longer than the data
        b"\x80\x02\x8b\xff\xff\xff\x7f.",  # LONG4 longer than the data
        b"\x80\x02h\x05.",  # memo slot never set
        b"\x80\x02t.",  # TUPLE without MARK
        b"\x80\x02L" + b"9" * 10_000 + b"L\n.",  # a number too long to convert
        b"\x80\x02\xffN.",  # an unknown opcode
        b"\x80\x02N\x82\x01.",  # EXT1: the extension registry is empty
        b"\x80\x02" + push(1) + push(2) + b"R.",  # REDUCE of an int
    ],
)
def test_malformed_pickles_raise_unpickling_error(pkl):
    with pytest.raises(Error):
        F.load(rezip({"archive/data.pkl": pkl}))


def test_deep_nesting_and_shared_references_load_or_refuse_quickly():
    deep = b"\x80\x02" + b"]" * 200_000 + b"a" * 199_999 + b"."
    start = time.perf_counter()
    try:
        F.load(rezip({"archive/data.pkl": deep}))
    except Error:
        pass
    # "billion laughs": each list holds the previous one ten times (shared, never copied)
    laughs = b"\x80\x02]q\x00"
    for i in range(60):
        laughs += b"](" + (b"h" + bytes([i])) * 10 + b"eq" + bytes([i + 1])
    out = F.load(rezip({"archive/data.pkl": laughs + b"."}))
    assert len(out) == 10 and out[0] is out[9]
    assert time.perf_counter() - start < 10


def test_the_legacy_format_refuses_lies_before_allocating(allocations):
    raw = read_fixture("torch_legacy.pt")
    magic = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)
    assert raw.startswith(magic)
    # a storage claiming 2**40 elements: more than the whole file
    body = pickle.dumps(0x1950A86A20F9469CFC6C, 2) + pickle.dumps(1001, 2)
    body += pickle.dumps({"little_endian": True}, 2)
    huge = b"\x80\x02" + call(
        glob("torch._utils", "_rebuild_tensor_v2"),
        b"(" + push("storage") + glob("torch", "FloatStorage") + push("k") + push("cpu"),
        push(2**40) + push(None) + b"tQ",
        push(0),
        push((4,)),
        push((1,)),
        push(False),
        call(glob("collections", "OrderedDict")),
    )
    with pytest.raises(Error, match="claims more bytes than the file holds"):
        F.load(io.BytesIO(body + huge + b"."))
    assert allocations == []
    for cut in (len(magic) - 1, len(raw) // 2, len(raw) - 3):
        with pytest.raises(Error):
            F.load(io.BytesIO(raw[:cut]))
    with pytest.raises(Error, match="not a flambeau archive nor a PyTorch checkpoint"):
        F.load(io.BytesIO(pickle.dumps(12345, protocol=2)))
    with pytest.raises(Error, match="version 7 is unknown"):
        F.load(io.BytesIO(magic + pickle.dumps(7, protocol=2)))


def legacy_file(protocol: int = 2, little_endian: bool = True) -> bytes:
    """A legacy checkpoint of one tensor over storage 'k', up to the list of storage keys."""
    head = [0x1950A86A20F9469CFC6C, 1001, {"little_endian": little_endian}]
    return b"".join(pickle.dumps(v, protocol) for v in head) + (
        b"\x80\x02"
        + call(
            glob("torch._utils", "_rebuild_tensor_v2"),
            b"(" + push("storage") + glob("torch", "FloatStorage") + push("k") + push("cpu"),
            push(4) + push(None) + b"tQ",
            push(0),
            push((4,)),
            push((1,)),
            push(False),
            call(glob("collections", "OrderedDict")),
        )
        + b"."
    )


@pytest.mark.parametrize("protocol", [0, 1, 2, 4, 5])
def test_legacy_files_of_every_pickle_protocol_load(protocol):
    raw = legacy_file(protocol) + pickle.dumps(["k"], protocol) + struct.pack("<q", 4)
    assert F.load(io.BytesIO(raw + FOUR_FLOATS)).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_the_legacy_format_checks_each_storage_size():
    legacy = legacy_file()
    good = legacy + pickle.dumps(["k"], 2) + struct.pack("<q", 4) + FOUR_FLOATS
    assert F.load(io.BytesIO(good)).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(Error, match="truncated or of the wrong size"):
        F.load(io.BytesIO(legacy + pickle.dumps(["k"], 2) + struct.pack("<q", 5) + FOUR_FLOATS))
    with pytest.raises(Error, match="storage 'k' is truncated"):
        F.load(io.BytesIO(legacy + pickle.dumps(["k"], 2) + struct.pack("<q", 4) + b"\0" * 5))
    with pytest.raises(Error, match="unknown or repeated storage 'x'"):
        F.load(io.BytesIO(legacy + pickle.dumps(["x"], 2)))
    with pytest.raises(Error, match=r"no data for storages \['k'\]"):
        F.load(io.BytesIO(legacy + pickle.dumps([], 2)))
    with pytest.raises(Error, match="malformed list of storage keys"):
        F.load(io.BytesIO(legacy + pickle.dumps("k", 2)))
    big = legacy_file(little_endian=False)
    swapped = struct.pack(">q", 4) + struct.pack(">4f", 0.0, 1.0, 2.0, 3.0)
    assert F.load(io.BytesIO(big + pickle.dumps(["k"], 2) + swapped)).tolist() == [
        0.0,
        1.0,
        2.0,
        3.0,
    ]


# ---- fuzzing ------------------------------------------------------------------------------------


def mutate_pickle(rng: random.Random, pkl: bytes) -> bytes:
    out = bytearray(pkl)
    for _ in range(rng.randrange(1, 4)):
        kind = rng.randrange(4)
        at = rng.randrange(2, len(out))
        if kind == 0:  # flip a byte
            out[at] ^= 1 << rng.randrange(8)
        elif kind == 1:  # a byte becomes an opcode
            out[at] = rng.choice(b"RbQ\x81()tlue]}hqN.KJ\x8a")
        elif kind == 2:  # drop a run of bytes
            del out[at : at + rng.randrange(1, 16)]
        else:  # repeat a run of bytes
            out[at:at] = out[at : at + rng.randrange(1, 32)]
    return bytes(out)


def test_fuzzed_pickles_load_or_raise_unpickling_error(allocations):
    samples = []
    for name in ("torch_nested.pt", "torch_state_dict.pt", "torch_dtypes.pt"):
        recs = records(read_fixture(name))
        pkl = next(n for n in recs if n.endswith("/data.pkl"))
        samples.append((recs, pkl))
    rng = random.Random(20240613)
    outcomes = {"loaded": 0, "refused": 0}
    start = time.perf_counter()
    for i in range(1500):
        recs, pkl = samples[i % len(samples)]
        bad = rezip({**recs, pkl: mutate_pickle(rng, recs[pkl])}).getvalue()
        allocations.clear()
        try:
            F.load(io.BytesIO(bad), weights_only=True)
            outcomes["loaded"] += 1
        except Error:
            outcomes["refused"] += 1
        assert sum(allocations) <= len(bad), (i, allocations)
    assert outcomes["refused"] > 500 and outcomes["loaded"] > 20, outcomes
    assert time.perf_counter() - start < 60  # a few seconds; only a hang would fail this


def test_fuzzed_legacy_files_load_or_raise_unpickling_error(allocations):
    raw = read_fixture("torch_legacy.pt")
    rng = random.Random(7)
    refused = 0
    for _ in range(600):
        bad = mutate_pickle(rng, raw)
        allocations.clear()
        try:
            F.load(io.BytesIO(bad))
        except Error:
            refused += 1
        assert sum(allocations) <= len(bad)
    assert refused > 200
