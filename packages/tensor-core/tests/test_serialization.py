"""flambeau.save / flambeau.load: round trips, shared views, and hostile archives."""

from __future__ import annotations

import io
import json
import struct
import sys
import threading
import tracemalloc
import zipfile
import zlib
from collections import Counter, OrderedDict, namedtuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flambeau as F
from flambeau import serialization

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    F.save(obj, buf)
    buf.seek(0)
    return F.load(buf, **load_kwargs)


def np_of(t):
    return (t.float() if t.dtype == F.bfloat16 else t).numpy()


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_round_trips(dtype):
    rng = np.random.default_rng(0)
    base = F.from_numpy((rng.standard_normal((3, 5)) * 10).astype(np.float64)).to(getattr(F, dtype))
    out = roundtrip({"t": base, "T": base.t(), "s": base[1:, ::2], "z": base[:0], "d": base[0, 0]})
    for key, ref in {"t": base, "T": base.t(), "s": base[1:, ::2], "z": base[:0]}.items():
        assert out[key].dtype == ref.dtype and out[key].shape == ref.shape
        np.testing.assert_array_equal(np_of(out[key]), np_of(ref))
    assert out["d"].dim() == 0 and out["d"].item() == base[0, 0].item()
    assert out["T"].stride() == base.t().stride()


def test_views_still_share_storage_after_load():
    a = F.arange(24.0).reshape(4, 6)
    out = roundtrip({"a": a, "row": a[2], "col": a[:, 1], "flat": a.view(-1)})
    assert out["row"]._is_view_of(out["a"]) and out["col"]._is_view_of(out["a"])
    out["a"][2, 1] = -7.0
    assert out["row"][1].item() == -7.0 and out["col"][2].item() == -7.0
    assert out["flat"][13].item() == -7.0


def test_a_view_of_another_dtype_shares_storage():
    a = F.arange(4, dtype=F.int32)
    out = roundtrip([a, a.view(F.uint8)])
    out[0][0] = 0x01020304
    assert out[1][:4].tolist() == [4, 3, 2, 1] if sys.byteorder == "little" else [1, 2, 3, 4]


def test_the_same_tensor_twice_loads_as_one_object():
    t = F.ones(3)
    out = roundtrip({"x": t, "y": [t, t]})
    assert out["x"] is out["y"][0] is out["y"][1]


def test_plain_values_and_containers():
    obj = {
        "ints": [0, -1, 2**70],
        "floats": (1.5, float("inf"), float("-inf")),
        "nan": float("nan"),
        "strs": {"k": "v", 3: "int key", (1, 2): "tuple key"},
        "od": OrderedDict([("b", 1), ("a", 2)]),
        "sets": (set([1, 2]), frozenset(["x"])),
        "bytes": (b"\x00\xff", bytearray(b"ab")),
        "complex": 1 - 2j,
        "none": None,
        "bool": True,
        "dtype": F.float16,
        "device": F.device("cpu"),
        "size": F.Size([2, 3]),
        "numpy": (np.arange(4, dtype=np.int16), np.float32(2.5)),
    }
    out = roundtrip(obj)
    assert out["nan"] != out["nan"]
    for key in obj:
        if key not in ("nan", "numpy"):
            assert out[key] == obj[key] and type(out[key]) is type(obj[key]), key
    assert list(out["od"]) == ["b", "a"]
    np.testing.assert_array_equal(out["numpy"][0], obj["numpy"][0])
    assert out["numpy"][0].dtype == np.int16 and out["numpy"][1] == 2.5


def test_requires_grad_is_kept():
    out = roundtrip([F.ones(2).requires_grad_(), F.ones(2)])
    assert out[0].requires_grad and out[0].is_leaf and not out[1].requires_grad


def test_paths_file_objects_and_pathlib(tmp_path):
    t = F.arange(5)
    F.save(t, str(tmp_path / "a.fl"))
    F.save(t, tmp_path / "b.fl")
    with open(tmp_path / "c.fl", "wb") as fh:
        F.save(t, fh)
    for name in "abc":
        with open(tmp_path / f"{name}.fl", "rb") as fh:
            assert F.load(fh).tolist() == [0, 1, 2, 3, 4]
        assert F.load(tmp_path / f"{name}.fl").tolist() == [0, 1, 2, 3, 4]


def test_storages_are_aligned_in_the_file(tmp_path):
    path = tmp_path / "x.fl"
    F.save({"a": F.ones(3), "b": F.zeros(7, dtype=F.float64), "c": F.ones(1, dtype=F.int8)}, path)
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if info.filename.startswith("archive/data/"):
                assert serialization._data_offset(zf, info) % 64 == 0


def test_mmap_maps_copy_on_write(tmp_path):
    path = tmp_path / "m.fl"
    a = F.arange(1000.0)
    F.save({"a": a, "v": a[10:20]}, path)
    out = F.load(path, mmap=True)
    assert out["v"]._is_view_of(out["a"]) and out["v"].tolist() == list(range(10, 20))
    out["a"][15] = -1.0
    assert out["v"][5].item() == -1.0
    assert F.load(path)["a"][15].item() == 15.0  # the file is untouched
    with pytest.raises(ValueError, match="mmap=True needs a file path"):
        F.load(io.BytesIO(path.read_bytes()), mmap=True)


def test_map_location_forms():
    t = F.arange(3.0)
    assert roundtrip(t, map_location="cpu").tolist() == [0.0, 1.0, 2.0]
    assert roundtrip(t, map_location=F.device("cpu")).device == F.device("cpu")
    assert roundtrip(t, map_location={"cpu": "cpu"}).tolist() == [0.0, 1.0, 2.0]
    seen = []
    out = roundtrip(t, map_location=lambda x, where: seen.append(where) or x * 2)
    assert seen == ["cpu"] and out.tolist() == [0.0, 2.0, 4.0]


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


class Slotted:
    __slots__ = ("a", "b")


def test_objects_need_an_allow_list():
    buf = io.BytesIO()
    F.save({"p": Point(1, F.ones(2))}, buf)
    buf.seek(0)
    with pytest.raises(serialization.UnpicklingError, match="test_serialization:Point"):
        F.load(buf)
    buf.seek(0)
    with serialization.safe_globals([Point]):
        p = F.load(buf)["p"]
    assert p.x == 1 and p.y.tolist() == [1.0, 1.0]
    assert Point not in serialization.get_safe_globals()
    buf.seek(0)
    assert F.load(buf, weights_only=False)["p"].x == 1


def test_objects_with_slots():
    s = Slotted()
    s.a, s.b = 1, F.zeros(1)
    with serialization.safe_globals([Slotted]):
        out = roundtrip(s)
    assert out.a == 1 and out.b.tolist() == [0.0]


Pair = namedtuple("Pair", "first second")


class Tagged(dict):
    """A dict subclass with an attribute of its own."""


class Stack(list):
    pass


def test_subclasses_of_containers_keep_their_contents():
    # Their contents live outside __getstate__: saved as pickle keeps them, never dropped.
    tagged = Tagged(w=F.ones(2), n=3)
    tagged.note = "kept"
    stack = Stack([F.zeros(1), 5])
    stack.depth = 2
    obj = {"pair": Pair(F.arange(3), "b"), "tagged": tagged, "stack": stack}
    with serialization.safe_globals([Pair, Tagged, Stack]):
        out = roundtrip(obj)
    assert type(out["pair"]) is Pair and out["pair"].second == "b"
    assert out["pair"].first.tolist() == [0, 1, 2]
    assert type(out["tagged"]) is Tagged and out["tagged"].note == "kept"
    assert sorted(out["tagged"]) == ["n", "w"] and out["tagged"]["w"].tolist() == [1.0, 1.0]
    assert type(out["stack"]) is Stack and out["stack"].depth == 2
    assert out["stack"][0].tolist() == [0.0] and out["stack"][1] == 5
    assert roundtrip(obj, weights_only=False)["tagged"]["n"] == 3


def test_a_counter_loads_with_weights_only_as_in_pytorch():
    # PyTorch's weights-only loader allows collections.Counter (MultiStepLR's milestones).
    counts = Counter({30: 1, 80: 2})
    out = roundtrip({"milestones": counts})
    assert type(out["milestones"]) is Counter and out["milestones"] == counts
    assert Counter not in serialization.get_safe_globals()
    buf = io.BytesIO()
    F.save({"milestones": counts}, buf, _use_torch_format=True)
    buf.seek(0)
    assert F.load(buf, weights_only=True)["milestones"] == counts


def test_save_refuses_what_could_not_be_loaded():
    class Local:
        pass

    with pytest.raises(TypeError, match="cannot be found again"):
        F.save(Local(), io.BytesIO())
    with pytest.raises(TypeError, match="function"):
        F.save({"f": lambda: 1}, io.BytesIO())
    with pytest.raises(TypeError, match="cannot save an object of type generator"):
        F.save((i for i in range(2)), io.BytesIO())
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="self-referencing"):
        F.save(loop, io.BytesIO())


def test_large_storages_are_streamed_not_copied():
    t = F.ones(8 * 2**20)  # 32 MiB
    buf = io.BytesIO()
    F.save(t, buf)
    buf.seek(0)
    tracemalloc.start()
    try:
        out = F.load(buf)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.shape == (8 * 2**20,) and out[-1].item() == 1.0
    assert peak < 4 * 2**20  # bytes go straight into the tensor: Python never holds a copy


def test_save_streams_storages_in_chunks(tmp_path):
    t = F.ones(8 * 2**20)  # 32 MiB
    tracemalloc.start()
    try:
        F.save(t, tmp_path / "big.fl")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20  # one chunk at a time, never a copy of the storage
    assert F.equal(F.load(tmp_path / "big.fl"), t)


def local_header_crc(raw: bytes, info: zipfile.ZipInfo) -> int:
    return struct.unpack_from("<I", raw, info.header_offset + 14)[0]


def test_the_checksums_in_both_headers_are_right():
    buf = io.BytesIO()
    F.save({"a": F.arange(3 * 2**20, dtype=F.float32), "b": F.ones(5)}, buf)
    raw = buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        assert zf.testzip() is None
        for info in zf.infolist():  # the local header's CRC, written after the bytes
            assert local_header_crc(raw, info) == info.CRC == zlib.crc32(zf.read(info))


class WriteOnly:
    """A file that can only be written to, like a pipe or a socket."""

    def __init__(self):
        self.buffer = io.BytesIO()

    def write(self, data):
        return self.buffer.write(data)

    def flush(self):
        pass


def test_save_to_an_unseekable_file():
    out = WriteOnly()
    a = F.arange(2 * 2**20, dtype=F.float32)
    F.save({"a": a, "v": a[3:]}, out)
    raw = out.buffer.getvalue()
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        assert zf.testzip() is None  # the CRCs follow the bytes (data descriptors)
    back = F.load(io.BytesIO(raw))
    assert F.equal(back["a"], a) and back["v"]._is_view_of(back["a"])


@pytest.mark.parametrize("seekable", [True, False])
def test_zip64_records_stay_aligned_and_load(monkeypatch, seekable):
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 1000)  # records of more bytes need ZIP64
    a = F.arange(2048.0)
    out = io.BytesIO() if seekable else WriteOnly()
    F.save({"a": a, "v": a[5:], "s": F.ones(3)}, out)
    raw = (out if seekable else out.buffer).getvalue()
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        assert zf.testzip() is None
        info = zf.getinfo("archive/data/0")
        assert serialization._data_offset(zf, info) % 64 == 0
    back = F.load(io.BytesIO(raw))
    assert F.equal(back["a"], a) and back["v"]._is_view_of(back["a"])


def test_saving_while_another_thread_writes_gives_loadable_files(tmp_path):
    # The CRC is of exactly the bytes written, so a concurrent writer can tear a
    # value but never make the file unloadable (it used to, in most tries).
    t = F.zeros(2**20)
    stop = threading.Event()

    def writer():
        k = 0
        while not stop.is_set():
            t.fill_(float(k))
            k += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        files = [tmp_path / f"{i}.fl" if i % 2 else io.BytesIO() for i in range(30)]
        for f in files:
            F.save({"t": t, "tail": t[7:]}, f)
    finally:
        stop.set()
        thread.join()
    for f in files:
        if isinstance(f, io.BytesIO):
            f.seek(0)
        out = F.load(f)
        assert out["tail"]._is_view_of(out["t"]) and out["t"].shape == (2**20,)


def test_save_refuses_tensors_load_would_refuse():
    with pytest.raises(ValueError, match="too many dimensions or bytes"):
        F.save(F.zeros(1).expand(2**62), io.BytesIO())  # 2**64 bytes overflow int64
    with pytest.raises(ValueError, match="too many dimensions or bytes"):
        F.save(F.zeros([1] * (serialization._MAX_NDIM + 1)), io.BytesIO())
    big = roundtrip(F.zeros(1, dtype=F.uint8).expand(2**62))  # 2**62 bytes fit
    assert big.shape == (2**62,) and big.stride() == (0,)


@pytest.mark.parametrize("n", [0, 1, 15, 16, 63, 64, 65, 127, 1000, 4099, 9 * 2**20 + 7])
def test_crc32_matches_zlib(n):
    from flambeau import _C

    data = np.random.default_rng(n).integers(0, 256, n + 3, dtype=np.uint8).tobytes()
    for start in (0, 3):  # aligned and unaligned
        view = memoryview(data)[start : start + n]
        assert _C._crc32(view) == zlib.crc32(view)
        assert _C._crc32(view, 0x12345678) == zlib.crc32(view, 0x12345678)
        half = n // 2
        assert _C._crc32(view[half:], _C._crc32(view[:half])) == zlib.crc32(view)


def test_a_corrupted_file_on_disk_fails_the_crc(tmp_path):
    path = tmp_path / "big.fl"
    w = F.arange(3 * 2**20, dtype=F.float32)  # 12 MiB: read in pieces over threads
    F.save({"w": w}, path)
    assert F.equal(F.load(path)["w"], w)
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("archive/data/0")
        assert info.CRC == zlib.crc32(w.numpy().tobytes())
        start = serialization._data_offset(zf, info)
    raw = bytearray(path.read_bytes())
    raw[start + 11 * 2**20] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.raises(serialization.UnpicklingError, match="CRC"):
        F.load(path)


# ---- hostile and damaged archives -------------------------------------------------


def archive(manifest: dict, data: dict[int, bytes] | None = None, compression=0) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for i, raw in (data or {}).items():
            zf.writestr(f"archive/data/{i}", raw)
        zf.writestr("archive/manifest.json", json.dumps(manifest))
    buf.seek(0)
    return buf


def manifest_of(root, tensors=(), storages=(), **extra):
    m = {"format": serialization.FORMAT, "version": 1, "byteorder": sys.byteorder}
    m.update(storages=list(storages), tensors=list(tensors), root=root, **extra)
    return m


def tensor_record(**kw):
    r = {"storage": 0, "dtype": "float32", "shape": [2], "stride": [1], "offset": 0}
    r.update(kw)
    return r


FOUR_FLOATS = {0: np.arange(4, dtype=np.float32).tobytes()}


def test_a_reduction_in_the_archive_runs_nothing_unless_weights_only_is_false(monkeypatch):
    calls = []
    monkeypatch.setattr("os.system", lambda *a: calls.append(a) or 0)
    evil = {"$type": "reduce", "call": "os:system", "args": ["echo pwned"]}
    with pytest.raises(serialization.UnpicklingError, match="'os:system', which is not allowed"):
        F.load(archive(manifest_of(evil)))
    assert calls == []
    # weights_only=False trusts the file, as PyTorch's (pickle's) loading does
    assert F.load(archive(manifest_of(evil)), weights_only=False) == 0
    assert calls == [("echo pwned",)]
    not_callable = {"$type": "reduce", "call": "math:pi", "args": []}
    with pytest.raises(serialization.UnpicklingError, match="'math:pi' is not callable"):
        F.load(archive(manifest_of(not_callable)), weights_only=False)


def test_references_to_objects_not_loaded_before_are_refused():
    ref = {"$type": "ref", "memo": 0}
    with pytest.raises(serialization.UnpicklingError, match="not loaded before it"):
        F.load(archive(manifest_of([ref])), weights_only=False)
    twice = {"$type": "reduce", "call": "builtins:list", "args": [], "memo": 0}
    with pytest.raises(serialization.UnpicklingError, match="malformed memo number 0"):
        F.load(archive(manifest_of([twice, twice])), weights_only=False)


def test_a_class_in_the_archive_is_never_imported_or_run(monkeypatch):
    calls = []
    monkeypatch.setattr("os.system", lambda *a: calls.append(a))
    evil = {"$type": "object", "class": "os:system", "state": "echo pwned"}
    with pytest.raises(serialization.UnpicklingError, match="'os:system', which is not allowed"):
        F.load(archive(manifest_of(evil)))
    assert calls == []
    with pytest.raises(serialization.UnpicklingError, match="not allowed"):
        # even with weights_only=False, only classes are rebuilt; functions are refused
        F.load(archive(manifest_of(evil)), weights_only=False)
    assert calls == []


@pytest.mark.parametrize(
    "record, message",
    [
        (tensor_record(shape=[5]), "beyond its storage"),
        (tensor_record(shape=[2, 2], stride=[4, 1]), "beyond its storage"),
        (tensor_record(offset=3), "beyond its storage"),
        (tensor_record(shape=[2**62, 4], stride=[4, 1]), "beyond its storage"),
        (tensor_record(stride=[-1]), "invalid geometry"),
        (tensor_record(shape=[2, 2]), "invalid geometry"),
        (tensor_record(shape=[2.5]), "invalid geometry"),
        (tensor_record(dtype="float128"), "unknown dtype"),
        (tensor_record(dtype="Tensor"), "unknown dtype"),
        (tensor_record(storage=3), "storage id 3 is out of range"),
    ],
)
def test_bad_tensor_records_are_refused(record, message):
    m = manifest_of({"$type": "tensor", "id": 0}, [record], [{"nbytes": 16}])
    with pytest.raises(serialization.UnpicklingError, match=message):
        F.load(archive(m, FOUR_FLOATS))


@pytest.mark.parametrize(
    "root, message",
    [
        ({"$type": "tensor", "id": 7}, "tensor id 7 is out of range"),
        ({"$type": "nonsense"}, "unknown record type"),
        ({"no": "tag"}, "unexpected record"),
        ({"$type": "tuple"}, "malformed 'tuple' record"),
        ({"$type": "dtype", "name": "__class__"}, "unknown dtype"),
        ({"$type": "bytes", "base64": "***"}, "malformed 'bytes'"),
    ],
)
def test_bad_records_are_refused(root, message):
    with pytest.raises(serialization.UnpicklingError, match=message):
        F.load(archive(manifest_of(root, [tensor_record()], [{"nbytes": 16}]), FOUR_FLOATS))


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"items": [["k", 1]]}, "items for an object that is not a dict"),
        ({"list": [1]}, "elements for an object that is not a list"),
        ({"items": [["k"]]}, "malformed 'object' record"),
        ({"args": "x"}, "malformed 'object' record"),
    ],
)
def test_container_contents_must_fit_the_object(extra, message):
    state = {"$type": "dict", "items": [["x", 1]]}
    record = {"$type": "object", "class": "test_serialization:Point", "state": state}
    with (
        serialization.safe_globals([Point]),
        pytest.raises(serialization.UnpicklingError, match=message),
    ):
        F.load(archive(manifest_of({**record, **extra})))


def test_storage_size_and_presence_are_checked():
    root = {"$type": "tensor", "id": 0}
    with pytest.raises(serialization.UnpicklingError, match="holds 16 bytes, manifest says 32"):
        F.load(archive(manifest_of(root, [tensor_record()], [{"nbytes": 32}]), FOUR_FLOATS))
    with pytest.raises(serialization.UnpicklingError, match="is missing"):
        F.load(archive(manifest_of(root, [tensor_record()], [{"nbytes": 16}])))


def test_compressed_records_are_refused_unread():
    m = manifest_of({"$type": "tensor", "id": 0}, [tensor_record()], [{"nbytes": 16}])
    with pytest.raises(serialization.UnpicklingError, match="compressed or encrypted"):
        F.load(archive(m, FOUR_FLOATS, zipfile.ZIP_DEFLATED))


def test_format_and_version_are_checked():
    with pytest.raises(serialization.UnpicklingError, match="wrong format name"):
        F.load(archive({"format": "other", "version": 1}))
    newer = manifest_of(None, version=serialization.VERSION + 1)
    with pytest.raises(serialization.UnpicklingError, match="newer than this flambeau reads"):
        F.load(archive(newer))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/manifest.json", "{not json")
    buf.seek(0)
    with pytest.raises(serialization.UnpicklingError, match="not valid JSON"):
        F.load(buf)


def test_deep_nesting_is_refused_cleanly():
    text = json.dumps(manifest_of(None)).replace("null}", "[" * 100_000 + "]" * 100_000 + "}")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/manifest.json", text)
    buf.seek(0)
    with pytest.raises(serialization.UnpicklingError):
        F.load(buf)


def test_truncated_and_corrupted_files(tmp_path):
    path = tmp_path / "ok.fl"
    F.save({"w": F.arange(4096.0)}, path)
    raw = path.read_bytes()
    for cut in (10, len(raw) // 2, len(raw) - 30):
        with pytest.raises(serialization.UnpicklingError, match="truncated or corrupted"):
            F.load(io.BytesIO(raw[:cut]))
    flipped = bytearray(raw)
    with zipfile.ZipFile(path) as zf:
        start = serialization._data_offset(zf, zf.getinfo("archive/data/0"))
    flipped[start + 100] ^= 0xFF
    with pytest.raises(serialization.UnpicklingError, match="CRC"):
        F.load(io.BytesIO(bytes(flipped)))
    with pytest.raises(serialization.UnpicklingError, match="not a flambeau archive"):
        F.load(io.BytesIO(b"definitely not a zip file"))
    with pytest.raises(FileNotFoundError):
        F.load(tmp_path / "missing.fl")


def test_an_archive_from_the_other_byte_order_loads_correct_values():
    other = "big" if sys.byteorder == "little" else "little"
    values = np.array([1.5, -2.0, 3.25], dtype=np.float64)
    m = manifest_of(
        {"$type": "tensor", "id": 0},
        [tensor_record(dtype="float64", shape=[3])],
        [{"nbytes": 24}],
        byteorder=other,
    )
    out = F.load(archive(m, {0: values.byteswap().tobytes()}))
    assert out.tolist() == values.tolist()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**64), 2**64) | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(field=st.sampled_from(["storage", "dtype", "shape", "stride", "offset"]), value=JSON_VALUES)
def test_fuzzed_tensor_records_raise_cleanly(field, value):
    record = tensor_record(**{field: value})
    m = manifest_of({"$type": "tensor", "id": 0}, [record], [{"nbytes": 16}])
    try:
        out = F.load(archive(m, FOUR_FLOATS))
    except serialization.UnpicklingError:
        return
    assert out.numel() * out.element_size() <= 16


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_fuzzed_bytes_raise_cleanly(data):
    buf = io.BytesIO()
    F.save({"a": F.arange(64.0), "b": [1, "x"]}, buf)
    raw = bytearray(buf.getvalue())
    for _ in range(data.draw(st.integers(1, 8))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    try:
        F.load(io.BytesIO(bytes(raw)))
    except serialization.UnpicklingError:
        pass
