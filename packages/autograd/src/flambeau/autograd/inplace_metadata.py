"""Recording the core's in-place metadata operators (ops/metadata.yaml), PyTorch's rules.

- In-place view ops (``t_``, ``transpose_``, ``swapaxes_``, ``swapdims_``, ``squeeze_``,
  ``unsqueeze_``, ``as_strided_``) on a tensor that requires grad: refused on a leaf (and
  a view of one), else recorded with the out-of-place op's formula, the tensor's history
  continuing through it. They write no values, so a view's root is not rebased.
- ``set_``: refused on a leaf; otherwise the tensor's history ends in a node whose
  backward raises (PyTorch has no derivative for it either).
- ``resize_``/``resize_as_``: the core refuses tensors that require grad, in any mode.

Formulas read their inputs' shapes at backward, so a recorded call also notes each
tensor argument's metadata version: a later in-place change of an input's geometry makes
that backward raise rather than read the new geometry (``check_geometry``).
"""

from __future__ import annotations

from flambeau import _C

from . import anomaly_mode, derivatives, schema
from .graph import FormulaNode, Node, backward_name

Tensor = _C.Tensor

# In-place view op -> the view op whose formula it records.
VIEW_FORMS = {
    "t_": "t",
    "transpose_": "transpose",
    "swapaxes_": "swapaxes",
    "swapdims_": "swapdims",
    "squeeze_": "squeeze",
    "unsqueeze_": "unsqueeze",
    "as_strided_": "as_strided",
}
# Calls the recorder runs as they are: nothing differentiable comes out of them.
_PLAIN = frozenset({"resize_", "resize_as_", "is_set_to"})
OPS = frozenset(VIEW_FORMS) | _PLAIN | {"set_"}


class NotImplementedNode(Node):
    """The history of a tensor re-pointed by set_: no gradient flows back through it."""

    def __init__(self, op: str, next_functions):
        super().__init__("NotImplemented", next_functions, 1)
        self._op = op

    def _backward(self, grads):
        raise RuntimeError(f"derivative for {self._op} is not implemented")


def record(name: str, args: tuple, kwargs: dict):
    """The recorder's handler for the operators in OPS."""
    from . import recorder  # the recorder imports this module

    if name in _PLAIN:
        return recorder._call(name, args, kwargs)
    target = args[0]
    recorder._check_inplace(name, target)
    if name == "set_":
        return _record_set(recorder, args, kwargs)
    return _record_view(recorder, name, args, kwargs)


def _record_set(recorder, args: tuple, kwargs: dict):
    target = args[0]
    sch, bound = schema.bind("set_", args, kwargs)
    # Only set_(source) carries source's history into target (PyTorch's rule).
    source = bound.get("source") if sch.overload == "source_Tensor" else None
    edges = [recorder.grad_edge(target)]
    if source is not None:
        edges.append(recorder.grad_edge(source))
    result = recorder._call("set_", args, kwargs)
    if not (target.requires_grad or (source is not None and source.requires_grad)):
        return result
    # target no longer views its base's storage.
    target._view = None
    recorder.attach(target, NotImplementedNode("set_", edges), 0)
    return result


def _record_view(recorder, name: str, args: tuple, kwargs: dict):
    target = args[0]
    base = VIEW_FORMS[name]
    edge = recorder.grad_edge(target)  # from before the call (a view may rebase here)
    before = target.detach()  # the input's geometry, which the formula reads
    result = recorder._call(name, args, kwargs)
    sch, bound = schema.bind(base, args, kwargs)
    first = sch.params[0].name
    bound[first] = before
    formula = derivatives.FORMULAS.get(sch.key) or derivatives.FORMULAS.get(sch.name)
    node = FormulaNode(
        backward_name(base),
        [edge],
        1,
        derivatives.bind_formula(sch.key, formula, [(first, None)], False),
        None,
    )
    node._saved = recorder.SavedArgs(
        bound,
        (target,),
        check_inputs=False,  # no values are read, and `before` is this call's own alias
        check_output=(lambda i: True) if formula is None else formula.reads_output,
        geometry_only=True,
    )
    if anomaly_mode.is_enabled():
        node._record_trace()
    recorder.attach(target, node, 0)
    return result


# ---- recorded inputs whose geometry changed ------------------------------------------------


def geometry_versions(bound: dict) -> dict:
    """The metadata versions of a recorded call's tensor arguments (lists included)."""
    out = {}
    for k, v in bound.items():
        if isinstance(v, Tensor):
            out[k] = v._metadata_version
        elif isinstance(v, (list, tuple)) and any(isinstance(t, Tensor) for t in v):
            out[k] = tuple(t._metadata_version if isinstance(t, Tensor) else None for t in v)
    return out


def check_geometry(op: str, bound: dict, recorded: dict) -> None:
    """Raises if a tensor argument's geometry changed since geometry_versions(bound)."""
    for k, then in recorded.items():
        v = bound.get(k)
        if isinstance(then, tuple):
            pairs = zip(v, then) if isinstance(v, (list, tuple)) else ()
        else:
            pairs = ((v, then),)
        for t, t_then in pairs:  # (values packed by saved-tensor hooks are not tensors)
            if isinstance(t, Tensor) and t._metadata_version != t_then:
                raise reshaped_error(op, t)


def reshaped_error(op, t) -> RuntimeError:
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: a tensor used by {op}, now of shape {tuple(t.shape)}, had its "
        "shape, strides or dtype changed in place afterwards (t_, transpose_, squeeze_, "
        "unsqueeze_, as_strided_, set_, resize_ or .data =), and its backward reads that "
        "geometry. Hint: apply the in-place view op to a clone, or use the out-of-place op."
    )
