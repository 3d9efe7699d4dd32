"""The autograd key: records differentiable operations as graph nodes.

The core hands every call whose tensor arguments require grad (in grad mode) to
``handle``; it runs the operator (inside the handler, calls go straight to the
kernels), then, if the operator is differentiable, attaches a FormulaNode to
the outputs.
"""

from __future__ import annotations

import flambeau
from flambeau import _C

from . import anomaly_mode, derivatives, inplace_metadata, saved_tensors, schema
from .graph import AccumulateGrad, FormulaNode, ViewInfo, backward_name
from .tensor_flags import RAW_METHODS, raw_set_requires_grad
from .tensor_meta import TensorMeta

Tensor = _C.Tensor
# Operators whose output is a view of their first input: the table's views (`view: true`)
# and the two that share storage outside the table, indexing and detach.
VIEW_OPS = frozenset(
    name for name, rows in schema.table().items() if any(row["view"] for row in rows)
) | {"__getitem__", "detach"}


def is_differentiable(t) -> bool:
    return isinstance(t, Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex)


def grad_edge(t):
    """The (node, output_nr) a gradient for tensor t flows into, or (None, 0)."""
    if not isinstance(t, Tensor) or not t.requires_grad:
        return (None, 0)
    view = t._view
    if view is not None and view.root.grad_fn is not view.root_fn:
        # An in-place op through another view rebased the root: this view now reads
        # the root's new values.
        rebase_view(t, view)
    fn = t.grad_fn
    if fn is not None:
        return (fn, t.output_nr)
    return (accumulate_node(t), 0)


def rebase_view(t, view: ViewInfo) -> None:
    """t's history becomes 'a view of its root as the root is now'."""
    from .views import ViewNode  # views builds on Function, which imports this module

    view.root_fn = view.root.grad_fn
    attach(t, ViewNode(grad_edge(view.root), view, t), 0)


def accumulate_node(leaf) -> AccumulateGrad:
    node = leaf._accumulate
    if node is None:
        node = AccumulateGrad(leaf)
        leaf._accumulate = node
    return node


def attach(out, node, output_nr: int) -> None:
    raw_set_requires_grad(out, True)  # out may already be a non-leaf (in-place ops)
    out._set_grad_fn(node, output_nr)


class SavedArgs:
    """Bound arguments of a recorded call, with in-place modification checks.

    Inputs are kept as they are (with their own graph, for create_graph), except
    tensors whose values no wanted gradient reads (``keep``), which are replaced by
    their TensorMeta and so not kept alive nor checked for in-place changes.
    Outputs are kept detached, so a node never keeps itself alive through its
    result, and re-attached to the node on unpacking.
    """

    def __init__(
        self,
        bound: dict,
        outputs: tuple,
        check_inputs: bool,
        check_output,
        versions=None,
        keep=None,
        geometry_only=False,
    ):
        """versions: the inputs' versions from before the call (an in-place call bumps
        any input that aliases its target, so reading them after would miss that).
        keep: the names of the tensor arguments to keep (None: all).
        geometry_only: the formula reads only its inputs' geometry (a view's)."""
        if keep is not None:
            bound = {
                k: TensorMeta.of(v) if k not in keep and isinstance(v, Tensor) else v
                for k, v in bound.items()
            }
            if versions is not None:
                versions = {k: v for k, v in versions.items() if k in keep}
        self.bound = bound
        self.geometry = inplace_metadata.geometry_versions(bound)
        self.outputs = tuple(o.detach() if isinstance(o, Tensor) else o for o in outputs)
        hooks = saved_tensors.current()
        self.hooked = hooks is not None
        if self.hooked:
            # The values the formula reads are what it saves: they go through the hooks
            # (and, as in PyTorch, are not checked for in-place changes); nothing else
            # does, so that what the hooks see is what the formula reads. Under hooks that
            # want the graph to keep no tensor of its own (checkpointing), the tensors it
            # does not read are kept as their metadata (TensorMeta) only.
            every = saved_tensors.packs_every_tensor(hooks)
            if check_inputs or (every and not geometry_only):
                # (A formula that reads no input values may still read an index or a
                # mask, or hand an input to a backward kernel: its inputs are saved.)
                self.bound = {k: saved_tensors.pack(v, hooks) for k, v in bound.items()}
            elif every:
                self.bound = {k: TensorMeta.of_value(v) for k, v in bound.items()}
            self.outputs = tuple(
                saved_tensors.pack(o, hooks)
                if check_output(i)
                else TensorMeta.of_value(o)
                if every
                else o
                for i, o in enumerate(self.outputs)
            )
            self.versions, self.output_versions = {}, (None,) * len(self.outputs)
            return
        # Only values the formula reads are checked for later in-place changes:
        # check_output(i) tells whether it reads output i.
        if versions is None:
            versions = {k: v._version for k, v in bound.items() if isinstance(v, Tensor)}
        self.versions = versions if check_inputs else {}
        self.output_versions = tuple(
            o._version if isinstance(o, Tensor) and check_output(i) else None
            for i, o in enumerate(self.outputs)
        )

    def unpack(self, op: str, node) -> dict:
        for k, v in self.versions.items():
            now = self.bound[k]._version
            if now != v:
                raise _modified(op, self.bound[k], now, v)
        inplace_metadata.check_geometry(op, self.bound, self.geometry)
        outs = []
        for i, (o, v) in enumerate(zip(self.outputs, self.output_versions)):
            if self.hooked:
                o = saved_tensors.unpack(o)
            if isinstance(o, Tensor):
                if v is not None and o._version != v:
                    raise _modified(op, o, o._version, v)
                if _C.is_grad_enabled() and is_differentiable(o):  # create_graph: reconnect
                    o = o.detach()
                    attach(o, node, i)
            outs.append(o)
        if self.hooked:
            args = {k: saved_tensors.unpack(v) for k, v in self.bound.items()}
        else:
            args = dict(self.bound)
        args["result"] = outs[0] if len(outs) == 1 else tuple(outs)
        args["results"] = tuple(outs)
        return args


def _modified(op, t, now, then):
    return RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: a tensor of shape {tuple(t.shape)} saved by {op} is at version "
        f"{now}; expected version {then} instead. Hint: clone the tensor before modifying it "
        f"in place."
    )


_FUNCTIONS = frozenset(
    name for name, rows in schema.table().items() if "function" in rows[0]["variants"]
)


def _operator(name: str):
    """The binding an operator's name calls: flambeau's function, else Tensor's method."""
    return getattr(flambeau, name) if name in _FUNCTIONS else getattr(Tensor, name)


def _call(name: str, args: tuple, kwargs: dict):
    return _operator(name)(*args, **kwargs)


def _in_table(name: str) -> bool:
    return name in schema.table()


def _check_inplace(name: str, target) -> None:
    if not target.requires_grad:
        return
    if target.grad_fn is None:
        raise RuntimeError(
            f"{name}: a leaf Variable that requires grad is being used in an in-place operation."
        )
    view = target._view
    if view is not None and view.root.requires_grad and view.root.grad_fn is None:
        raise RuntimeError(
            f"{name}: a view of a leaf Variable that requires grad is being used in an in-place "
            "operation."
        )


# Ops that change a tensor's autograd flags rather than its values.
_NOT_RECORDED = frozenset({"requires_grad_", "detach_"})


def handle(name: str, args: tuple, kwargs: dict):
    """The handler installed in the core's autograd slot."""
    if name in _NOT_RECORDED:
        return RAW_METHODS[name](*args, **kwargs)
    if name in inplace_metadata.OPS:
        return inplace_metadata.record(name, args, kwargs)
    if kwargs.get("out") is not None:
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    inplace = name == "__setitem__" or (name.endswith("_") and not name.startswith("__"))
    # add_ records as add; copy_ and fill_ exist only in place and keep their names.
    base = name[:-1] if inplace and not name.startswith("__") and not _in_table(name) else name
    target = args[0] if inplace else None
    if name.startswith("_foreach_"):
        return _run_foreach(name, args, kwargs)
    if inplace:
        _check_inplace(name, target)
    decompose = derivatives.COMPOSITES.get(base)
    if decompose is not None:
        return _run_composite(decompose, base, args, kwargs, target)
    sch, bound = schema.bind(base, args, kwargs)
    formula = derivatives.FORMULAS.get(sch.key) or derivatives.FORMULAS.get(sch.name)
    # Edges come from the arguments as they are before the call: an in-place
    # call re-roots its target onto the node recorded here.
    nondiff = () if formula is None else formula.nondiff_inputs
    if nondiff and not any(
        _requires_grad(bound[p.name])
        for p in sch.params
        if (p.is_tensor or p.is_tensor_list) and p.name not in nondiff
    ):
        return _call(name, args, kwargs)  # only an argument of which the shape is read
    inputs, edges = [], []
    for p in sch.params:
        v = bound[p.name]
        if p.name in nondiff:
            continue
        if p.is_tensor and isinstance(v, Tensor):
            inputs.append((p.name, None))
            edges.append(grad_edge(v))
        elif p.is_tensor_list and v is not None:
            # Kept frozen: editing the caller's list later changes nothing.
            bound[p.name] = v = tuple(v)
            for j, t in enumerate(v):
                inputs.append((p.name, j))
                edges.append(grad_edge(t))
    keep = None
    if formula is not None and formula.reads is not None:
        # Only what the wanted gradients read is kept (y = x * 3.0 keeps nothing of x).
        keep = formula.kept(
            p.name
            for p in sch.params
            if p.is_tensor and p.name not in nondiff and _requires_grad(bound[p.name])
        )
    first_kept = keep is None or sch.params[0].name in keep
    if inplace and formula is not None and formula.needs_input and first_kept:
        # The formula reads the target's value from before the call: keep a copy
        # that stands for the old value in the graph too (for double backward).
        first = sch.params[0].name
        old = bound[first].detach().clone()
        fn, nr = edges[0]
        if fn is not None and not isinstance(fn, AccumulateGrad):
            attach(old, fn, nr)
        bound[first] = old
    versions = {k: v._version for k, v in bound.items() if isinstance(v, Tensor)}
    result = _call(name, args, kwargs)
    if name == "__setitem__":  # assignment returns nothing; its output is the target
        result = target
    outputs = result if isinstance(result, tuple) else (result,)
    if not inplace and any(o is a for o in outputs if isinstance(o, Tensor) for a in args):
        # The op handed back its input (x.to(x.dtype), contiguous() of a contiguous
        # tensor): it already carries its graph, and a leaf must stay a leaf.
        return result
    diff_outputs = [i for i, o in enumerate(outputs) if is_differentiable(o)]
    if formula is not None and formula.differentiable_outputs is not None:
        diff_outputs = [i for i in diff_outputs if formula.differentiable_outputs[i]]
    if not diff_outputs or (formula is not None and formula.nondifferentiable):
        return result
    node = FormulaNode(
        backward_name(base),
        edges,
        len(outputs),
        derivatives.bind_formula(sch.key, formula, inputs, isinstance(result, tuple)),
        None,
    )
    node._saved = SavedArgs(
        bound,
        outputs,
        # A view's backward reads only its input's geometry, which in-place ops keep.
        check_inputs=(formula is None or formula.needs_input) and base not in VIEW_OPS,
        check_output=(lambda i: True) if formula is None else formula.reads_output,
        versions=versions,
        keep=keep,
        geometry_only=base in VIEW_OPS,
    )
    if anomaly_mode.is_enabled():
        node._record_trace()
    view = target._view if inplace else None
    if view is not None:
        # The op wrote into the root's memory: the root's history now ends in
        # CopySlices, and the view reads from the new root.
        from .views import CopySlices

        root = view.root
        copy = CopySlices(grad_edge(root), view, target, node)
        copy.trace = node.trace  # (anomaly mode: where the in-place op was called)
        attach(root, copy, 0)
        rebase_view(target, view)
        return None if name == "__setitem__" else result
    for i in diff_outputs:
        attach(outputs[i], node, i)
        # (reshape and flatten copy when they cannot view: the copy is not a view)
        if base in VIEW_OPS and not inplace and outputs[i]._is_view_of(args[0]):
            outputs[i]._view = ViewInfo(args[0], outputs[i])
    return None if name == "__setitem__" else result


def _requires_grad(v) -> bool:
    if isinstance(v, (list, tuple)):
        return any(_requires_grad(x) for x in v)
    return isinstance(v, Tensor) and v.requires_grad


# Operators with an overload the core records in C++ (registered by _plan).
_PLANNED: set[str] = set()


def _record(name: str, *args, **kwargs):
    """Calls an operator of a composite's decomposition, recorded when it needs to be:
    through its binding when the core records it in C++ (nll_loss's nll_loss_forward,
    at a twentieth of the Python recorder's cost), else by handle()."""
    if _C.is_grad_enabled() and (_requires_grad(args) or _requires_grad(tuple(kwargs.values()))):
        if name in _PLANNED:
            return _C._autograd_record_call(_operator(name), *args, **kwargs)
        return handle(name, args, kwargs)
    return _call(name, args, kwargs)


def _run_foreach(name: str, args: tuple, kwargs: dict):
    """A multi-tensor operator, recorded as its per-tensor operator on each element; in
    place, each result is then copied into its element (recorded as copy_)."""
    from .derivatives import foreach

    base = foreach.base_name(name)
    sch, bound = schema.bind(name, args, kwargs)
    foreach.check_lengths(name, sch, bound)
    inplace = name.endswith("_")
    targets = bound.get("self")
    if inplace:
        for t in targets:
            _check_inplace(name, t)
    if inplace and base not in foreach.IN_PLACE_ONLY:
        # The per-tensor operators may save their input, which copying the results into the
        # targets would modify: they work on copies (as _run_composite's pieces do).
        bound["self"] = [_record("clone", t) for t in targets]
    calls = foreach.element_calls(base, sch, bound)
    if base in foreach.IN_PLACE_ONLY:
        for a, kw in calls:
            _record(foreach.IN_PLACE_ONLY[base], *a, **kw)
        return targets
    results = tuple(_record(foreach.PER_TENSOR[base], *a, **kw) for a, kw in calls)
    if not inplace:
        return results
    for t, r in zip(targets, results):
        _record("copy_", t, r)
    return targets  # the list it was given, as PyTorch's in-place foreach operators


def _run_composite(decompose, base: str, args: tuple, kwargs: dict, target):
    """Runs a composite operator as its recorded decomposition; in place, the result is
    then copied into the target (recorded as copy_)."""
    sch, bound = schema.bind(base, args, kwargs)
    if target is not None:
        # The pieces may save their input; copying the result into the target
        # must not modify what they saved, so they work on a copy of it.
        first = sch.params[0].name
        bound[first] = _record("clone", bound[first])
    result = decompose(_record, bound)
    if target is None:
        return result
    return handle("copy_", (target, result), {})


def _plan(name: str, sch: schema.Schema) -> None:
    """Registers how the core records calls to one overload in C++ (autograd_record.h),
    when recording it needs nothing the Python handler alone does: no composite
    decomposition, no multi-tensor foreach operator. The core records the overload's
    in-place calls (add_ for add) with the same plan, unless the target is a view or a
    leaf (see inplace_recordable)."""
    if (
        name in _NOT_RECORDED
        or name.endswith("_")
        or name.startswith("_foreach_")
        or name in derivatives.COMPOSITES
    ):
        return
    formula = derivatives.FORMULAS.get(sch.key) or derivatives.FORMULAS.get(sch.name)
    if formula is None or formula.differentiable_outputs is not None:
        return  # the Python handler marks only some outputs differentiable
    names = tuple(p.name for p in sch.params)
    lists = sum(1 << i for i, p in enumerate(sch.params) if p.is_tensor_list)
    nondiff = sum(1 << i for i, n in enumerate(names) if n in formula.nondiff_inputs)
    if nondiff and lists:
        return  # the core skips shape-lending arguments among plain tensors only

    def formula_for(mask: int, tuple_output: bool, lengths: tuple = ()):
        # The inputs as handle() lists them: one per tensor, one per list element.
        inputs, sizes = [], iter(lengths)
        for i, n in enumerate(names):
            if mask >> i & 1:
                inputs += [(n, j) for j in range(next(sizes))] if lists >> i & 1 else [(n, None)]
        return derivatives.bind_formula(sch.key, formula, inputs, tuple_output)

    keeps = formula.reads is not None and not formula.nondifferentiable
    _C._autograd_register_plan(
        sch.key,
        backward_name(name),
        names,
        tuple(p.default for p in sch.params),
        check_inputs=formula.needs_input and name not in VIEW_OPS,
        # Bit i: the formula reads output i, whose version is then checked.
        check_outputs=sum(1 << i for i in range(sch.n_outputs) if formula.reads_output(i)),
        view=name in VIEW_OPS,
        formula_for=None if formula.nondifferentiable else formula_for,
        keep_for=_keep_for(names, formula) if keeps else None,
        # A formula compiled in the core: the engine runs it on the recorded call.
        native=formula.fn if isinstance(formula.fn, _C._NativeFormula) else None,
        lists=lists,
        nondiff=nondiff,
    )
    _PLANNED.add(name)


def _keep_for(names: tuple, formula):
    """keep_for(tensor_mask, grad_mask) -> keep_mask, for the core's C++ recorder: bit i
    of tensor_mask is set when argument i is a tensor, of grad_mask when it is a tensor
    that requires grad; bit i of the result, when argument i is kept (the others reach
    the formula as TensorMeta(shape, dtype, device)). Non-tensors are always kept."""
    every = (1 << len(names)) - 1

    def keep_for(tensor_mask: int, grad_mask: int) -> int:
        kept = formula.kept(n for i, n in enumerate(names) if grad_mask >> i & 1)
        if kept is None:
            return every
        mask = every & ~tensor_mask  # non-tensor arguments
        for i, n in enumerate(names):
            if n in kept:
                mask |= 1 << i
        return mask

    return keep_for


def install() -> None:
    _C._set_autograd_handler(handle)
    hooks = (grad_edge, accumulate_node, ViewInfo, _modified, inplace_metadata.reshaped_error)
    _C._autograd_fast_install(FormulaNode, *hooks, tensor_meta=TensorMeta)
    for name in schema.table():
        for sch in schema.overloads(name):
            _plan(name, sch)
