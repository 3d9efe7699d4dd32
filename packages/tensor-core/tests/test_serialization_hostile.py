"""flambeau.load on hostile archives: lying sizes, manifests of the wrong shape, and a fuzzer.

Whatever the file holds, load either returns or raises UnpicklingError, and
never allocates more than the file holds.
"""

from __future__ import annotations

import io
import json
import random
import struct
import time
import tracemalloc
import zipfile

import numpy as np
import pytest
from test_serialization import FOUR_FLOATS, archive, manifest_of, tensor_record

import flambeau as F
from flambeau import serialization

Error = serialization.UnpicklingError
ROOT = {"$type": "tensor", "id": 0}


def saved(obj) -> bytes:
    buf = io.BytesIO()
    F.save(obj, buf)
    return buf.getvalue()


def rewrite(raw: bytes, name: str, **fields) -> bytes:
    """raw with fields (size, offset) of a record changed in the ZIP directory (and its header)."""
    out = bytearray(raw)
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        info = zf.getinfo(name)
    entry = out.index(b"PK\x01\x02")  # the ZIP directory's entries, in turn
    while out[entry + 46 : entry + 46 + len(name)] != name.encode():
        entry = out.index(b"PK\x01\x02", entry + 4)
    if "size" in fields:
        struct.pack_into("<II", out, entry + 20, fields["size"], fields["size"])
        struct.pack_into("<II", out, info.header_offset + 18, fields["size"], fields["size"])
    if "offset" in fields:
        struct.pack_into("<I", out, entry + 42, fields["offset"])
    return bytes(out)


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


# ---- records that claim more bytes than the file holds ------------------------


def test_a_storage_size_beyond_the_file_is_refused_before_allocating(allocations):
    # The manifest and the ZIP directory agree on 3.75 GiB; the file holds 48 bytes.
    nbytes = 0xF0000000
    m = manifest_of(ROOT, [tensor_record(shape=[nbytes // 4])], [{"nbytes": nbytes}])
    raw = rewrite(archive(m, {0: bytes(48)}).getvalue(), "archive/data/0", size=nbytes)
    with pytest.raises(Error, match="claims 4026531840 bytes, more than the file holds"):
        F.load(io.BytesIO(raw))
    assert allocations == []


def test_a_manifest_size_beyond_the_file_is_refused_before_reading():
    raw = rewrite(saved({"w": F.ones(3)}), "archive/manifest.json", size=2**30 - 1)
    tracemalloc.start()
    try:
        with pytest.raises(Error, match="claims 1073741823 bytes, more than the file holds"):
            F.load(io.BytesIO(raw))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20


def test_a_record_cannot_reach_into_the_next_one(allocations):
    raw = saved([F.ones(16), F.zeros(16)])  # archive/data/0 is followed by archive/data/1
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        next_header = zf.getinfo("archive/data/1").header_offset
    grown = rewrite(raw, "archive/data/0", size=next_header)  # < file size, > its space
    with pytest.raises(Error, match="more than the file holds"):
        F.load(io.BytesIO(grown))
    assert allocations == []


def test_two_records_cannot_share_bytes(allocations):
    raw = saved([F.ones(16), F.zeros(16)])
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        first = zf.getinfo("archive/data/0").header_offset
    shared = rewrite(raw, "archive/data/1", offset=first)
    with pytest.raises(Error, match="names another record"):
        F.load(io.BytesIO(shared))
    assert allocations == [64]


def test_two_records_of_one_name_are_refused():
    buf = io.BytesIO()
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data/0", FOUR_FLOATS[0])
        zf.writestr("archive/data/0", bytes(16))
        zf.writestr("archive/manifest.json", json.dumps(manifest_of(None)))
    with pytest.raises(Error, match="same name"):
        F.load(io.BytesIO(buf.getvalue()))


def test_a_directory_in_place_of_a_record():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.mkdir("archive/data/0")
        m = manifest_of(ROOT, [tensor_record()], [{"nbytes": 16}])
        zf.writestr("archive/manifest.json", json.dumps(m))
    with pytest.raises(Error, match="archive/data/0 is missing"):
        F.load(io.BytesIO(buf.getvalue()))


@pytest.mark.parametrize("raw", [b"", b"PK", b"PK\x05\x06" + bytes(18), b"\0" * 100])
def test_files_that_are_not_archives(raw, tmp_path):
    (tmp_path / "x.fl").write_bytes(raw)
    for f in (io.BytesIO(raw), tmp_path / "x.fl"):
        with pytest.raises(Error, match="not a flambeau archive"):
            F.load(f)


class ShortReads(io.RawIOBase):
    """A readable, seekable file object that returns at most `most` bytes a call."""

    def __init__(self, raw: bytes, most: int):
        self.inner, self.most = io.BytesIO(raw), most

    def readable(self):
        return True

    def seekable(self):
        return True

    def readinto(self, b):
        data = self.inner.read(min(len(b), self.most))
        b[: len(data)] = data
        return len(data)

    def seek(self, pos, whence=0):
        return self.inner.seek(pos, whence)

    def tell(self):
        return self.inner.tell()


class ReadOnly:
    """The least a file object needs for zipfile: read, seek and tell (no readinto)."""

    def __init__(self, raw: bytes):
        self.inner = io.BytesIO(raw)
        self.read, self.seek, self.tell = self.inner.read, self.inner.seek, self.inner.tell


def test_file_objects_with_short_reads_or_only_read():
    a = F.arange(2**18, dtype=F.float32)  # 1 MiB
    raw = saved({"a": a, "v": a[5:]})
    for f in (ShortReads(raw, 4096), ReadOnly(raw)):
        out = F.load(f)
        assert F.equal(out["a"], a) and out["v"]._is_view_of(out["a"])
    try:  # so short that the ZIP directory itself comes back short: a clean error at worst
        assert F.equal(F.load(ShortReads(raw, 7))["a"], a)
    except Error:
        pass


# ---- manifests of the wrong shape ----------------------------------------------


def raw_manifest(text: str) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data/0", FOUR_FLOATS[0])
        zf.writestr("archive/manifest.json", text)
    buf.seek(0)
    return buf


def test_json_that_is_ambiguous_or_not_json_is_refused():
    good = json.dumps(manifest_of(ROOT, [tensor_record()], [{"nbytes": 16}]))
    assert F.load(raw_manifest(good)).tolist() == [0.0, 1.0]
    twice = good.replace('"root"', '"root": null, "root"')
    with pytest.raises(Error, match="names one key twice"):
        F.load(raw_manifest(twice))
    for constant in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(Error, match="is not JSON"):
            F.load(raw_manifest(good.replace('"root"', f'"x": {constant}, "root"')))
    huge = good.replace('"nbytes": 16', f'"nbytes": {"9" * 5000}')
    with pytest.raises(Error, match="not valid JSON|malformed storage record"):
        F.load(raw_manifest(huge))  # Python refuses ints of over 4300 digits, or load does


@pytest.mark.parametrize(
    "change, message",
    [
        ({"version": True}, "format version True"),
        ({"version": "1"}, "format version '1'"),
        ({"version": 0}, "format version 0"),
        ({"byteorder": "middle"}, "unknown byte order"),
        ({"byteorder": ["little"]}, "unknown byte order"),
        ({"storages": {"0": {"nbytes": 16}}}, "no valid 'storages' table"),
        ({"tensors": None}, "no valid 'tensors' table"),
        ({"storages": [[16]]}, "malformed storage record"),
        ({"storages": [{"nbytes": "16"}]}, "malformed storage record"),
        ({"storages": [{"nbytes": True}]}, "malformed storage record"),
        ({"storages": [{"nbytes": 16.0}]}, "malformed storage record"),
        ({"storages": [{"nbytes": -16}]}, "malformed storage record"),
        ({"storages": [{"nbytes": 2**64}]}, "malformed storage record"),
        ({"tensors": [["storage", "dtype"]]}, "malformed record"),
        ({"tensors": [{"storage": 0}]}, "malformed record"),
    ],
)
def test_malformed_manifests_are_refused(change, message):
    m = manifest_of(ROOT, [tensor_record()], [{"nbytes": 16}])
    m.update(change)
    with pytest.raises(Error, match=message):
        F.load(archive(m, FOUR_FLOATS))


def test_a_manifest_without_root_is_refused():
    m = manifest_of(ROOT, [tensor_record()], [{"nbytes": 16}])
    del m["root"]
    with pytest.raises(Error, match="no 'root'"):
        F.load(archive(m, FOUR_FLOATS))


@pytest.mark.parametrize(
    "record, message",
    [
        (tensor_record(dtype="float32", shape=[2**62], stride=[0]), "overflow int64"),
        (tensor_record(shape=[2**62, 4], stride=[0, 0]), "overflow int64"),
        (tensor_record(shape=[0, 2**62], stride=[0, 4]), "overflow int64"),
        (tensor_record(shape=[2**64], stride=[0]), "invalid geometry"),
        (tensor_record(shape=[2], stride=[2**63]), "invalid geometry"),
        (tensor_record(offset=-1), "invalid geometry"),
        (tensor_record(offset=True), "invalid geometry"),
        (tensor_record(shape=[True], stride=[1]), "invalid geometry"),
        (tensor_record(shape=["2"]), "invalid geometry"),
        (tensor_record(shape=2, stride=1), "invalid geometry"),
        (tensor_record(shape={"0": 2}, stride={"0": 1}), "invalid geometry"),
        (tensor_record(shape=[1] * 2000, stride=[0] * 2000), "invalid geometry"),
        (tensor_record(storage=True), "storage id True is out of range"),
        (tensor_record(storage=[0]), r"storage id \[0\] is out of range"),
        (tensor_record(dtype=["float32"]), "unknown dtype"),
        (tensor_record(requires_grad="yes"), "requires_grad='yes'"),
        (tensor_record(dtype="int32", requires_grad=True), "requires_grad=True is not possible"),
        (tensor_record(device=5), "device 5 is not a device name"),
        (tensor_record(device="banana"), "unknown device 'banana'"),
    ],
)
def test_tensor_records_of_the_wrong_shape_are_refused(record, message):
    m = manifest_of(ROOT, [record], [{"nbytes": 16}])
    with pytest.raises(Error, match=message):
        F.load(archive(m, FOUR_FLOATS))


def test_expanded_tensors_within_int64_load():
    # As in PyTorch, a stride-0 tensor may have far more elements than its storage.
    record = tensor_record(dtype="uint8", shape=[2**62], stride=[0])
    out = F.load(archive(manifest_of(ROOT, [record], [{"nbytes": 16}]), FOUR_FLOATS))
    assert out.shape == (2**62,) and out.stride() == (0,)


def test_a_device_without_a_backend_needs_map_location():
    m = manifest_of(ROOT, [tensor_record(device="cuda:0")], [{"nbytes": 16}])
    with pytest.raises(Error, match="saved on 'cuda:0'.*pass map_location"):
        F.load(archive(m, FOUR_FLOATS))
    assert F.load(archive(m, FOUR_FLOATS), map_location="cpu").tolist() == [0.0, 1.0]


class Slotted:
    __slots__ = ("a",)


SLOTTED = f"{__name__}:Slotted"


@pytest.mark.parametrize(
    "root, message",
    [
        ({"$type": "size", "items": ["a"]}, "malformed 'size'"),
        ({"$type": "tuple", "items": {"a": 1}}, "malformed 'tuple'"),
        ({"$type": "dict", "items": "ab"}, "malformed 'dict'"),
        ({"$type": "dict", "items": [[[1], 2]]}, "malformed 'dict'"),
        ({"$type": "complex", "parts": [[], 1]}, "malformed 'complex'"),
        ({"$type": "complex", "parts": [ROOT, 1]}, "malformed 'complex'"),
        ({"$type": "float", "repr": "pi"}, "malformed 'float'"),
        ({"$type": "device", "name": ["cpu"]}, "malformed 'device' record"),
        ({"$type": "dtype", "name": 32}, "unknown dtype"),
        ({"$type": "tensor", "id": [0]}, r"tensor id \[0\] is out of range"),
        ({"$type": "tensor", "id": True}, "tensor id True is out of range"),
        ({"$type": "object", "class": ["os:system"], "state": None}, "malformed object"),
        (
            {"$type": "object", "class": SLOTTED, "state": {"$type": "dict", "items": [["a", 1]]}},
            "cannot restore the state of .*Slotted",
        ),
        (
            {"$type": "object", "class": SLOTTED, "state": {"$type": "tuple"}},
            "malformed 'tuple'",
        ),
    ],
)
def test_records_of_the_wrong_shape_are_refused(root, message):
    m = manifest_of(root, [tensor_record()], [{"nbytes": 16}])
    with serialization.safe_globals([Slotted]), pytest.raises(Error, match=message):
        F.load(archive(m, FOUR_FLOATS))


def test_an_ndarray_record_of_a_tensor_that_requires_grad():
    m = manifest_of(
        [ROOT, {"$type": "ndarray", "id": 0}],
        [tensor_record(requires_grad=True)],
        [{"nbytes": 16}],
    )
    t, a = F.load(archive(m, FOUR_FLOATS))
    assert t.requires_grad and isinstance(a, np.ndarray) and a.tolist() == [0.0, 1.0]


# ---- the fuzzer ------------------------------------------------------------------


def random_json(rng: random.Random, depth: int = 0):
    """A JSON value of a random type, biased toward what the manifest holds."""
    leaves = [
        lambda: None,
        lambda: rng.choice([True, False]),
        lambda: rng.choice([0, 1, 2, 3, 7, 16, -1, 2**31, 2**62, 2**63, 2**64, -(2**63)]),
        lambda: rng.choice([0.5, -1.0, 1e308, 3.0]),
        lambda: rng.choice(["", "x", "float32", "int64", "cpu", "cuda", "tensor", "nbytes"]),
    ]
    branches = [
        lambda: [random_json(rng, depth + 1) for _ in range(rng.randrange(4))],
        lambda: {
            rng.choice(["$type", "id", "items", "name", "x"]): random_json(rng, depth + 1)
            for _ in range(rng.randrange(3))
        },
        lambda: {
            "$type": rng.choice(["tensor", "ndarray", "tuple", "size", "dict", "odict", "float"]),
            rng.choice(["id", "items", "parts", "name", "repr", "class"]): random_json(
                rng, depth + 1
            ),
        },
    ]
    return rng.choice(leaves + (branches if depth < 3 else []))()


def paths(x, at=()):
    """Every place in a JSON value, as a path of keys and indices."""
    yield at
    children = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
    for key, value in children:
        yield from paths(value, (*at, key))


def mutate_manifest(rng: random.Random, raw: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        records = {i.filename: zf.read(i) for i in zf.infolist()}
    manifest = json.loads(records["archive/manifest.json"])
    for _ in range(rng.randrange(1, 4)):
        *parent, last = rng.choice(list(paths(manifest))[1:])
        holder = manifest
        for key in parent:
            holder = holder[key]
        if isinstance(holder, dict) and rng.random() < 0.2:
            del holder[last]
        else:
            holder[last] = random_json(rng)
        if not isinstance(manifest, dict) or not manifest:
            break
    records["archive/manifest.json"] = json.dumps(manifest).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:  # a valid ZIP: the CRCs do not stop the manifest
        for name, data in records.items():
            zf.writestr(name, data)
    return buf.getvalue()


def mutate_bytes(rng: random.Random, raw: bytes) -> bytes:
    out = bytearray(raw)
    kind = rng.randrange(3)
    if kind == 0:  # flip bytes anywhere
        for _ in range(rng.randrange(1, 8)):
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
        return bytes(out)
    if kind == 1:  # truncate
        return bytes(out[: rng.randrange(len(out))])
    # rewrite a size or an offset in the ZIP directory
    entries = [i for i in range(len(out) - 46) if out[i : i + 4] == b"PK\x01\x02"]
    at = rng.choice(entries) + rng.choice([20, 24, 42])
    struct.pack_into("<I", out, at, rng.choice([0, 1, 63, 2**20, 2**31, 2**32 - 1]))
    return bytes(out)


def test_fuzzed_archives_load_or_raise_unpickling_error(allocations):
    a = F.arange(24.0).reshape(4, 6)
    samples = [
        saved({"a": a, "row": a[1], "n": F.arange(5, dtype=F.int16), "x": [1, (2.5, None), b"z"]}),
        saved([F.ones(3, dtype=F.complex64), {"s": F.Size([2, 3]), "d": F.float16}]),
    ]
    rng = random.Random(20240611)
    outcomes = {"loaded": 0, "refused": 0}
    start = time.perf_counter()
    for i in range(3000):
        raw = samples[i % len(samples)]
        bad = mutate_manifest(rng, raw) if i % 2 else mutate_bytes(rng, raw)
        allocations.clear()
        try:
            F.load(io.BytesIO(bad), weights_only=True)
            outcomes["loaded"] += 1
        except Error:
            outcomes["refused"] += 1
        assert sum(allocations) <= len(bad), (i, allocations)
    assert outcomes["refused"] > 500 and outcomes["loaded"] > 50, outcomes
    assert time.perf_counter() - start < 30  # a few seconds; only a hang would fail this
