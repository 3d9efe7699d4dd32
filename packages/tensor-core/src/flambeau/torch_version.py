"""``flambeau.__version__``: a string that compares as a version (PyTorch's ``TorchVersion``).

It names the PyTorch release whose API flambeau follows, with flambeau's own release as
the local label, as PyTorch's builds carry theirs (``2.13.0+cpu``): ``2.13.0+flambeau.0.1.0``.
Programs and libraries gate features on ``torch.__version__`` (``>= "1.13"``, ``>= (2,
0)``, ``packaging.version.parse(...)``), and a port must take the paths PyTorch 2.13 takes.
flambeau's own release is ``flambeau.version.flambeau``.

Comparisons go through ``packaging.version.Version``, as PyTorch's do, so the local label
ranks as PEP 440 says (``2.13.0+flambeau.0.1.0 > "2.13.0"``); what is not a version
compares as a string.

>>> v = flambeau.torch_version.TorchVersion("2.13.0+flambeau.0.1.0")
>>> v >= "2.0", v >= (2, 13), v < "2.13.1", v > "2.13.0", v.split("+")[0]
(True, True, True, True, '2.13.0')
"""

from __future__ import annotations

__all__ = ["TorchVersion"]

PYTORCH_API = "2.13.0"  # the PyTorch release whose API flambeau follows


def _as_version(v):
    from packaging.version import InvalidVersion, Version  # only when compared

    if isinstance(v, Version):
        return v
    if isinstance(v, str):
        return Version(v)
    if isinstance(v, (tuple, list)):
        return Version(".".join(str(x) for x in v))
    raise InvalidVersion(f"{v!r} is not a version string, tuple or Version")


def _comparison(name: str):
    def compare(self, other):
        from packaging.version import InvalidVersion

        try:
            return getattr(_as_version(str(self)), name)(_as_version(other))
        except InvalidVersion:
            return getattr(str, name)(self, other)

    compare.__name__ = name
    return compare


class TorchVersion(str):
    """A version string comparing as a PEP 440 version with strings, tuples and Versions."""

    __eq__ = _comparison("__eq__")
    __ne__ = _comparison("__ne__")
    __lt__ = _comparison("__lt__")
    __le__ = _comparison("__le__")
    __gt__ = _comparison("__gt__")
    __ge__ = _comparison("__ge__")
    __hash__ = str.__hash__
