"""PyTorch's dtypes of limited support: uint16/32/64, the 8-bit floats, complex32 and the
shell dtypes. They are stored, viewed, copied and converted; few operators compute with
them, and those that do not raise NotImplementedError, as in PyTorch."""

import math

import numpy as np
import pytest

import flambeau as F

# name: (is_floating_point, is_signed, is_complex, itemsize), as PyTorch 2.13 reports them.
ATTRIBUTES = {
    "uint16": (False, False, False, 2),
    "uint32": (False, False, False, 4),
    "uint64": (False, False, False, 8),
    "float8_e4m3fn": (True, True, False, 1),
    "float8_e5m2": (True, True, False, 1),
    "float8_e4m3fnuz": (True, True, False, 1),
    "float8_e5m2fnuz": (True, True, False, 1),
    "float8_e8m0fnu": (True, False, False, 1),
    "complex32": (False, True, True, 4),
    "float4_e2m1fn_x2": (True, True, False, 1),
    **{f"uint{b}": (False, False, False, 1) for b in range(1, 8)},
    **{f"int{b}": (False, True, False, 1) for b in range(1, 8)},
    "bits1x8": (False, False, False, 1),
    "bits2x4": (False, False, False, 1),
    "bits4x2": (False, False, False, 1),
    "bits8": (False, False, False, 1),
    "bits16": (False, False, False, 2),
}
SHELLS = ["float4_e2m1fn_x2", *(f"uint{b}" for b in range(1, 8))]
SHELLS += [*(f"int{b}" for b in range(1, 8)), "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16"]


@pytest.mark.parametrize("name", sorted(ATTRIBUTES))
def test_dtype_attributes(name):
    dt = getattr(F, name)
    assert (dt.is_floating_point, dt.is_signed, dt.is_complex, dt.itemsize) == ATTRIBUTES[name]
    assert repr(dt) == f"flambeau.{name}"
    t = F.empty(3, dtype=dt)
    assert t.dtype is dt and t.element_size() == dt.itemsize
    assert F.is_floating_point(t) == dt.is_floating_point and t.is_complex() == dt.is_complex


def test_chalf_is_complex32():
    assert F.chalf is F.complex32


# ---- 8-bit floats: every code against a decoder written from the format's definition ----

# name: (exponent bits, mantissa bits, bias, kind); kind: "fn" (no inf, NaN = all ones),
# "ieee" (inf and NaNs at the top exponent), "fnuz" (0x80 is the one NaN, no -0).
FORMATS = {
    "float8_e4m3fn": (4, 3, 7, "fn"),
    "float8_e5m2": (5, 2, 15, "ieee"),
    "float8_e4m3fnuz": (4, 3, 8, "fnuz"),
    "float8_e5m2fnuz": (5, 2, 16, "fnuz"),
}


def decode(code: int, e_bits: int, m_bits: int, bias: int, kind: str) -> float:
    if kind == "fnuz" and code == 0x80:
        return math.nan
    sign = -1.0 if code & 0x80 else 1.0
    e = (code >> m_bits) & ((1 << e_bits) - 1)
    m = code & ((1 << m_bits) - 1)
    top = (1 << e_bits) - 1
    if kind == "ieee" and e == top:
        return sign * math.inf if m == 0 else math.nan
    if kind == "fn" and e == top and m == (1 << m_bits) - 1:
        return math.nan
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + m / 2**m_bits) * 2.0 ** (e - bias)


def codes_of(t):
    return t.view(F.uint8).numpy().astype(int)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_float8_decodes_every_code(name):
    codes = F.arange(256, dtype=F.int64).to(F.uint8)
    values = codes.view(getattr(F, name)).float().numpy()
    expected = np.array([decode(c, *FORMATS[name]) for c in range(256)], dtype=np.float32)
    np.testing.assert_array_equal(values, expected)  # NaN positions equal too


def nearest(x: float, name: str) -> float:
    """The representable value nearest x, ties to the even code (even mantissa), by search."""
    code_of: dict = {}
    for c in range(256):
        v = decode(c, *FORMATS[name])
        if math.isfinite(v) and v not in code_of:  # -0.0 counts as 0.0
            code_of[v] = c
    best = min(code_of, key=lambda v: abs(v - x))
    ties = [v for v in code_of if abs(v - x) == abs(best - x)]
    return min(ties, key=lambda v: code_of[v] % 2)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_float8_rounds_to_nearest_even(name):
    rng = np.random.default_rng(0)
    _, m_bits, bias, _ = FORMATS[name]
    max_finite = max(v for c in range(256) if math.isfinite(v := decode(c, *FORMATS[name])))
    xs = np.concatenate(
        [
            rng.uniform(-max_finite, max_finite, 300),
            rng.normal(0, 1, 300) * 2.0 ** rng.integers(-bias - m_bits, 4, 300),
        ]
    ).astype(np.float32)
    got = F.from_numpy(xs).to(getattr(F, name)).float().numpy()
    for x, g in zip(xs.tolist(), got.tolist()):
        assert g == nearest(x, name), (x, g)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_float8_midpoints_round_to_the_even_code(name):
    # Every exact tie between neighbouring values (and just beside it), both signs.
    values = sorted({abs(v) for c in range(256) if math.isfinite(v := decode(c, *FORMATS[name]))})
    mids = [(a + b) / 2 for a, b in zip(values, values[1:])]
    xs = np.array(mids, dtype=np.float32)
    near = np.concatenate([xs, np.nextafter(xs, 0), np.nextafter(xs, np.inf)])
    near = np.concatenate([near, -near])
    got = F.from_numpy(near).to(getattr(F, name)).float().numpy()
    for x, g in zip(near.tolist(), got.tolist()):
        assert g == nearest(x, name), (x, g)


# Overflow, infinities and NaN, by format: PyTorch saturates e4m3fn, rounds e5m2 to
# infinity, and gives the fnuz formats their one NaN (codes checked against PyTorch 2.13).
EDGES = [1e9, math.inf, -math.inf, math.nan, 464.0, 480.0, 61440.0, 248.0, -0.0]
EDGE_CODES = {
    "float8_e4m3fn": [0x7E, 0x7E, 0xFE, 0x7F, 0x7E, 0x7E, 0x7E, 0x78, 0x80],
    "float8_e5m2": [0x7C, 0x7C, 0xFC, 0x7F, 0x5F, 0x60, 0x7C, 0x5C, 0x80],
    "float8_e4m3fnuz": [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00],
    "float8_e5m2fnuz": [0x80, 0x80, 0x80, 0x80, 0x63, 0x64, 0x80, 0x60, 0x00],
    "float8_e8m0fnu": [0x9D, 0xFF, 0xFF, 0xFF, 0x88, 0x88, 0x8F, 0x87, 0x00],
}


@pytest.mark.parametrize("name", sorted(EDGE_CODES))
def test_float8_edges(name):
    t = F.tensor(EDGES, dtype=F.float32).to(getattr(F, name))
    assert codes_of(t).tolist() == EDGE_CODES[name]


def test_float8_e8m0fnu_rounds_to_a_power_of_two():
    xs = [1.0, 1.4, 1.5, 3.0, 5.0, 6.0, 0.3, -3.5, 2.0**-130]
    got = F.tensor(xs).to(F.float8_e8m0fnu).float().tolist()
    # the nearest power of two, ties up (a mantissa >= 1/2 rounds up); the sign is dropped
    assert got == [1.0, 1.0, 2.0, 4.0, 4.0, 8.0, 0.25, 4.0, 2.0**-127]


def test_float8_print_fill_and_back():
    t = F.full((2,), 1.5, dtype=F.float8_e4m3fn)
    assert t.tolist() == [1.5, 1.5] and t[0].item() == 1.5
    assert repr(t) == "tensor([1.5000, 1.5000], dtype=flambeau.float8_e4m3fn)"
    assert F.cat([t, t]).float().tolist() == [1.5] * 4


@pytest.mark.parametrize("name", ["float8_e4m3fn", "uint16", "complex32"])
def test_arithmetic_is_not_implemented(name):
    t = F.zeros(2, dtype=getattr(F, name))
    with pytest.raises(NotImplementedError, match=name):
        t + t


def test_promotion_is_refused():
    with pytest.raises(RuntimeError, match="Promotion"):
        F.promote_types(F.float8_e5m2, F.float32)
    with pytest.raises(RuntimeError, match="Promotion"):
        F.promote_types(F.uint16, F.int16)


def test_finfo_of_float8_and_iinfo_of_wide_unsigned():
    assert F.finfo(F.float8_e4m3fn).max == 448.0 and F.finfo(F.float8_e4m3fn).eps == 0.125
    assert F.finfo(F.float8_e5m2).max == 57344.0 and F.finfo(F.float8_e4m3fnuz).max == 240.0
    assert F.finfo(F.complex32).max == 65504.0
    assert F.iinfo(F.uint64).max == 2**64 - 1 and F.iinfo(F.uint16).min == 0


# ---- uint16, uint32, uint64 ----


@pytest.mark.parametrize("bits", [16, 32, 64])
def test_wide_unsigned_values(bits):
    dt, top = getattr(F, f"uint{bits}"), 2**bits - 1
    t = F.tensor([0, 1, top], dtype=dt)
    assert t.tolist() == [0, 1, top] and t[2].item() == top
    a = t.numpy()
    assert a.dtype == np.dtype(f"uint{bits}") and a.tolist() == [0, 1, top]
    back = F.from_numpy(np.array([7, top], dtype=f"uint{bits}"))
    assert back.dtype is dt and back.tolist() == [7, top]
    assert F.tensor([3, 4], dtype=dt).to(F.int64).tolist() == [3, 4]
    assert F.tensor([2.9, 4.0]).to(dt).tolist() == [2, 4]
    assert "dtype=flambeau.uint" in repr(t)


def test_wide_unsigned_dlpack():
    t = F.tensor([1, 65535], dtype=F.uint16)
    assert np.from_dlpack(t).tolist() == [1, 65535]
    assert F.from_dlpack(np.array([5, 6], dtype=np.uint32)).dtype is F.uint32


# ---- complex32 ----


def test_complex32_converts_and_promotes():
    t = F.tensor([1 + 2j, -0.5j]).to(F.complex32)
    assert t.tolist() == [1 + 2j, -0.5j]
    assert t.to(F.complex64).tolist() == [1 + 2j, -0.5j]
    assert F.promote_types(F.complex32, F.float32) is F.complex64
    assert F.promote_types(F.complex32, F.float16) is F.complex32
    assert F.promote_types(F.complex32, F.int64) is F.complex32
    assert F.promote_types(F.complex32, F.complex128) is F.complex128


# ---- shell dtypes ----


@pytest.mark.parametrize("name", SHELLS)
def test_shell_dtypes_hold_bytes_only(name):
    dt = getattr(F, name)
    z = F.zeros(4, dtype=dt)
    assert z.view(F.uint8).tolist() == [0] * (4 * dt.itemsize)
    raw = F.arange(4 * dt.itemsize, dtype=F.int64).to(F.uint8)
    assert F.cat([raw.view(dt), raw.view(dt)]).view(F.uint8).tolist() == raw.tolist() * 2
    with pytest.raises(NotImplementedError):
        z.tolist()
    with pytest.raises(NotImplementedError):
        z.float()
    with pytest.raises(NotImplementedError):
        F.ones(2, dtype=dt)


def test_safetensors_round_trip(tmp_path):
    st = pytest.importorskip("flambeau.safetensors")
    tensors = {
        "u": F.tensor([1, 65535], dtype=F.uint16),
        "f8": F.tensor([1.5, -2.0]).to(F.float8_e5m2),
    }
    st.save_file(tensors, tmp_path / "x.safetensors")
    back = st.load_file(tmp_path / "x.safetensors")
    assert back["u"].dtype is F.uint16 and back["u"].tolist() == [1, 65535]
    assert back["f8"].dtype is F.float8_e5m2 and back["f8"].float().tolist() == [1.5, -2.0]


def test_complex32_views_and_refusals():
    t = F.tensor([1 + 2j, 3 - 4j]).to(F.complex32)
    assert t.real.dtype is F.float16 and t.real.tolist() == [1.0, 3.0]
    assert t.imag.tolist() == [2.0, -4.0]
    assert F.view_as_real(t).tolist() == [[1.0, 2.0], [3.0, -4.0]]
    assert F.view_as_complex(F.view_as_real(t)).dtype is F.complex32
    # Operators without complex32 kernels say so (they never compute on the wrong type).
    for op in (lambda: t.mean(), lambda: t.var(), lambda: F.linalg.vector_norm(t)):
        with pytest.raises(RuntimeError, match="ComplexHalf|complex32"):
            op()
