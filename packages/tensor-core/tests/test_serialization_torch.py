"""flambeau.load of what torch.save wrote, and flambeau.save(_use_torch_format=True).

The checkpoints in data/ were written by PyTorch (data/make_torch_checkpoints.py);
their expected values are in data/torch_expected.npz.
"""

from __future__ import annotations

import io
import pickle
import pickletools
import struct
from collections import OrderedDict

import numpy as np
import pytest
from torch_checkpoints import (
    EXPECTED,
    call,
    checkpoint,
    data_starts,
    fixture,
    glob,
    nn_or_skip,
    push,
    read_fixture,
    records,
    rezip,
    storage,
    tensor,
    values,
)

import flambeau as F
from flambeau import serialization

Error = serialization.UnpicklingError


def check_tensors(prefix: str, obj) -> int:
    """Compares every tensor under obj with its expected values; returns how many."""
    if isinstance(obj, F.Tensor):
        np.testing.assert_array_equal(values(obj), EXPECTED[prefix])
        assert obj.dtype != F.bfloat16 or EXPECTED[prefix].dtype == np.float32
        return 1
    if isinstance(obj, dict):
        return sum(check_tensors(f"{prefix}.{k}", v) for k, v in obj.items())
    if isinstance(obj, (list, tuple)) and not isinstance(obj, F.Size):
        return sum(check_tensors(f"{prefix}.{i}", v) for i, v in enumerate(obj))
    return 0


# ---- checkpoints PyTorch wrote ------------------------------------------------------------


def test_a_state_dict_loads_with_its_values_and_metadata():
    sd = F.load(fixture("torch_state_dict.pt"))
    assert type(sd) is OrderedDict
    assert list(sd) == [
        "conv.weight",
        "conv.bias",
        "bn.weight",
        "bn.bias",
        "bn.running_mean",
        "bn.running_var",
        "bn.num_batches_tracked",
        "fc.weight",
        "fc.bias",
    ]
    assert check_tensors("state_dict", sd) == 9
    assert sd["conv.weight"].shape == F.Size([3, 2, 3, 3]) and sd["fc.weight"].shape == (4, 12)
    assert (
        sd["bn.num_batches_tracked"].dtype == F.int64 and sd["bn.num_batches_tracked"].item() == 1
    )
    assert not any(t.requires_grad for t in sd.values())  # state_dict() detaches
    assert sd._metadata["bn"] == {"version": 2}  # OrderedDict attribute, set by BUILD


def test_a_state_dict_fills_a_flambeau_model():
    nn = nn_or_skip()
    model = nn.Sequential()
    model.conv, model.bn, model.fc = (
        nn.Conv2d(2, 3, 3, padding=1),
        nn.BatchNorm2d(3),
        nn.Linear(12, 4),
    )
    model.load_state_dict(F.load(fixture("torch_state_dict.pt")))
    np.testing.assert_array_equal(
        model.bn.running_var.numpy(), EXPECTED["state_dict.bn.running_var"]
    )


def test_every_dtype_loads_exactly():
    out = F.load(fixture("torch_dtypes.pt"))
    assert {name: t.dtype for name, t in out.items()} == {name: getattr(F, name) for name in out}
    assert len(out) == 12
    assert check_tensors("dtypes", out) == 12
    assert out["int64"].tolist() == [-(2**63), 2**63 - 1, 5]


@pytest.mark.parametrize("name", ["torch_nested.pt", "torch_legacy.pt"])
def test_nested_containers_views_and_values(name):
    out = F.load(fixture(name))
    assert check_tensors("nested", out) == 18
    base = out["base"]
    for key in ("row", "col", "t", "tail"):
        assert out[key]._is_view_of(base), key
    assert out["pair"][0]._is_view_of(base) and out["pair"][1][1]["deep"]._is_view_of(base)
    assert out["base_again"] is base  # one object, as pickled
    assert out["t"].stride() == (1, 6) and out["tail"].storage_offset() == 5
    base[2, 1] = -7.0  # the views see writes through the storage
    assert out["row"][1].item() == -7.0 and out["col"][2].item() == -7.0
    assert out["tail"][0, 3].item() == base.view(-1)[8].item()


@pytest.mark.parametrize("name", ["torch_nested.pt", "torch_legacy.pt"])
def test_nested_plain_values_parameters_and_bits(name):
    out = F.load(fixture(name))
    assert out["plain"] == [
        1,
        -(2**40),
        2.5,
        float("inf"),
        None,
        True,
        "text",
        b"\x00\xff",
        {3, 4},
        1 - 2j,
    ]
    assert out["bytearray"] == bytearray(b"ba") and type(out["bytearray"]) is bytearray
    assert out["size"] == F.Size([2, 3]) and type(out["size"]) is F.Size
    assert out["device"] == F.device("cpu") and out["dtype"] is F.float16
    assert type(out["ordered"]) is OrderedDict and list(out["ordered"]) == ["z", "a"]
    assert out["scalar"].dim() == 0 and out["empty"].shape == (0, 3)
    assert out["leaf"].requires_grad and out["leaf"].is_leaf
    assert out["param"].requires_grad and not out["frozen"].requires_grad
    assert out["conj"].tolist() == [1 - 2j, 3 + 4j]  # the conjugate bit, resolved
    assert out["neg"].tolist() == [-1.5, 2.0]
    assert out["with_attr"].note == "kept"  # _rebuild_from_type_v2's state
    nn = nn_or_skip()
    assert type(out["param"]) is nn.Parameter and type(out["frozen"]) is nn.Parameter


def test_mmap_maps_the_storages_copy_on_write(tmp_path):
    path = tmp_path / "nested.pt"
    path.write_bytes(read_fixture("torch_nested.pt"))
    out = F.load(path, mmap=True)
    assert check_tensors("nested", out) == 18 and out["row"]._is_view_of(out["base"])
    out["base"][0, 0] = 99.0
    assert F.load(path)["base"][0, 0].item() == 0.0  # the file is untouched
    with pytest.raises(Error, match="mmap=True needs a file in a ZIP format"):
        F.load(fixture("torch_legacy.pt"), mmap=True)


def test_file_objects_and_paths_load_alike():
    raw = read_fixture("torch_dtypes.pt")
    for f in (io.BytesIO(raw), fixture("torch_dtypes.pt")):
        assert F.equal(F.load(f)["int32"], F.tensor([-(2**31), 2**31 - 1, 0], dtype=F.int32))
    legacy = read_fixture("torch_legacy.pt")
    assert F.load(io.BytesIO(legacy))["base"].shape == (4, 6)


def test_map_location_forms():
    path = fixture("torch_state_dict.pt")
    assert F.load(path, map_location="cpu")["fc.bias"].device == F.device("cpu")
    assert F.load(path, map_location=F.device("cpu"))["fc.bias"].device == F.device("cpu")
    assert F.load(path, map_location={"cpu": "cpu"})["fc.bias"].device == F.device("cpu")
    seen = []

    def keep(storage, location):  # torch's callable form: given each storage once
        seen.append((storage.dim(), location))
        return storage

    out = F.load(fixture("torch_nested.pt"), map_location=keep)
    assert out["row"]._is_view_of(out["base"])
    assert all(d == 1 and where == "cpu" for d, where in seen) and len(seen) == 10
    assert F.load(path, map_location=lambda s, loc: None)["fc.bias"].shape == (4,)
    doubled = F.load(path, map_location=lambda s, loc: s * 2)["fc.bias"]
    np.testing.assert_array_equal(doubled.numpy(), EXPECTED["state_dict.fc.bias"] * 2)
    with pytest.raises(ZeroDivisionError):  # the callable's own error comes through
        F.load(path, map_location=lambda s, loc: 1 / 0)
    with pytest.raises(Error, match="map_location returned something other"):
        F.load(path, map_location=lambda s, loc: "cpu")
    with pytest.raises(TypeError, match="map_location should be"):
        F.load(path, map_location=3.5)


def test_a_tensor_saved_on_a_device_without_a_backend_needs_map_location():
    f = checkpoint(tensor(location="cuda:0"))
    with pytest.raises(Error, match="saved on 'cuda:0'.*pass map_location"):
        F.load(f)
    f.seek(0)
    assert F.load(f, map_location="cpu").tolist() == [0.0, 1.0, 2.0, 3.0]
    f.seek(0)
    assert F.load(f, map_location={"cuda:0": "cpu"}).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_weights_only_none_means_true():
    f = checkpoint(call(glob("os", "getcwd")))
    with pytest.raises(Error, match="os.getcwd, which is not allowed"):
        F.load(f, weights_only=None)


# ---- what the pickle may name ---------------------------------------------------------------


def test_other_storage_and_rebuild_forms():
    untyped = b"".join(
        [
            glob("torch._utils", "_rebuild_tensor_v3"),
            b"(",
            storage("0", "UntypedStorage", 16, module="torch.storage"),
            push(1),
            push((2,)),
            push((1,)),
            push(False),
            call(glob("collections", "OrderedDict")),
            glob("torch", "int32"),
            b"tR",
        ]
    )
    ints = np.array([5, 1, 2, 9], dtype=np.int32).tobytes()
    assert F.load(checkpoint(untyped, {"0": ints})).tolist() == [1, 2]
    old_cuda = tensor(stype="FloatStorage", module="torch.cuda")  # how old GPU checkpoints name it
    assert F.load(checkpoint(old_cuda)).tolist() == [0.0, 1.0, 2.0, 3.0]
    v1 = call(glob("torch._utils", "_rebuild_tensor"), storage(), push(2), push((2,)), push((1,)))
    assert F.load(checkpoint(v1)).tolist() == [2.0, 3.0]
    param = call(
        glob("torch._utils", "_rebuild_parameter_with_state"),
        tensor(),
        push(True),
        call(glob("collections", "OrderedDict")),
        push({"tag": 3}),
    )
    p = F.load(checkpoint(param))
    assert p.requires_grad and p.tag == 3
    counter = call(glob("collections", "Counter"), push({"a": 2}))
    assert F.load(checkpoint(counter))["a"] == 2


def test_a_storage_file_loads_as_its_flat_tensor():
    assert F.load(checkpoint(storage("0", "FloatStorage", 4))).tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    "body, message",
    [
        (call(glob("os", "system"), push("echo pwned")), "os.system, which is not allowed"),
        (call(glob("builtins", "eval"), push("1")), "builtins.eval, which is not allowed"),
        (call(glob("__builtin__", "getattr"), push(1), push("x")), "builtins.getattr, which"),
        (glob("torch.nn.modules.linear", "Linear"), "PyTorch object that flambeau cannot rebuild"),
        (glob("torch._utils", "_rebuild_qtensor"), "a quantized tensor, which flambeau lacks"),
        (glob("torch._utils", "_rebuild_sparse_tensor"), "a sparse tensor"),
        (glob("torch", "uint16"), "the dtype torch.uint16, which flambeau lacks"),
        (glob("torch", "float8_e4m3fn"), "the dtype torch.float8_e4m3fn, which flambeau lacks"),
        (storage("0", "QInt8Storage", 4), "torch.QInt8Storage, whose element type"),
        (b"(" + push("module") + push(("M", "m.py", "src")) + b"tQ", "whole PyTorch module"),
    ],
)
def test_names_outside_the_allow_list_are_refused(body, message, monkeypatch):
    calls = []
    monkeypatch.setattr("os.system", lambda *a: calls.append(a))
    with pytest.raises(Error, match=message):
        F.load(checkpoint(body))
    assert calls == []
    with pytest.raises(pickle.UnpicklingError):  # as torch.load raises
        F.load(checkpoint(body))


def test_reduce_and_build_only_reach_what_the_list_allows():
    # A dtype or a Size class is found, but calling a dtype or building onto one is refused.
    with pytest.raises(Error, match="malformed pickle"):
        F.load(checkpoint(call(glob("torch", "float32"))))
    build_on_dtype = glob("torch", "float32") + push({"x": 1}) + b"b"
    with pytest.raises(Error, match="BUILD of a dtype is not allowed"):
        F.load(checkpoint(build_on_dtype))
    build_dunder = call(glob("collections", "OrderedDict")) + push({"__class__": 1}) + b"b"
    with pytest.raises(Error, match="BUILD of a OrderedDict is not allowed"):
        F.load(checkpoint(build_dunder))
    newobj = glob("collections", "OrderedDict") + push(()) + b"\x81"
    with pytest.raises(Error, match="opcode NEWOBJ is not allowed"):
        F.load(checkpoint(newobj))
    inst = b"(" + b"icollections\nOrderedDict\n"
    with pytest.raises(Error, match="opcode INST is not allowed"):
        F.load(checkpoint(inst))
    # a rebuild function is callable only with a storage and integer geometry
    fake = call(glob("torch._utils", "_rebuild_tensor_v2"), push("0"), push(0), push((4,)))
    with pytest.raises(Error, match="malformed pickle|storage is a str"):
        F.load(checkpoint(fake))


class Config:
    def __init__(self, lr):
        self.lr = lr


def test_safe_globals_and_weights_only_false_for_other_classes():
    body = glob(__name__, "Config") + push((0.5,)) + b"\x81" + push({"lr": 0.5}) + b"b"
    with pytest.raises(Error, match=f"{__name__}.Config, which is not allowed"):
        F.load(checkpoint(body))
    with serialization.safe_globals([Config]):
        assert F.load(checkpoint(body)).lr == 0.5
    assert F.load(checkpoint(body), weights_only=False).lr == 0.5
    with serialization.safe_globals([(Config, "old_module.Settings")]):  # a renamed class
        assert F.load(checkpoint(glob("old_module", "Settings"))) is Config
    assert (Config, "old_module.Settings") not in serialization.get_safe_globals()
    with pytest.raises(Error, match="PyTorch object"):  # torch's own names: never imported
        F.load(checkpoint(glob("torch.nn", "Module")), weights_only=False)


def test_torchscript_archives_are_refused():
    f = checkpoint(push(1), **{"constants.pkl": pickle.dumps(())})
    with pytest.raises(Error, match="TorchScript"):
        F.load(f)


# ---- byte order ---------------------------------------------------------------------------------


_ELEMENT = {"Float": 4, "Double": 8, "Half": 2, "BFloat16": 2, "Long": 8, "Int": 4, "Short": 2}
_ELEMENT.update(ComplexFloat=4, ComplexDouble=8)  # each half of a complex number


def big_endian(name: str) -> io.BytesIO:
    """The fixture as a big-endian machine writes it: storages byte-swapped, byteorder 'big'."""
    recs = records(read_fixture(name))
    prefix = next(iter(recs)).split("/")[0]
    # storage key -> the size of its elements, read from the persistent ids of the pickle:
    # ('storage', <a GLOBAL of the type, or a BINGET of it>, <the key>, ...)
    element, memo, last = {}, {}, None  # last: the name the previous opcode pushed
    for op, arg, _ in pickletools.genops(recs[f"{prefix}/data.pkl"]):
        if op.name in ("BINPUT", "LONG_BINPUT"):
            memo[arg] = last
            continue
        if op.name == "BINUNICODE" and last is not None and last.endswith("Storage"):
            element.setdefault(arg, _ELEMENT.get(last.removesuffix("Storage"), 1))
        if op.name == "GLOBAL":
            last = arg.split()[-1]
        elif op.name in ("BINGET", "LONG_BINGET"):
            last = memo.get(arg)
        else:
            last = arg if op.name == "BINUNICODE" else None
    out = {}
    for name, data in recs.items():
        n = element.get(name.rsplit("/", 1)[-1], 1) if "/data/" in name else 1
        if n > 1:
            data = np.frombuffer(data, np.uint8).reshape(-1, n)[:, ::-1].tobytes()
        out[name] = b"big" if name == f"{prefix}/byteorder" else data
    return rezip(out)


@pytest.mark.parametrize("name", ["torch_dtypes.pt", "torch_state_dict.pt"])
def test_a_checkpoint_of_the_other_byte_order_loads_correct_values(name):
    out = F.load(big_endian(name))
    assert check_tensors(name.removeprefix("torch_").removesuffix(".pt"), out) == len(out)


def test_an_untyped_storage_of_the_other_byte_order_is_swapped_by_its_tensor():
    body = b"".join(
        [
            glob("torch._utils", "_rebuild_tensor_v3"),
            b"(",
            storage("0", "UntypedStorage", 8, module="torch"),
            push(0),
            push((2,)),
            push((1,)),
            push(False),
            call(glob("collections", "OrderedDict")),
            glob("torch", "int32"),
            b"tR",
        ]
    )
    data = struct.pack(">ii", 7, -3)
    assert F.load(checkpoint(body, {"0": data}, byteorder=b"big")).tolist() == [7, -3]
    with pytest.raises(Error, match="unknown byte order"):
        F.load(checkpoint(body, {"0": data}, byteorder=b"middle"))


# ---- writing PyTorch's format -------------------------------------------------------------------


def written(obj) -> bytes:
    buf = io.BytesIO()
    F.save(obj, buf, _use_torch_format=True)
    return buf.getvalue()


def test_torch_format_round_trips_every_dtype_and_shares_views():
    out = F.load(fixture("torch_dtypes.pt"))
    again = F.load(io.BytesIO(written(out)))
    assert check_tensors("dtypes", again) == 12
    a = F.arange(24.0).reshape(4, 6)
    obj = {"a": a, "row": a[1], "t": a.t(), "again": a, "nested": [(a[:, 2], {"k": a[3, 1:]})]}
    out = F.load(io.BytesIO(written(obj)))
    assert out["row"]._is_view_of(out["a"]) and out["t"].stride() == (1, 6)
    assert out["again"] is out["a"] and out["nested"][0][1]["k"]._is_view_of(out["a"])
    assert out["nested"][0][0].tolist() == a[:, 2].tolist()


def test_torch_format_plain_values_and_records():
    obj = OrderedDict(
        n=None,
        b=[True, False],
        i=[0, 255, 65535, -1, 2**31, -(2**70)],
        f=[1.5, float("-inf")],
        s="é\u20ac",
        by=b"\x00\xff",
        ba=bytearray(b"x"),
        set={1, 2},
        c=2 - 1j,
        size=F.Size([3]),
        dev=F.device("cpu"),
        dt=F.bfloat16,
        long=list(range(2500)),
        t=(1, 2, 3, 4),
    )
    obj._metadata = {"": {"version": 1}}
    raw = written(obj)
    out = F.load(io.BytesIO(raw))
    assert out == obj and type(out) is OrderedDict and out._metadata == obj._metadata
    names = list(records(raw))
    assert names[0] == "archive/data.pkl" and "archive/version" in names
    assert records(raw)["archive/byteorder"] in (b"little", b"big")
    starts = data_starts(io.BytesIO(written({"w": F.ones(5), "v": F.zeros(3)})))
    assert all(start % 64 == 0 for start in starts.values())  # for torch.load(mmap=True)


def test_torch_format_parameters_and_requires_grad():
    nn = nn_or_skip()
    model = nn.Linear(3, 2)
    out = F.load(io.BytesIO(written({"w": model.weight, "g": F.ones(2, requires_grad=True)})))
    assert type(out["w"]) is nn.Parameter and out["w"].requires_grad
    np.testing.assert_array_equal(out["w"].detach().numpy(), model.weight.detach().numpy())
    assert out["g"].requires_grad and out["g"].is_leaf


def test_torch_format_refuses_what_torch_could_not_load():
    with pytest.raises(TypeError, match="cannot save an object of type Config"):
        written({"c": Config(1)})
    with pytest.raises(TypeError, match="frozenset"):
        written(frozenset([1]))
    a = F.arange(4, dtype=F.int32)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        written([a, a.view(F.uint8)])


def test_flambeau_format_is_still_the_default():
    buf = io.BytesIO()
    F.save({"x": F.ones(2)}, buf)
    assert "archive/manifest.json" in records(buf.getvalue())
    buf.seek(0)
    assert F.load(buf)["x"].tolist() == [1.0, 1.0]


def test_storages_of_the_fixture_are_aligned_for_mmap():
    starts = data_starts(fixture("torch_state_dict.pt"))
    assert len(starts) == 9 and all(start % 64 == 0 for start in starts.values())
