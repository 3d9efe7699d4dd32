"""Tensor printing in PyTorch's format: ``tensor([[1., 2.],\n        [3., 4.]])``.

Values come from ``Tensor.tolist()`` (or a summarized variant that keeps only
``edgeitems`` entries at each end of long dims), so printing needs no NumPy.

Float formatting follows PyTorch: if every finite non-zero value is an integer
the values print as ``1.`` (int mode); scientific notation is used when the
ratio of the largest to the smallest finite non-zero magnitude exceeds 1000,
the largest exceeds 1e8, or (outside int mode) the smallest is below 1e-4;
otherwise fixed point with ``precision`` digits. Every element is right-aligned
to the widest one.
"""

from __future__ import annotations

import math

from flambeau import _C
from flambeau.overrides import _dispatch_on


class _PrintOptions:
    __slots__ = ("edgeitems", "linewidth", "precision", "sci_mode", "threshold")

    def __init__(self) -> None:
        self.precision = 4
        self.threshold: float = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
):
    """Sets how tensors print.

    Args:
        precision: digits after the decimal point for floats (default 4).
        threshold: number of elements above which a tensor is summarized with
            ``...`` (default 1000).
        edgeitems: entries kept at each end of every dim when summarizing (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``; sets the four options
            above before the explicit ones apply.
        sci_mode: True or False forces scientific notation on or off; None
            (the default) chooses automatically.

    >>> flambeau.set_printoptions(precision=2)
    >>> flambeau.tensor([1.23456, 2.0])
    tensor([1.23, 2.00])
    >>> flambeau.set_printoptions(profile="default")
    >>> flambeau.tensor([1.23456, 2.0])
    tensor([1.2346, 2.0000])
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(
                f"set_printoptions: unknown profile {profile!r}; expected one of "
                f"{', '.join(map(repr, _PROFILES))}"
            )
        (
            PRINT_OPTS.precision,
            PRINT_OPTS.threshold,
            PRINT_OPTS.edgeitems,
            PRINT_OPTS.linewidth,
        ) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = int(precision)
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = int(edgeitems)
    if linewidth is not None:
        PRINT_OPTS.linewidth = int(linewidth)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options as a dict (the keywords of set_printoptions).

    >>> flambeau.get_printoptions()["precision"]
    4
    >>> sorted(flambeau.get_printoptions())
    ['edgeitems', 'linewidth', 'precision', 'sci_mode', 'threshold']
    """
    return {name: getattr(PRINT_OPTS, name) for name in _PrintOptions.__slots__}


class printoptions:
    """Context manager applying set_printoptions(**kwargs) within a ``with`` block.

    >>> with flambeau.printoptions(precision=1):
    ...     print(flambeau.tensor([1.23456, 2.0]))
    tensor([1.2, 2.0])
    >>> flambeau.tensor([1.23456, 2.0])
    tensor([1.2346, 2.0000])
    """

    def __init__(self, **kwargs) -> None:
        self._kwargs = kwargs
        self._saved: dict | None = None

    def __enter__(self):
        self._saved = get_printoptions()
        set_printoptions(**self._kwargs)
        return self

    def __exit__(self, *exc) -> None:
        set_printoptions(**self._saved)


class _Formatter:
    """Chooses a common format and width for a set of values of one kind."""

    def __init__(self, values: list, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        precision = PRINT_OPTS.precision
        if not floating:
            for v in values:
                self.width = max(self.width, len(str(v)))
            return
        finite = [v for v in values if v != 0 and math.isfinite(v)]
        if not finite:
            return
        magnitudes = [abs(v) for v in finite]
        lo, hi = min(magnitudes), max(magnitudes)
        self.int_mode = all(v == math.ceil(v) for v in finite)
        # A sci_mode set with set_printoptions decides before the widths are measured, so
        # that forcing fixed point does not leave the width of the scientific strings.
        self.sci_mode = (
            (hi / lo > 1000.0 or hi > 1.0e8 or (not self.int_mode and lo < 1.0e-4))
            if PRINT_OPTS.sci_mode is None
            else PRINT_OPTS.sci_mode
        )
        if self.sci_mode:
            strs = [f"{v:.{precision}e}" for v in finite]
        elif self.int_mode:
            strs = [f"{v:.0f}." for v in finite]
        else:
            strs = [f"{v:.{precision}f}" for v in finite]
        self.width = max(self.width, max(len(s) for s in strs))

    def format(self, value) -> str:
        precision = PRINT_OPTS.precision
        if not self.floating:
            s = str(value)
        elif self.sci_mode:
            s = f"{value:{self.width}.{precision}e}"
        elif self.int_mode:
            s = f"{value:.0f}"
            if math.isfinite(value):
                s += "."
        else:
            s = f"{value:.{precision}f}"
        return " " * (self.width - len(s)) + s


def _leaves(data, out: list) -> list:
    if isinstance(data, list):
        for x in data:
            _leaves(x, out)
    elif data is not Ellipsis:
        out.append(data)
    return out


def _element_formatter(values: list, dtype):
    """(format(value) -> str, element width) for the (summarized) values."""
    if dtype.is_complex:
        real = _Formatter([v.real for v in values], True)
        imag = _Formatter([v.imag for v in values], True)

        def fmt(v):
            re_s = real.format(v.real)
            im_s = (imag.format(v.imag) + "j").lstrip()
            return re_s + im_s if im_s[0] in "+-" else re_s + "+" + im_s

        return fmt, real.width + imag.width + 1
    f = _Formatter(values, dtype.is_floating_point)
    return f.format, f.width


def _vector_str(data: list, indent: int, fmt, width: int) -> str:
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (width + 2)))
    items = [" ..." if v is Ellipsis else fmt(v) for v in data]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(data, dim: int, indent: int, fmt, width: int) -> str:
    if dim == 0:
        return fmt(data)
    if dim == 1:
        return _vector_str(data, indent, fmt, width)
    sep = "," + "\n" * (dim - 1) + " " * (indent + 1)
    parts = [
        "..." if x is Ellipsis else _nested_str(x, dim - 1, indent + 1, fmt, width) for x in data
    ]
    return "[" + sep.join(parts) + "]"


def tensor_body(t, indent: int) -> str:
    """The bracketed values of a non-empty tensor, lines indented by `indent`."""
    if t.numel() > PRINT_OPTS.threshold:
        data = t._tolist_summarized(PRINT_OPTS.edgeitems)
    else:
        data = t.tolist()
    fmt, width = _element_formatter(_leaves(data, []), t.dtype)
    return _nested_str(data, t.dim(), indent, fmt, width)


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _default_complex(default):
    return _C.complex128 if default is _C.float64 else _C.complex64


@_dispatch_on("self", method="__repr__")
def tensor_repr(self) -> str:
    """``repr(tensor)``: PyTorch's format with a ``flambeau.`` dtype prefix; a subclass's
    instances print under its name (``MyTensor([1., 2.])``), as in PyTorch, but for
    nn.Parameter, which prints its data as a tensor's."""
    cls = type(self)
    plain = cls is _C.Tensor or (
        cls.__name__ == "Parameter" and cls.__module__.startswith("flambeau")
    )
    prefix = "tensor(" if plain else f"{cls.__name__}("
    indent = len(prefix)
    dtype = self.dtype
    default = _C.get_default_dtype()
    suffixes = []
    if self.device.type != "cpu":
        suffixes.append(f"device='{self.device}'")
    if self.device.type == "meta":  # no values to print: the size, and the dtype if not default
        suffixes.append(f"size={tuple(self.shape)}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
        body = "..."
    elif self.numel() == 0:
        if self.dim() != 1:
            suffixes.append(f"size={tuple(self.shape)}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
        body = "[]"
    else:
        if dtype not in (default, _default_complex(default), _C.int64, _C.bool):
            suffixes.append(f"dtype={dtype!r}")
        # Values on another device are read from a CPU copy, as PyTorch prints them.
        body = tensor_body(self if self.is_cpu else self.cpu(), indent)
    grad_fn = getattr(self, "grad_fn", None)
    if grad_fn is not None:
        name = grad_fn.name() if hasattr(grad_fn, "name") else type(grad_fn).__name__
        suffixes.append(f"grad_fn=<{name}>")
    elif self.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)


@_dispatch_on("self", method="__format__")
def tensor_format(self, spec: str) -> str:
    """``format(tensor, spec)``: a 0-dim tensor formats as its value."""
    if self.dim() == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)
