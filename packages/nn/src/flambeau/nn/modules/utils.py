"""Argument helpers that layers (and custom layers written for PyTorch) import from here."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse"):
    """A function that repeats a scalar n times and turns an iterable into a tuple."""

    def parse(x):
        if isinstance(x, Iterable):
            return tuple(x)
        return (x,) * n

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """Reverses t and repeats each element n times: F.pad's order for per-dim padding."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """out_size with each None taken from the matching trailing entry of defaults."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    tail = defaults[-len(out_size) :]
    return [v if v is not None else d for v, d in zip(out_size, tail)]


def consume_prefix_in_state_dict_if_present(state_dict, prefix: str) -> None:
    """Strips `prefix` from the keys of state_dict (and of its _metadata) in place, e.g.
    "module." from the state_dict of a DataParallel model."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix) :]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        # "" is the wrapper's own entry; "module" (no dot) the wrapped model's.
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            metadata[key[len(prefix) :]] = metadata.pop(key)
