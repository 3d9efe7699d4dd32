"""flambeau.func.rearrange: einops-style axis rearrangement by a pattern string."""

from __future__ import annotations

import math
import re

import flambeau

_TOKEN = re.compile(r"\.\.\.|\(|\)|[A-Za-z_][A-Za-z0-9_]*|\d+|\S")
_ELLIPSIS = "..."


def _parse(side: str, where: str) -> list:
    """The axis groups of one side of a pattern: ``b (h w) 1 ...`` -> [[b], [h, w], [],
    "..."] (a bare ellipsis stands for several groups)."""
    groups: list = []
    current: list[str] | None = None
    for tok in _TOKEN.findall(side):
        if tok == "(":
            if current is not None:
                raise ValueError(f"rearrange: nested parentheses in the {where} of the pattern")
            current = []
        elif tok == ")":
            if current is None:
                raise ValueError(f"rearrange: unbalanced parentheses in the {where} of the pattern")
            groups.append(current)
            current = None
        elif tok.isdigit():
            if tok != "1":
                raise ValueError(
                    f"rearrange: non-unitary anonymous axes are not supported ({tok!r}); name "
                    "the axis and give its length as a keyword argument"
                )
            if current is None:
                groups.append([])
        elif tok == _ELLIPSIS and current is None:
            groups.append(_ELLIPSIS)  # its axes stay separate; "(...)" merges them
        elif tok == _ELLIPSIS or tok[0].isalpha() or tok[0] == "_":
            if current is None:
                groups.append([tok])
            else:
                current.append(tok)
        else:
            raise ValueError(f"rearrange: unexpected character {tok!r} in the pattern")
    if current is not None:
        raise ValueError(f"rearrange: unbalanced parentheses in the {where} of the pattern")
    names = [n for g in groups for n in ([g] if g == _ELLIPSIS else g)]
    if names.count(_ELLIPSIS) > 1:
        raise ValueError(f"rearrange: more than one ellipsis in the {where} of the pattern")
    for name in names:
        if name != _ELLIPSIS and names.count(name) > 1:
            raise ValueError(f"Indexing expression contains duplicate dimension '{name}'")
    return groups


def _expand(groups, ellipsis_names) -> list[list[str]]:
    out = []
    for g in groups:
        if g == _ELLIPSIS:
            out.extend([n] for n in ellipsis_names)
        else:
            out.append([m for n in g for m in (ellipsis_names if n == _ELLIPSIS else [n])])
    return out


def rearrange(tensor, pattern, **axes_lengths):
    """Reorders, merges and splits a tensor's axes as an einops pattern says.

    ``pattern`` is ``"<input axes> -> <output axes>"``: a name per axis, ``(a b)`` for
    one axis made of several (sizes the input does not fix are given as keyword
    arguments), ``1`` or ``()`` for an axis of size 1, and ``...`` for the axes the
    pattern leaves unnamed. Every name must appear on both sides. ``tensor`` may be a
    list or tuple of equally shaped tensors, stacked along a new first axis. Pattern
    and size errors raise ValueError.

    >>> x = flambeau.arange(24.0).reshape(2, 3, 4)
    >>> flambeau.func.rearrange(x, "b c h -> b (c h)").shape
    flambeau.Size([2, 12])
    >>> flambeau.func.rearrange(x, "b (c1 c2) h -> c2 b h c1", c1=3).shape
    flambeau.Size([1, 2, 4, 3])
    >>> flambeau.func.rearrange(x, "b ... -> ... b")[0, 0]
    tensor([ 0., 12.])
    """
    if isinstance(tensor, (list, tuple)):
        tensor = flambeau.stack(list(tensor))
    if "->" not in pattern:
        raise ValueError(f"rearrange: the pattern {pattern!r} has no '->'")
    left_text, right_text = pattern.split("->", 1)
    left, right = _parse(left_text, "left side"), _parse(right_text, "right side")
    left_names = [n for g in left for n in ([g] if g == _ELLIPSIS else g)]
    right_names = [n for g in right for n in ([g] if g == _ELLIPSIS else g)]
    if (_ELLIPSIS in right_names) != (_ELLIPSIS in left_names):
        raise ValueError("rearrange: an ellipsis on one side of the pattern only")
    ndim = tensor.dim()
    ellipsis_names: list[str] = []
    if _ELLIPSIS in left_names:
        if _ELLIPSIS not in left:
            raise ValueError("rearrange: an ellipsis in parentheses on the left of the pattern")
        count = ndim - (len(left) - 1)
        if count < 0:
            raise ValueError(
                f"Number of dimensions in pattern ({len(left) - 1}) must be at most the number "
                f"of dimensions in the tensor ({ndim})"
            )
        ellipsis_names = [f"...{i}" for i in range(count)]
    left, right = _expand(left, ellipsis_names), _expand(right, ellipsis_names)
    if len(left) != ndim:
        raise ValueError(
            f"Number of dimensions in pattern ({len(left)}) must be equal to the number of "
            f"dimensions in the tensor ({ndim})"
        )
    left_names = [n for g in left for n in g]
    right_names = [n for g in right for n in g]
    one_side = set(left_names) ^ set(right_names)
    if one_side:
        raise ValueError(
            f"Identifiers only on one side of rearrange expression (should be on both): {one_side}"
        )
    unknown = set(axes_lengths) - set(left_names)
    if unknown:
        raise ValueError(f"rearrange: axes {sorted(unknown)} given lengths are not in the pattern")
    sizes: dict[str, int] = {}
    for group, dim in zip(left, tensor.shape):
        known = math.prod(axes_lengths[n] for n in group if n in axes_lengths)
        free = [n for n in group if n not in axes_lengths]
        if len(free) > 1:
            raise ValueError(
                f"rearrange: cannot infer the sizes of two dimensions at once: {free[0]} and "
                f"{free[1]}"
            )
        if free:
            if known == 0 or dim % known:
                raise ValueError(
                    f"rearrange: the axis of size {dim} cannot be split into {group} with "
                    f"lengths {axes_lengths}"
                )
            sizes[free[0]] = dim // known
        elif known != dim:
            raise ValueError(f"rearrange: dimension sizes do not match ({dim} != {known})")
        sizes.update((n, axes_lengths[n]) for n in group if n in axes_lengths)
    split = tensor.reshape([sizes[n] for n in left_names])
    moved = split.permute([left_names.index(n) for n in right_names])
    return moved.reshape([math.prod(sizes[n] for n in g) for g in right])
