"""flambeau.safetensors: files that safetensors wrote, round trips, and hostile files."""

from __future__ import annotations

import json
import random
import struct
import sys
import tracemalloc

import numpy as np
import pytest
from torch_checkpoints import EXPECTED, fixture, nn_or_skip, read_fixture, values

import flambeau as F
from flambeau import safetensors as st

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16"]
DTYPES += ["float32", "float64", "complex64"]


def sample(dtype: str) -> F.Tensor:
    base = F.tensor([[0.0, -1.5, 2.25], [65504.0, -0.0, 7.0]])
    if dtype == "complex64":
        return (base + 1j * base.flip(1)).to(F.complex64)
    return base.to(getattr(F, dtype))


def assert_same(a: F.Tensor, b: F.Tensor):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(values(a), values(b))


# ---- files written by the safetensors package --------------------------------------------------


def test_a_file_written_by_safetensors_torch_loads_exactly():
    out = st.load_file(fixture("torch_model.safetensors"))
    assert len(out) == 20
    for name, t in out.items():
        key = f"state_dict.{name[6:]}" if name.startswith("state.") else f"dtypes.{name}"
        np.testing.assert_array_equal(values(t), EXPECTED[key])
        assert t.dtype == getattr(F, name) if not name.startswith("state.") else True
    assert out["state.bn.num_batches_tracked"].shape == () and out["bfloat16"].dtype == F.bfloat16
    with st.safe_open(fixture("torch_model.safetensors"), framework="pt") as f:
        assert f.metadata() == {"format": "pt"} and f.keys() == sorted(out)
        assert f.get_slice("state.conv.weight").get_shape() == [3, 2, 3, 3]
        assert f.get_slice("bfloat16").get_dtype() == "BF16"
        assert_same(f.get_slice("state.fc.weight")[1:3], out["state.fc.weight"][1:3])
        with pytest.raises(st.SafetensorError, match="does not contain tensor nope"):
            f.get_tensor("nope")


def test_flambeau_load_reads_safetensors_paths_as_torch_load_does():
    out = F.load(fixture("torch_model.safetensors"))
    assert_same(out["int64"], st.load_file(fixture("torch_model.safetensors"))["int64"])
    assert F.load(fixture("torch_model.safetensors"), map_location="cpu")["bool"].dtype == F.bool
    with pytest.raises(RuntimeError, match="dict or callable map_location is not supported"):
        F.load(fixture("torch_model.safetensors"), map_location={"cpu": "cpu"})


def test_load_of_bytes_copies_and_load_file_maps(tmp_path):
    raw = read_fixture("torch_model.safetensors")
    out = st.load(raw)
    assert_same(out["float64"], st.load_file(fixture("torch_model.safetensors"))["float64"])
    out["float32"][0] = 5.0  # a copy: writable, and the bytes are untouched
    assert st.load(raw)["float32"][0].item() == 0.0
    big = {"w": F.arange(2**21, dtype=F.float32)}  # 8 MiB
    pytest.importorskip("safetensors")
    st.save_file(big, tmp_path / "big.safetensors")
    tracemalloc.start()
    try:
        loaded = st.load_file(tmp_path / "big.safetensors")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20, peak  # mapped, not read
    loaded["w"][3] = -1.0  # copy-on-write: the file keeps its bytes
    assert st.load_file(tmp_path / "big.safetensors")["w"][3].item() == 3.0


def test_files_of_the_safetensors_numpy_api_load():
    numpy_api = pytest.importorskip("safetensors.numpy")
    arrays = {"a": np.arange(6, dtype=np.int16).reshape(2, 3), "b": np.array([True, False])}
    arrays["c"] = np.array([1 + 2j], dtype=np.complex64)
    out = st.load(numpy_api.save(arrays, metadata={"k": "v"}))
    for k, a in arrays.items():
        np.testing.assert_array_equal(out[k].numpy(), a)


def unaligned_file() -> bytes:
    """A float16 of 3 elements then a float32: the float32 starts at byte 6 of the buffer."""
    header = {
        "h": {"dtype": "F16", "shape": [3], "data_offsets": [0, 6]},
        "f": {"dtype": "F32", "shape": [2], "data_offsets": [6, 14]},
    }
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    data = np.array([1, 2, 3], np.float16).tobytes() + np.array([4.5, -1], np.float32).tobytes()
    return struct.pack("<Q", len(text)) + text + data


def test_unaligned_tensors_are_copied_with_the_right_values(tmp_path):
    (tmp_path / "u.safetensors").write_bytes(unaligned_file())
    for out in (st.load(unaligned_file()), st.load_file(tmp_path / "u.safetensors")):
        assert out["h"].tolist() == [1.0, 2.0, 3.0] and out["f"].tolist() == [4.5, -1.0]


# ---- writing ----------------------------------------------------------------------------------


def test_every_dtype_round_trips_through_the_package(tmp_path):
    safetensors = pytest.importorskip("safetensors")
    tensors = {d: sample(d) for d in DTYPES}
    tensors["scalar"], tensors["empty"] = F.tensor(3.5), F.empty(0, 4, dtype=F.int32)
    tensors["bf16_specials"] = F.tensor([float("inf"), -3.0, 1e30]).to(F.bfloat16)
    raw = st.save(tensors, metadata={"format": "pt"})
    st.save_file(tensors, tmp_path / "t.safetensors", metadata={"format": "pt"})
    assert (tmp_path / "t.safetensors").read_bytes() == raw
    for out in (st.load(raw), st.load_file(tmp_path / "t.safetensors")):
        assert sorted(out) == sorted(tensors)
        for k, t in tensors.items():
            assert_same(out[k], t)
    # the package reads what was written, bfloat16 included (as raw bytes)
    flat = dict(safetensors.deserialize(raw))
    assert flat["bfloat16"]["dtype"] == "BF16" and flat["int64"]["shape"] == [2, 3]
    bits = np.frombuffer(bytes(flat["bfloat16"]["data"]), np.uint16)
    np.testing.assert_array_equal(
        bits, sample("bfloat16").view(F.int16).numpy().view(np.uint16).ravel()
    )
    with safetensors.safe_open(tmp_path / "t.safetensors", framework="numpy") as f:
        np.testing.assert_array_equal(f.get_tensor("float64"), sample("float64").numpy())
        assert f.metadata() == {"format": "pt"}


def test_saving_refuses_what_safetensors_torch_refuses():
    pytest.importorskip("safetensors")
    a = F.arange(6.0)
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        st.save({"a": a, "b": a[:3]})
    with pytest.raises(RuntimeError, match="share memory"):
        st.save({"a": a, "b": a})
    st.save({"lo": a[:3].clone(), "hi": a[3:].clone()})
    with pytest.raises(ValueError, match="non contiguous tensor: `t`"):
        st.save({"t": a.view(2, 3).t()})
    with pytest.raises(ValueError, match="Expected a dict"):
        st.save([a])
    with pytest.raises(ValueError, match="Key `x` is invalid, expected flambeau.Tensor"):
        st.save({"x": np.zeros(2)})
    with pytest.raises(ValueError, match="no dtype for `c` of flambeau.complex128"):
        st.save({"c": F.zeros(2, dtype=F.complex128)})
    with pytest.raises(TypeError):
        st.save({"a": F.ones(1)}, metadata={"k": 1})


def test_non_overlapping_views_of_one_storage_are_not_shared():
    pytest.importorskip("safetensors")
    a = F.arange(6.0)
    out = st.load(st.save({"lo": a[:3], "hi": a[3:]}))  # disjoint: allowed, as in safetensors
    assert out["lo"].tolist() == [0.0, 1.0, 2.0] and out["hi"].tolist() == [3.0, 4.0, 5.0]


def test_a_missing_package_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)
    with pytest.raises(ImportError, match="pip install safetensors"):
        st.save({"a": F.ones(1)})
    assert st.load(unaligned_file())["f"].tolist() == [4.5, -1.0]  # reading needs no package


def test_save_model_and_load_model_keep_tied_weights_once(tmp_path):
    pytest.importorskip("safetensors")
    nn = nn_or_skip()
    model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    model[1].weight = model[0].weight  # tied
    st.save_model(model, tmp_path / "m.safetensors")
    with st.safe_open(tmp_path / "m.safetensors") as f:
        assert f.keys() == ["0.bias", "0.weight", "1.bias"]
        assert f.metadata() == {"1.weight": "0.weight"}
    other = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    other[1].weight = other[0].weight
    assert st.load_model(other, tmp_path / "m.safetensors") == ([], [])
    assert_same(other[1].weight.detach(), model[0].weight.detach())
    assert_same(other[1].bias.detach(), model[1].bias.detach())
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "1.weight"'):
        st.load_model(nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3)), tmp_path / "m.safetensors")


# ---- hostile files ----------------------------------------------------------------------------


def file_of(header, data=b"", raw_header: bytes | None = None) -> bytes:
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


F32 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"", "header too small"),
        (b"\x01\x00", "header too small"),
        (struct.pack("<Q", 2**40) + b"{}", "header too large"),
        (struct.pack("<Q", 50) + b"{}", "runs past the end of the file"),
        (file_of(None, raw_header=b"{nope"), "not valid JSON"),
        (file_of(None, raw_header=b'{"a": 1, "a": 2}'), "not valid JSON"),
        (file_of(None, raw_header=b'{"a": NaN}'), "not valid JSON"),
        (file_of(None, raw_header=b"\xff\xfe"), "not valid JSON"),
        (file_of(None, raw_header=b"[" * 100_000 + b"]" * 100_000), "not valid JSON"),
        (file_of({"a": {**F32, "dtype": ["F32"]}}, bytes(8)), "dtype \\['F32'\\], unknown"),
        (file_of([1]), "not a JSON object"),
        (file_of({"a": 3}), "entry 'a' is not a JSON object"),
        (file_of({"a": {**F32, "dtype": "F128"}}, bytes(8)), "dtype 'F128', unknown"),
        (file_of({"a": {**F32, "shape": [-2]}}, bytes(8)), "invalid shape"),
        (file_of({"a": {**F32, "shape": [2**62, 2**62]}}, bytes(8)), "holds 8 bytes, not"),
        (file_of({"a": {**F32, "data_offsets": [0]}}, bytes(8)), "invalid data_offsets"),
        (file_of({"a": {**F32, "data_offsets": [0, 12]}}, bytes(8)), "holds 12 bytes"),
        (file_of({"a": F32}, bytes(4)), "not fully covered"),
        (file_of({"a": F32}, bytes(12)), "not fully covered"),
        (file_of({"a": F32, "b": F32}, bytes(16)), "tensor 'b' has invalid offsets"),
        (file_of({"a": {**F32, "data_offsets": [4, 12]}}, bytes(12)), "invalid offsets"),
        (file_of({"a": F32, "__metadata__": {"k": 1}}, bytes(8)), "mapping of strings"),
        (
            file_of({"a": {**F32, "dtype": "F6_E2M3", "shape": [4]}}, bytes(8)),
            "unknown to flambeau",
        ),
    ],
)
def test_malformed_files_raise_safetensor_error(raw, message, tmp_path):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(raw)
    with pytest.raises(st.SafetensorError, match=message):
        st.load(raw)
    with pytest.raises(st.SafetensorError, match=message):
        st.load_file(path)


def test_fuzzed_files_load_or_raise_safetensor_error():
    raw = read_fixture("torch_model.safetensors")
    rng = random.Random(5)
    refused = 0
    for _ in range(2000):
        bad = bytearray(raw)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(min(len(bad), 8 + 700))  # mostly the header
            bad[at] = rng.randrange(256)
        try:
            st.load(bytes(bad))
        except st.SafetensorError:
            refused += 1
    assert refused > 500


def test_safe_open_refuses_other_frameworks():
    with pytest.raises(ValueError, match="not 'numpy'"):
        st.safe_open(fixture("torch_model.safetensors"), framework="numpy")
