"""The multi-tensor (foreach) operators need no formulas of their own: when a gradient
is wanted, autograd records them as their per-tensor operators, one list element at a
time (``recorder._run_foreach``), so every formula and check of those applies."""

from __future__ import annotations

import flambeau as F

# foreach name (without the _foreach_ prefix and an in-place _) -> per-tensor operator
PER_TENSOR = {
    n: n
    for n in (
        "add sub mul div addcmul addcdiv lerp maximum minimum clamp_min clamp_max pow "
        "sqrt neg abs exp sign reciprocal"
    ).split()
}
PER_TENSOR["norm"] = "linalg_vector_norm"
# Operators that exist only in place: each element runs the per-tensor in-place operator.
IN_PLACE_ONLY = {"zero": "zero_", "copy": "copy_"}


def base_name(name: str) -> str:
    """The per-tensor family of a foreach operator: _foreach_add_ -> add."""
    return name.removeprefix("_foreach_").rstrip("_")


def is_recorded(name: str) -> bool:
    """Whether autograd records this operator as per-tensor calls."""
    base = base_name(name)
    return name.startswith("_foreach_") and (base in PER_TENSOR or base in IN_PLACE_ONLY)


def check_lengths(name: str, sch, bound: dict) -> None:
    """The core's errors for lists of different lengths, which recording element by
    element would otherwise cut to the shortest."""
    lists = [(p, bound[p.name]) for p in sch.params if p.is_tensor_list]
    first = len(lists[0][1])
    if first == 0:
        raise RuntimeError(f"{name}: Tensor list must have at least one tensor.")
    for _, v in lists[1:]:
        if len(v) != first:
            raise RuntimeError(
                f"{name}: Tensor lists must have the same number of tensors, got {first} and "
                f"{len(v)}."
            )
    for p in sch.params:  # a list of scalars, or addcmul/addcdiv's tensor of them
        v = bound[p.name]
        if (p.type == "Scalar[]" or p.name == "scalars") and len(v) != first:
            raise RuntimeError(
                f"{name}: Tensor list must have same number of elements as scalar list, got "
                f"{first} tensors and {len(v)} scalars."
            )


# Parameters the per-tensor operators take by keyword.
_KEYWORDS = {"alpha", "value", "dtype", "non_blocking"}


def element_calls(base: str, sch, bound: dict):
    """(args, kwargs) of the per-tensor call for each list element."""
    numbers = {p.name for p in sch.params if p.type.rstrip("?") == "Scalar"}
    n = len(next(v for v in bound.values() if isinstance(v, (list, tuple))))
    # addcmul/addcdiv's per-element `scalars` is the per-tensor operator's `value`.
    scalars_as = "value" if base in ("addcmul", "addcdiv") else None
    calls = []
    for i in range(n):
        args, kwargs = [], {}
        for name, v in bound.items():
            if isinstance(v, (list, tuple)):
                v = v[i]
            elif name == "scalars" and isinstance(v, F.Tensor):  # one scalar per element
                v = v[i].item()
            elif name in numbers and isinstance(v, F.Tensor):  # a one-element tensor as a number
                v = v.item()
            if name in _KEYWORDS or (name == "scalars" and scalars_as):
                kwargs[scalars_as if name == "scalars" else name] = v
            else:
                args.append(v)
        calls.append((args, kwargs))
    return calls
