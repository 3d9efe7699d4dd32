"""load_lua on Torch7 binary streams built by hand from the format's description
(torch7 File.lua: int32 type tags, float64 numbers, int32-length strings, referenced
tables and torch objects, tensors as sizes/strides/1-based offset + storage)."""

from __future__ import annotations

import struct

import pytest

import flambeau
from flambeau.legacy import T7ReaderError, load_lua, nn


class T7:
    """A tiny writer of the Torch7 binary format (longs are 8 bytes)."""

    def __init__(self, long_size=8):
        self.parts = []
        self.next_index = 1
        self.lf = "<q" if long_size == 8 else "<i"

    def bytes(self):
        return b"".join(self.parts)

    def i(self, v):
        self.parts.append(struct.pack("<i", v))
        return self

    def long(self, v):
        self.parts.append(struct.pack(self.lf, v))
        return self

    def raw_string(self, s):
        b = s.encode() if isinstance(s, str) else s
        return self.i(len(b)).raw(b)

    def raw(self, b):
        self.parts.append(b)
        return self

    def nil(self):
        return self.i(0)

    def number(self, v):
        self.i(1)
        self.parts.append(struct.pack("<d", v))
        return self

    def boolean(self, v):
        return self.i(5).i(1 if v else 0)

    def string(self, s):
        return self.i(2).raw_string(s)

    def index(self):
        n = self.next_index
        self.next_index += 1
        return n

    def table(self, items, index=None):
        """items: list of (write_key, write_value) callables."""
        self.i(3).i(self.index() if index is None else index).i(len(items))
        for k, v in items:
            k(self)
            v(self)
        return self

    def ref(self, tag, index):
        return self.i(tag).i(index)

    def torch_header(self, class_name, index=None):
        return (
            self.i(4)
            .i(self.index() if index is None else index)
            .raw_string("V 1")
            .raw_string(class_name)
        )

    def storage(self, kind, fmt, values, index=None):
        self.torch_header(f"torch.{kind}Storage", index).long(len(values))
        self.parts.append(struct.pack("<" + fmt * len(values), *values))
        return self

    def tensor(self, kind, size, stride, offset, storage_writer):
        self.torch_header(f"torch.{kind}Tensor").i(len(size))
        for s in size:
            self.long(s)
        for s in stride:
            self.long(s)
        self.long(offset + 1)
        storage_writer(self)
        return self

    def module(self, class_name, fields):
        self.torch_header(class_name)
        return self.table(fields)


def S(s):
    return lambda w: w.string(s)


def N(v):
    return lambda w: w.number(v)


def test_primitives():
    assert load_lua(T7().number(2.5).bytes()) == 2.5
    assert load_lua(T7().number(3).bytes()) == 3
    assert load_lua(T7().string("héllo").bytes()) == "héllo"
    assert load_lua(T7().boolean(True).bytes()) is True
    assert load_lua(T7().nil().bytes()) is None


def test_tables_arrays_and_references():
    w = T7()
    # {1: "a", 2: {x = 1}, 3: <same table as 2>}
    w.i(3).i(1).i(3)
    w.number(1).string("a")
    w.number(2).table([(S("x"), N(1))], index=2)
    w.number(3).ref(3, 2)
    out = load_lua(w.bytes())
    assert out[0] == "a" and out[1] == {"x": 1} and out[2] is out[1]
    w = T7()
    w.table([(S("name"), S("t")), (N(7), lambda x: x.boolean(False))])
    assert load_lua(w.bytes()) == {"name": "t", 7: False}


def test_self_referencing_table():
    w = T7()
    w.i(3).i(1).i(1).string("me").ref(3, 1)
    out = load_lua(w.bytes())
    assert out["me"] is out


@pytest.mark.parametrize("kind,fmt,dtype", [
    ("Double", "d", flambeau.float64), ("Float", "f", flambeau.float32),
    ("Half", "e", flambeau.float16), ("Byte", "B", flambeau.uint8), ("Char", "b", flambeau.int8),
    ("Short", "h", flambeau.int16), ("Int", "i", flambeau.int32), ("Long", "q", flambeau.int64),
])  # fmt: skip
def test_tensors_and_storages_of_every_type(kind, fmt, dtype):
    values = [1, 2, 3, 4, 5, 6, 7]
    w = T7().tensor(kind, [2, 3], [3, 1], 1, lambda x: x.storage(kind, fmt, values))
    t = load_lua(w.bytes())
    assert t.dtype == dtype and t.shape == (2, 3)
    assert t.tolist() == [[2, 3, 4], [5, 6, 7]]
    s = load_lua(T7().storage(kind, fmt, values).bytes())
    assert s.dtype == dtype and s.tolist() == values


def test_views_share_their_storage_and_long_size_4():
    w = T7(long_size=4)
    w.i(3).i(1).i(2)
    w.next_index = 2  # reference 1 is the outer table
    w.number(1).tensor(
        "Float", [2], [2], 0, lambda x: x.storage("Float", "f", [1, 2, 3, 4], index=9)
    )
    w.number(2).tensor("Float", [2, 2], [1, 2], 0, lambda x: x.ref(4, 9))
    a, b = load_lua(w.bytes(), long_size=4)
    assert a.tolist() == [1.0, 3.0] and b.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    a[0] = 10
    assert float(b[0, 0]) == 10  # one storage


def test_nn_modules_load_as_legacy_modules():
    weight = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    w = T7()
    w.module("nn.Sequential", [
        (S("modules"), lambda x: x.table([
            (N(1), lambda y: y.module("nn.Linear", [
                (S("weight"), lambda z: z.tensor("Double", [2, 3], [3, 1], 0,
                                                 lambda s: s.storage("Double", "d", weight))),
                (S("bias"), lambda z: z.tensor("Double", [2], [1], 0,
                                               lambda s: s.storage("Double", "d", [1, -1]))),
                (S("gradWeight"), lambda z: z.tensor("Double", [2, 3], [3, 1], 0,
                                                     lambda s: s.storage("Double", "d", [0] * 6))),
                (S("gradBias"), lambda z: z.tensor("Double", [2], [1], 0,
                                                   lambda s: s.storage("Double", "d", [0, 0]))),
                (S("train"), lambda z: z.boolean(True)),
            ])),
            (N(2), lambda y: y.module("nn.Tanh", [])),
            (N(3), lambda y: y.module("nn.JoinTable", [(S("dimension"), N(2))])),
            (N(4), lambda y: y.module("nn.SpatialMaxPooling", [
                (S("kW"), N(2)), (S("kH"), N(2)), (S("dW"), N(2)), (S("dH"), N(2)),
                (S("padW"), N(0)), (S("padH"), N(0)), (S("ceil_mode"), lambda z: z.boolean(True)),
            ])),
            (N(5), lambda y: y.module("nn.HardShrink", [(S("lambda"), N(0.25))])),
            (N(6), lambda y: y.module("nn.SomethingElse", [(S("x"), N(1))])),
        ])),
        (S("train"), lambda x: x.boolean(False)),
    ])  # fmt: skip
    m = load_lua(w.bytes())
    assert isinstance(m, nn.Sequential) and len(m.modules) == 6 and m.train is False
    lin = m.modules[0]
    assert isinstance(lin, nn.Linear) and lin.weight.dtype == flambeau.float64
    y = lin.forward(flambeau.tensor([1.0, 0.0, -1.0], dtype=flambeau.float64))
    assert flambeau.allclose(y, flambeau.tensor([0.8, -1.2], dtype=flambeau.float64))
    assert isinstance(m.modules[1], nn.Tanh)
    assert m.modules[2].dimension == 1  # 1-based in Lua, 0-based here
    pool = m.modules[3]
    assert pool.ceil_mode and pool.forward(flambeau.randn(1, 3, 3)).shape == (1, 2, 2)
    assert m.modules[4].lambd == 0.25
    other = m.modules[5]
    assert other.torch_typename == "nn.SomethingElse" and other.x == 1


def test_functions_are_kept_not_run():
    w = T7().i(6).i(4).raw(b"\x1bLua").table([])
    f = load_lua(w.bytes())
    assert f.bytecode == b"\x1bLua"


@pytest.mark.parametrize("data,match", [
    (b"", "truncated"),
    (struct.pack("<i", 2) + struct.pack("<i", 100) + b"abc", "truncated"),
    (struct.pack("<i", 42), "unknown type tag"),
    (struct.pack("<ii", 2, -5), "negative length"),
    (struct.pack("<iii", 3, 1, 2**30), "invalid or truncated table"),
    (T7().torch_header("torch.FloatStorage").long(2**40).bytes(), "invalid or truncated"),
    (T7().torch_header("torch.QuuxTensor").bytes(), "unsupported Torch7 type"),
    (T7().tensor("Float", [3], [1], 2, lambda x: x.storage("Float", "f", [1, 2, 3])).bytes(),
     "overruns its storage"),
    (T7().tensor("Float", [2], [1], 0, lambda x: x.storage("Double", "d", [1, 2])).bytes(),
     "matching storage"),
    (T7().tensor("Float", [2], [-1], 1, lambda x: x.storage("Float", "f", [1, 2])).bytes(),
     "negative"),
])  # fmt: skip
def test_hostile_or_truncated_data_raises(data, match):
    with pytest.raises(T7ReaderError, match=match):
        load_lua(data)


def test_deep_nesting_is_refused():
    data = b"".join(struct.pack("<iii", 3, i + 1, 1) + struct.pack("<id", 1, 1.0)
                    for i in range(1000))  # fmt: skip
    with pytest.raises(T7ReaderError, match="nested"):
        load_lua(data)


def test_reads_files_and_file_objects(tmp_path):
    p = tmp_path / "x.t7"
    p.write_bytes(T7().string("ok").bytes())
    assert load_lua(p) == "ok" and load_lua(str(p)) == "ok"
    with open(p, "rb") as f:
        assert load_lua(f) == "ok"
