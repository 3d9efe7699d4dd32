"""``flambeau.finfo`` and ``flambeau.iinfo``: numeric limits of dtypes.

The values are computed from each type's bit layout (no NumPy needed), so
bfloat16 is covered too. ``dtype`` is the type's name as a string, as in
PyTorch; a complex dtype describes its real component type.
"""

from __future__ import annotations

from flambeau import _C

# name -> (bits, mantissa bits stored, exponent bits)
_FLOAT_LAYOUT = {
    "float16": (16, 10, 5),
    "bfloat16": (16, 7, 8),
    "float32": (32, 23, 8),
    "float64": (64, 52, 11),
}
# The 8-bit floats are not IEEE-shaped (no infinities, or one NaN, or powers of two
# only): their limits as PyTorch reports them, (eps, max, min, tiny).
_FLOAT8_LIMITS = {
    "float8_e4m3fn": (0.125, 448.0, -448.0, 2.0**-6),
    "float8_e5m2": (0.25, 57344.0, -57344.0, 2.0**-14),
    "float8_e4m3fnuz": (0.125, 240.0, -240.0, 2.0**-7),
    "float8_e5m2fnuz": (0.125, 57344.0, -57344.0, 2.0**-15),
    "float8_e8m0fnu": (1.0, 2.0**127, 2.0**-127, 2.0**-127),
}
_COMPLEX_PART = {"complex32": "float16", "complex64": "float32", "complex128": "float64"}
# name -> (bits, signed)
_INT_LAYOUT = {
    "uint8": (8, False),
    "int8": (8, True),
    "int16": (16, True),
    "int32": (32, True),
    "int64": (64, True),
    "uint16": (16, False),
    "uint32": (32, False),
    "uint64": (64, False),
}


def _name(dtype, who: str) -> str:
    if dtype is None:
        return repr(_C.get_default_dtype()).split(".", 1)[1]
    if not isinstance(dtype, _C.dtype):
        raise TypeError(
            f"{who}(): argument 'type' must be flambeau.dtype, not {type(dtype).__name__}"
        )
    return repr(dtype).split(".", 1)[1]


class finfo:
    """Limits of a floating point (or complex) dtype: bits, eps, max, min, tiny
    (= smallest_normal) and resolution (10 ** -decimal digits of precision).

    >>> flambeau.finfo(flambeau.float32).eps
    1.1920928955078125e-07
    >>> flambeau.finfo(flambeau.bfloat16).max
    3.3895313892515355e+38
    >>> flambeau.finfo(flambeau.float16).max
    65504.0
    """

    __slots__ = ("bits", "dtype", "eps", "max", "min", "resolution", "smallest_normal", "tiny")

    def __init__(self, type=None) -> None:
        name = _name(type, "finfo")
        name = _COMPLEX_PART.get(name, name)
        if name in _FLOAT8_LIMITS:
            self.bits = 8
            self.eps, self.max, self.min, self.tiny = _FLOAT8_LIMITS[name]
            self.smallest_normal = self.tiny
            self.resolution = 1.0
            self.dtype = name
            return
        if name not in _FLOAT_LAYOUT:
            raise TypeError(f"finfo(): flambeau.{name} is not a floating point dtype")
        bits, mant, exp = _FLOAT_LAYOUT[name]
        emax = 2 ** (exp - 1) - 1
        self.bits = bits
        self.eps = 2.0**-mant
        self.max = (2.0 - 2.0**-mant) * 2.0**emax
        self.min = -self.max
        self.tiny = 2.0 ** (1 - emax)
        self.smallest_normal = self.tiny
        digits = 0  # decimal digits every value keeps: floor(mant * log10(2))
        while 10.0 ** -(digits + 1) >= self.eps:
            digits += 1
        self.resolution = float(f"1e-{digits}")
        self.dtype = name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))


class iinfo:
    """Limits of an integer dtype: bits, min and max.

    >>> flambeau.iinfo(flambeau.int8).min, flambeau.iinfo(flambeau.int8).max
    (-128, 127)
    >>> flambeau.iinfo(flambeau.uint8)
    iinfo(min=0, max=255, dtype=uint8)
    """

    __slots__ = ("bits", "dtype", "max", "min")

    def __init__(self, type) -> None:
        name = _name(type, "iinfo")
        if name not in _INT_LAYOUT:
            raise TypeError(f"iinfo(): flambeau.{name} is not an integer dtype")
        bits, signed = _INT_LAYOUT[name]
        self.bits = bits
        self.min = -(2 ** (bits - 1)) if signed else 0
        self.max = 2 ** (bits - 1) - 1 if signed else 2**bits - 1
        self.dtype = name

    def __repr__(self) -> str:
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"

    def __eq__(self, other) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))
