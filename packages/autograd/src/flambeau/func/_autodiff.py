"""flambeau.func's derivative transforms on flambeau's reverse-mode autograd.

Each transform marks the inputs it differentiates with respect to as fresh graph
inputs, runs the function under grad mode and asks flambeau.autograd.grad for the
derivatives. Forward-mode products (jvp, linearize) use the double-vjp identity: with
g(u) = J^T u (a vjp built with create_graph=True, so that it is differentiable in u),
the vjp of g with cotangent v is J v (flambeau.autograd.double_vjp, shared with
flambeau.autograd.forward_ad).

Nesting (``grad(grad(f))``, ``jacfwd(jacrev(f))``) and mixing with ordinary autograd
work by keeping results on the graph when they depend on a tensor that requires grad
from outside the transform (an input the caller differentiates, a tensor captured by
the function); results that depend only on the transform's own inputs are detached,
so that ``grad(f)(x)`` is a plain tensor, as in PyTorch.
"""

from __future__ import annotations

import functools

import flambeau
from flambeau.autograd import grad as _autograd_grad
from flambeau.autograd.double_vjp import Linearized, lower, release
from flambeau.autograd.double_vjp import reaches_outside as _reaches_outside
from flambeau.autograd.grad_mode import enable_grad

from ._pytree import flatten_up_to, tree_flatten, tree_map, tree_unflatten, treespec_pprint
from ._vmap import RANDOM_ERROR, check_randomness

Tensor = flambeau.Tensor

# ---- arguments -------------------------------------------------------------------------


def _check_argnums(argnums, num_args: int):
    """argnums made non-negative, after PyTorch's checks."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        return _wrap_argnum(argnums, num_args)
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        wrapped = tuple(_wrap_argnum(a, num_args) for a in argnums)
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return wrapped
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _wrap_argnum(argnum, num_args: int) -> int:
    if not isinstance(argnum, int) or isinstance(argnum, bool):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _slice_argnums(args, argnums) -> tuple:
    return (args[argnums],) if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def _replace_args(args, new, argnums) -> tuple:
    positions = (argnums,) if isinstance(argnums, int) else argnums
    out = list(args)
    for i, value in zip(positions, new):
        out[i] = value
    return tuple(out)


def _error_if_complex(api: str, values, is_input: bool) -> None:
    for i, t in enumerate(tree_flatten(values)[0]):
        if isinstance(t, Tensor) and t.dtype.is_complex:
            kind = "inputs" if is_input else "outputs"
            raise RuntimeError(
                f"{api}: Expected all {kind} to be real but received complex tensor at "
                f"flattened input idx: {i}"
            )


# ---- graph bookkeeping -------------------------------------------------------------------


def _make_inputs(flat, outer: bool):
    """Fresh graph inputs for the tensors in `flat`, and the ids of the new leaves.

    A tensor the caller is differentiating (it requires grad, and grad mode is on
    outside) gets a view of itself, so that derivatives stay connected to the caller's
    graph; any other becomes a new leaf.
    """
    xs, local = [], set()
    for t in flat:
        if not isinstance(t, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
        if outer and t.requires_grad:
            xs.append(t.view_as(t))
        else:
            x = t.detach().requires_grad_(True)
            local.add(id(x))
            xs.append(x)
    return xs, local


def _release(xs, local) -> None:
    """The transform is returning: its own leaves are no longer anyone's inputs, so an
    enclosing transform does not count them as outside its graph (see release)."""
    release([x for x in xs if id(x) in local])


def _lower(tree, local, outer: bool):
    """tree with each tensor detached unless it depends on something outside the
    transform (and grad mode was on outside)."""
    return tree_map(lambda t: lower(t, local, outer), tree)


def _vjp(outputs, inputs, cotangents, *, create_graph: bool, retain_graph: bool = True):
    """sum_i cotangent_i^T d output_i / d inputs, zeros where an input is unused."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    grads = [None] * len(inputs)
    if pairs:
        with enable_grad():
            grads = _autograd_grad(
                [o for o, _ in pairs],
                inputs,
                [c for _, c in pairs],
                retain_graph=retain_graph,
                create_graph=create_graph,
                allow_unused=True,
            )
    return [flambeau.zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


# ---- grad, grad_and_value ----------------------------------------------------------------


def _grad_and_value_call(func, argnums, has_aux, args, kwargs):
    outer = flambeau.is_grad_enabled()
    argnums = _check_argnums(argnums, len(args))
    diff = _slice_argnums(args, argnums)
    flat, spec = tree_flatten(diff)
    with enable_grad():
        xs, local = _make_inputs(flat, outer)
        output = func(*_replace_args(args, tree_unflatten(xs, spec), argnums), **kwargs)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(
                    "grad_and_value(f)(*args): output of function f should be a tuple: "
                    "(output, aux) if has_aux is True"
                )
            output, aux = output
        if not isinstance(output, Tensor):
            raise RuntimeError(
                "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                f"{type(output)}"
            )
        if output.dim() != 0:
            raise RuntimeError(
                "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                f"tensor with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                "APIs instead?"
            )
        keep = outer and _reaches_outside([output], local)
        grads = _vjp([output], xs, [None], create_graph=keep, retain_graph=keep)
    _release(xs, local)
    grads = tree_unflatten(_lower(grads, local, outer), spec)
    if isinstance(argnums, int):
        grads = grads[0]
    value = _lower(output, local, outer)
    if has_aux:
        return grads, (value, _lower(aux, local, outer))
    return grads, value


def grad_and_value(func, argnums=0, has_aux=False):
    """Like :func:`grad`, but the returned function gives ``(gradient, value)``.

    ``value`` is ``func``'s output; with ``has_aux=True`` the result is
    ``(gradient, (value, aux))``.

    >>> x = flambeau.tensor([1.0, 2.0, 3.0])
    >>> flambeau.func.grad_and_value(lambda x: (x**2).sum())(x)
    (tensor([2., 4., 6.]), tensor(14.))
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value_call(func, argnums, has_aux, args, kwargs)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar-valued function: ``grad(f)(x)`` is df/dx at x.

    ``argnums`` (an int or a tuple of ints) picks the positional arguments to
    differentiate with respect to; each may be a tensor or a nested tuple, list or dict
    of tensors, and its gradient has the same structure (a tuple of them for a tuple
    ``argnums``). ``func`` must return a scalar tensor, or ``(scalar, aux)`` with
    ``has_aux=True``, when the result is ``(gradient, aux)``. Keyword arguments are
    passed through undifferentiated. Transforms nest: ``grad(grad(f))`` is the second
    derivative, ``vmap(grad(f))`` gives per-sample gradients; and the result is
    differentiable by ordinary autograd with respect to tensors from outside (an input
    that requires grad, a tensor ``func`` captures). Errors are PyTorch's: RuntimeError
    for a non-scalar output or bad ``argnums``, ValueError for a non-tensor input.

    >>> x = flambeau.tensor([1.0, 2.0, 3.0])
    >>> flambeau.func.grad(lambda x: (x**3).sum())(x)
    tensor([ 3., 12., 27.])
    >>> flambeau.func.grad(flambeau.func.grad(lambda x: x**3))(flambeau.tensor(2.0))
    tensor(12.)
    >>> flambeau.func.grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(x, x + 1)
    (tensor([2., 3., 4.]), tensor([1., 2., 3.]))
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = _grad_and_value_call(func, argnums, has_aux, args, kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


# ---- vjp, jvp, linearize -----------------------------------------------------------------


def _check_float_outputs(flat_out) -> None:
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(o)}")
        if not (o.is_floating_point() or o.dtype.is_complex):
            raise RuntimeError(
                "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                f"Tensor with dtype {o.dtype}"
            )


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``: vjp_fn(cotangents) is the vector-Jacobian product.

    ``cotangents`` has the structure of ``func``'s output; ``vjp_fn`` returns a tuple
    with one entry per primal (each shaped like its primal) and may be called several
    times. With ``has_aux=True``, ``func`` returns ``(output, aux)`` and vjp returns
    ``(output, vjp_fn, aux)``.

    >>> x = flambeau.tensor([1.0, 2.0])
    >>> out, vjp_fn = flambeau.func.vjp(lambda x: x**2, x)
    >>> out
    tensor([1., 4.])
    >>> vjp_fn(flambeau.tensor([1.0, 10.0]))
    (tensor([ 2., 40.]),)
    """
    outer = flambeau.is_grad_enabled()
    flat, spec = tree_flatten(primals)
    with enable_grad():
        xs, local = _make_inputs(flat, outer)
        output = func(*tree_unflatten(xs, spec))
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(
                    "vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                    "if has_aux is True"
                )
            output, aux = output
    flat_out, out_spec = tree_flatten(output)
    _check_float_outputs(flat_out)
    connected = outer and _reaches_outside(flat_out, local)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        flat_ct = flatten_up_to(out_spec, cotangents)
        if flat_ct is None:
            ct_spec = tree_flatten(cotangents)[1]
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {treespec_pprint(ct_spec)}, "
                f"primal output: {treespec_pprint(out_spec)}"
            )
        for c in flat_ct:
            if not isinstance(c, Tensor):
                raise RuntimeError(f"Expected tensors, got unsupported type {type(c)}")
        if create_graph is None:
            create_graph = flambeau.is_grad_enabled() and (
                connected or any(c.requires_grad for c in flat_ct)
            )
        for i, (o, c) in enumerate(zip(flat_out, flat_ct)):
            if o.shape != c.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and "
                    f"output[{i}] has a shape of {o.shape}."
                )
        grads = _vjp(flat_out, xs, flat_ct, create_graph=create_graph, retain_graph=retain_graph)
        return tree_unflatten(_lower(grads, local, create_graph), spec)

    _release(xs, local)
    result = (_lower(output, local, outer), vjp_fn)
    return result + (_lower(aux, local, outer),) if has_aux else result


_JVP = "jvp(f, primals, tangents)"


def _check_float_primals(flat) -> None:
    """Forward mode differentiates floating-point and complex primals only (PyTorch's
    make_dual check, which jvp, linearize and jacfwd reach)."""
    for t in flat:
        if isinstance(t, Tensor) and not (t.is_floating_point() or t.dtype.is_complex):
            raise ValueError(f"Expected primal to be floating point or complex, but got: {t.dtype}")


def _check_tensor_list(flat, argname: str) -> None:
    if not flat:
        raise RuntimeError(f"{_JVP}: Expected {argname} to contain at least one Tensor.")
    for t in flat:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{_JVP}: Expected {argname} to only contain Tensors, got {type(t)}")


def _check_jvp_outputs(output, flat_out) -> None:
    if not flat_out or (len(flat_out) == 1 and flat_out[0] is None):
        raise RuntimeError(
            f"{_JVP}: Expected f to be a function that has non-empty output (got output = "
            f"{flat_out})"
        )
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"{_JVP}: expected f(*primals) to return only tensors, got unsupported type "
                f"{type(o)}"
            )


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J v)``: the Jacobian-vector product at ``primals``.

    ``primals`` is a tuple of the positional arguments (tensors, or nested tuples,
    lists and dicts of them); ``tangents`` has the same structure. The second result has
    the structure of ``func``'s output. ``strict=True`` makes an output that does not
    depend on the inputs an error (otherwise its product is zeros); ``has_aux=True``
    takes ``(output, aux)`` from ``func`` and returns ``(output, jvp_out, aux)``.

    flambeau has no forward-mode autograd: J v is computed by the double-vjp identity
    (the vjp of ``u -> J^T u``, itself differentiated by reverse mode), which costs two
    backward passes and needs the operators' backward formulas to be differentiable.

    >>> x = flambeau.tensor([1.0, 2.0])
    >>> flambeau.func.jvp(lambda x: x**2, (x,), (flambeau.tensor([1.0, 0.5]),))
    (tensor([1., 4.]), tensor([2., 2.]))
    """
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    flat, spec = tree_flatten(primals)
    flat_t = flatten_up_to(spec, tangents)
    if flat_t is None:
        raise RuntimeError(
            f"{_JVP}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {spec} and tangents with structure {tree_flatten(tangents)[1]}"
        )
    _check_tensor_list(flat, "primals")
    _check_tensor_list(flat_t, "tangents")
    for p, t in zip(flat, flat_t):
        if p.shape != t.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(p.shape)} "
                f"while the given forward gradient is of size {list(t.shape)}."
            )
    _check_float_primals(flat)
    outer = flambeau.is_grad_enabled()
    with enable_grad():
        xs, local = _make_inputs(flat, outer)
        output = func(*tree_unflatten(xs, spec))
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(
                    f"{_JVP}: output of function f should be a tuple: (output, aux) if has_aux "
                    "is True"
                )
            output, aux = output
        flat_out, out_spec = tree_flatten(output)
        _check_jvp_outputs(output, flat_out)
        lin = Linearized(flat_out, xs)
        keep = outer and (_reaches_outside(flat_out, local) or any(t.requires_grad for t in flat_t))
        jvs = lin.apply(flat_t, create_graph=keep)
    if strict and any(jv is None for jv in jvs):
        raise RuntimeError(
            "jvp(f, primals, tangents, strict=True): The output of f is independent of the "
            "inputs. This is not allowed with strict=True."
        )
    _release(xs, local)
    local |= lin.local_ids
    jvs = [flambeau.zeros_like(o) if jv is None else jv for jv, o in zip(jvs, flat_out)]
    primal_out = _lower(output, local, outer)
    tangent_out = tree_unflatten(_lower(jvs, local, outer), out_spec)
    if has_aux:
        return primal_out, tangent_out, _lower(aux, local, outer)
    return primal_out, tangent_out


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``, where ``jvp_fn(*tangents)`` is the Jacobian-vector
    product at ``primals``: the work of running ``func`` is done once, each call of
    ``jvp_fn`` costs one backward pass (the double-vjp identity, as :func:`jvp`).

    >>> x = flambeau.tensor([0.0, 1.0])
    >>> out, jvp_fn = flambeau.func.linearize(lambda x: 3 * x**2, x)
    >>> jvp_fn(flambeau.tensor([1.0, 1.0]))
    tensor([0., 6.])
    >>> jvp_fn(flambeau.tensor([0.0, 2.0]))
    tensor([ 0., 12.])
    """
    outer = flambeau.is_grad_enabled()
    flat, spec = tree_flatten(primals)
    _check_float_primals(flat)
    with enable_grad():
        xs, local = _make_inputs(flat, outer)
        output = func(*tree_unflatten(xs, spec))
        flat_out, out_spec = tree_flatten(output)
        _check_jvp_outputs(output, flat_out)
        lin = Linearized(flat_out, xs)
    connected = outer and _reaches_outside(flat_out, local)
    local_all = local | lin.local_ids

    def jvp_fn(*tangents):
        flat_t = flatten_up_to(spec, tangents)
        if flat_t is None:
            raise RuntimeError(
                f"Expected the tangents {tree_flatten(tangents)[1]} to have the same argspec as "
                f"the primals {spec}"
            )
        for i, (p, t) in enumerate(zip(flat, flat_t)):
            for what, mine, theirs in (
                ("shape", getattr(t, "shape", None), p.shape),
                ("dtype", getattr(t, "dtype", None), p.dtype),
            ):
                if mine != theirs:
                    raise RuntimeError(
                        f"tangent:{i} with {what} {mine} in flattened pytree doesn't match the "
                        f"{what} {theirs} of the corresponding primal."
                    )
        now = flambeau.is_grad_enabled()
        keep = now and (connected or any(t.requires_grad for t in flat_t))
        jvs = lin.apply(flat_t, create_graph=keep)
        jvs = [flambeau.zeros_like(o) if jv is None else jv for jv, o in zip(jvs, flat_out)]
        return tree_unflatten(_lower(jvs, local_all, now), out_spec)

    _release(xs, local)
    return _lower(output, local, outer), jvp_fn


# ---- Jacobians ----------------------------------------------------------------------------


def _jacobian_call(api, func, argnums, has_aux, args, randomness=None):
    """The Jacobian of func's outputs with respect to args[argnums], structured as
    PyTorch's jacrev and jacfwd structure it: jacrev builds it row by row (one backward
    pass per output element), jacfwd column by column (one Jacobian-vector product per
    input element, see _columns)."""
    _error_if_complex(api, args, is_input=True)
    outer = flambeau.is_grad_enabled()
    argnums = _check_argnums(argnums, len(args))
    diff = _slice_argnums(args, argnums)
    flat, spec = tree_flatten(diff)
    if api == "jacfwd":
        _check_float_primals(flat)
    state = flambeau.get_rng_state() if randomness == "error" else None
    with enable_grad():
        xs, local = _make_inputs(flat, outer)
        output = func(*_replace_args(args, tree_unflatten(xs, spec), argnums))
        if state is not None and not bool(flambeau.equal(flambeau.get_rng_state(), state)):
            flambeau.set_rng_state(state)
            raise RuntimeError(RANDOM_ERROR)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                who = "jvp(f, primals, tangents)" if api == "jacfwd" else "vjp(f, *primals)"
                raise RuntimeError(
                    f"{who}: output of function f should be a tuple: (output, aux) if has_aux "
                    "is True"
                )
            output, aux = output
        flat_out, out_spec = tree_flatten(output)
        if api == "jacfwd":
            _check_jvp_outputs(output, flat_out)
        else:
            _check_float_outputs(flat_out)
        _error_if_complex(api, flat_out, is_input=False)
        keep = outer and _reaches_outside(flat_out, local)
        blocks = None
        if api == "jacfwd" and _prefer_columns(flat_out, xs):
            blocks, lin_local = _columns(flat_out, xs, keep)
            local |= lin_local
        if blocks is None:
            blocks = _rows(flat_out, xs, keep)
            if api == "jacfwd":  # jacfwd's Jacobian has its outputs' dtypes, as a tangent
                blocks = [[b.to(o.dtype) for b in bs] for o, bs in zip(flat_out, blocks)]
        per_output = []
        for jacs in blocks:
            jac = tree_unflatten(_lower(jacs, local, outer), spec)
            per_output.append(jac[0] if isinstance(argnums, int) else jac)
    _release(xs, local)
    result = tree_unflatten(per_output, out_spec)
    if has_aux:
        return result, _lower(aux, local, outer)
    return result


def _prefer_columns(flat_out, xs) -> bool:
    """Whether jacfwd should build the Jacobian by columns (_columns) rather than rows
    (_rows). Both give the same Jacobian; the cost differs. A column costs a backward
    pass through the graph of J^T u (measured at about 1.5 of a row's backward pass
    through the function's graph), plus one pass to build it; a row costs one pass. So
    columns win when the outputs outnumber the inputs by more than about 3/2 -- the
    case jacfwd is for -- and a square Jacobian (hessian's jacfwd of a gradient) is
    cheaper by rows, as before."""
    n_out = sum(o.numel() for o in flat_out if o.requires_grad)
    n_in = sum(x.numel() for x in xs)
    return 2 * n_out > 3 * n_in + 1


def _zeros_block(o, x, dtype):
    return flambeau.zeros(tuple(o.shape) + tuple(x.shape), dtype=dtype)


def _rows(flat_out, xs, keep):
    """Reverse mode: for each output o, the blocks d o / d x (one per input x), built
    from one backward pass per element of o."""
    blocks = []
    for o in flat_out:
        n = o.numel()
        if not o.requires_grad or n == 0:
            blocks.append([_zeros_block(o, x, x.dtype) for x in xs])
            continue
        basis = flambeau.eye(n, dtype=o.dtype)
        rows = [_vjp([o], xs, [basis[k].reshape(o.shape)], create_graph=keep) for k in range(n)]
        blocks.append(
            [
                flambeau.stack([row[j] for row in rows]).reshape(tuple(o.shape) + tuple(x.shape))
                for j, x in enumerate(xs)
            ]
        )
    return blocks


def _probe(o):
    """A fixed, varied, nonzero cotangent shaped like o (no draw from the global RNG:
    jacfwd must not change the random state)."""
    k = flambeau.arange(o.numel(), dtype=o.dtype, device=o.device)
    return (1.0 + 0.5 * flambeau.sin(0.7 * k + 0.3)).reshape(o.shape)


def _columns(flat_out, xs, keep):
    """Forward mode: for each output o, the blocks d o / d x (one per input x), built
    column by column from one Jacobian-vector product per input element (the tangent
    a basis vector of that input), so that the cost grows with the number of inputs,
    not outputs -- what jacfwd is for.

    flambeau's Jacobian-vector products come from the double-vjp identity (see
    flambeau.autograd.double_vjp): one backward pass with create_graph builds
    g(u) = J^T u, linear in the cotangents u, and each column J e_k is one backward
    pass through g, with respect to u. (A vmap over the basis would batch nothing:
    flambeau's vmap calls its function once per element, so the columns are taken in a
    plain loop.)

    The cotangents u are a nonzero probe (not Linearized's zeros), so that g's value
    J^T u checks the columns: g[k] = <u, J e_k> for every input element k. It fails
    where an operation's backward is not itself differentiable (a custom Function whose backward is
    once_differentiable, which runs unrecorded): the first backward pass counts it, the
    second misses it. There, and where building or differentiating g raises, this
    returns (None, set()) and the caller falls back to reverse mode (_rows), which
    needs only first derivatives -- correct, at one backward pass per output element.
    Otherwise it returns the blocks and the ids of the probes (leaves made here).
    """
    columns = [[] for _ in xs]  # columns[j][c]: J e_c for element c of xs[j], per live output
    try:
        lin = Linearized(flat_out, xs, cotangent=_probe)
        live, us, gs = lin.live, lin.us, lin.gs
        for j, (x, g) in enumerate(zip(xs, gs)):
            if g is None or not g.requires_grad:
                continue  # no column depends on u: all zeros (the check tests g = 0)
            basis = flambeau.eye(x.numel(), dtype=g.dtype, device=g.device)
            tangents = [None] * len(xs)
            for c in range(x.numel()):
                tangents[j] = basis[c].reshape(x.shape)
                jv = lin.apply(tangents, create_graph=keep)
                columns[j].append(
                    [flambeau.zeros_like(flat_out[i]) if jv[i] is None else jv[i] for i in live]
                )
    except (RuntimeError, NotImplementedError):
        return None, set()
    blocks = []  # blocks[j][n]: the (numel of live output n, numel of xs[j]) block
    for j in range(len(xs)):
        if columns[j]:
            blocks.append(
                [
                    flambeau.stack([col[n].reshape(-1) for col in columns[j]], dim=1)
                    for n in range(len(live))
                ]
            )
        else:
            blocks.append(None)
        if gs[j] is not None and not _consistent(gs[j], us, blocks[j]):
            return None, set()
    result = []
    for i, o in enumerate(flat_out):
        per_input = []
        for j, x in enumerate(xs):
            if i not in live or blocks[j] is None:
                # a tangent has its output's dtype
                per_input.append(_zeros_block(o, x, o.dtype))
            else:
                block = blocks[j][live.index(i)]
                per_input.append(block.reshape(tuple(o.shape) + tuple(x.shape)))
        result.append(per_input)
    return result, lin.local_ids


def _consistent(g, us, blocks) -> bool:
    """Whether g = J^T u agrees with the columns of J: g[k] = sum_n <u_n, block_n[:, k]>,
    to a tolerance relative to the magnitudes involved (the square root of the epsilon
    of the least precise dtype among g and the outputs)."""
    with flambeau.no_grad():
        g = g.detach().reshape(-1)
        if blocks is None:
            return not bool((g != 0).any())
        dot = flambeau.zeros_like(g)
        scale = g.abs()
        for u, b in zip(us, blocks):
            b = b.detach()
            uf = u.detach().reshape(-1)
            dot = dot + uf @ b
            scale = scale + uf.abs() @ b.abs()
        eps = max(float(flambeau.finfo(t.dtype).eps) for t in [g, *us])
        rel = eps**0.5
        return not bool(((g - dot).abs() > rel * scale + 1e-30).any())


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` with respect to ``args[argnums]``, by reverse mode.

    For an output of shape ``S`` and an input of shape ``T`` the Jacobian has shape
    ``S + T``. Outputs may be nested tuples, lists and dicts of tensors, and so may the
    inputs ``argnums`` picks: the result nests as the outputs, each holding the
    Jacobians with respect to the input (a tuple of them for a tuple ``argnums``).
    ``has_aux=True``: ``func`` returns ``(output, aux)``, the result is
    ``(jacobian, aux)``. ``chunk_size`` (None or a positive int) is accepted for
    PyTorch's sake; flambeau computes the rows one by one (one backward pass each).

    >>> x = flambeau.tensor([1.0, 2.0])
    >>> flambeau.func.jacrev(lambda x: x**2)(x)
    tensor([[2., 0.],
            [0., 4.]])
    >>> flambeau.func.jacrev(lambda x, y: x * y, argnums=(0, 1))(x, 3 * x)
    (tensor([[3., 0.],
            [0., 6.]]), tensor([[1., 0.],
            [0., 2.]]))
    """
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        return _jacobian_call("jacrev", func, argnums, has_aux, args)

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` with respect to ``args[argnums]``, with jacfwd's
    arguments and result (the structure :func:`jacrev` describes).

    As PyTorch's, jacfwd builds the Jacobian column by column, one Jacobian-vector
    product per element of the inputs it differentiates, so it is the cheaper of the two
    when outputs outnumber inputs. ``func`` runs once; the products come from
    flambeau's double-vjp forward mode (see :func:`jvp`): one backward pass to build
    ``J^T u``, then one per input element. A Jacobian with not many more rows than
    columns (hessian's jacfwd of a gradient) is cheaper by rows, and is built by reverse
    mode, one backward pass per output element; so is one where an operation's backward
    cannot itself be differentiated (a ``once_differentiable`` custom Function).
    The result is the same either way. ``randomness`` is ``'error'``
    (a random operation in ``func`` raises RuntimeError, as under PyTorch, where jacfwd
    vmaps ``func``), ``'different'`` or ``'same'`` (allowed; as ``func`` runs once,
    every column sees the same draw).

    >>> x = flambeau.tensor([1.0, 2.0])
    >>> flambeau.func.jacfwd(lambda x: x**3)(x)
    tensor([[ 3.,  0.],
            [ 0., 12.]])
    """

    @functools.wraps(func)
    def wrapper(*args):
        check_randomness(randomness)
        return _jacobian_call("jacfwd", func, argnums, has_aux, args, randomness)

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar function: ``jacfwd(jacrev(func, argnums), argnums)``.

    >>> A = flambeau.tensor([[1.0, 2.0], [0.0, 3.0]])
    >>> flambeau.func.hessian(lambda x: x @ A @ x)(flambeau.tensor([1.0, 1.0]))
    tensor([[2., 2.],
            [2., 6.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
