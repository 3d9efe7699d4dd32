"""flambeau.func.vmap: map a function over a dimension of its inputs.

vmap runs the function once per batch element, on the elements' slices (views, so an
in-place change of an input writes through as under PyTorch's vmap), and stacks the
results along ``out_dims``. It has PyTorch's arguments, checks and error messages; the
differences that follow from running element by element are listed in vmap's
docstring.
"""

from __future__ import annotations

import functools

import flambeau

from ._pytree import broadcast_prefix, flatten_up_to, tree_flatten, tree_unflatten

RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation "
    "out of vmap"
)


def _get_name(func) -> str:
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


def check_randomness(randomness) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )


def _check_out_dims(out_dims, func) -> None:
    leaves = [out_dims] if isinstance(out_dims, int) else tree_flatten(out_dims)[0]
    for dim in leaves:
        if dim is not None and not isinstance(dim, int):
            raise ValueError(
                f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an "
                "int, None or a python collection of ints representing where in the outputs "
                "the vmapped dimension should appear."
            )


def _process_inputs(in_dims, args, func):
    """(batch size, in_dim per leaf (normalized), leaves, args' spec)."""
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or "
            "a (potentially nested) tuple matching the structure of inputs, got: "
            f"{type(in_dims)}."
        )
    if len(args) == 0:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
            "are trying to vmap over a function with no inputs. The latter is unsupported."
        )
    flat_args, spec = tree_flatten(args)
    flat_in_dims = broadcast_prefix(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
            f"the structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but "
            f"inputs has structure {spec}."
        )
    for i, (dim, arg) in enumerate(zip(flat_in_dims, flat_args)):
        if dim is None:
            continue
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an "
                "input but in_dim must be either an integer dimension or None."
            )
        if not isinstance(arg, flambeau.Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an "
                f"input but the input is of type {type(arg)}. We cannot vmap over non-Tensor "
                "arguments, please use None as the respective in_dim"
            )
        ndim = arg.dim()
        if not -ndim <= dim < ndim:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for some "
                f"input, but that input is a Tensor of dimensionality {ndim} so expected "
                f"in_dim to satisfy -{ndim} <= in_dim < {ndim}."
            )
        flat_in_dims[i] = dim % ndim
    sizes = [arg.shape[d] for d, arg in zip(flat_in_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    return sizes[0], flat_in_dims, flat_args, spec


def _flat_out_dims(out_dims, output, spec, func):
    def incompatible():
        return ValueError(
            f"vmap({_get_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            f"compatible with the structure of `outputs`. out_dims has structure "
            f"{tree_flatten(out_dims)[1]} but outputs has structure {spec}."
        )

    if isinstance(output, flambeau.Tensor):
        if out_dims is None or isinstance(out_dims, int):
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        raise incompatible()
    flat = broadcast_prefix(out_dims, spec)
    if flat is None:
        raise incompatible()
    return flat


def _batched_error(name):
    return ValueError(
        f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
    )


def _not_tensor_error(name, value):
    return ValueError(
        f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(value)}. "
        "Did you mean to set out_dims= to None for output?"
    )


def _unbatched(name, column):
    """The one value of an output with out_dim None: the same for every batch element."""
    first = column[0]
    if isinstance(first, flambeau.Tensor):
        for other in column[1:]:
            if other is first:
                continue
            same = (
                isinstance(other, flambeau.Tensor)
                and other.shape == first.shape
                and other.dtype == first.dtype
                and bool(flambeau.equal(other.detach(), first.detach()))
            )
            if not same:  # it depends on the batch: PyTorch's output is a BatchedTensor
                raise _batched_error(name)
    return first


def _stack(name, column, dim):
    for value in column:
        if not isinstance(value, flambeau.Tensor):
            raise _not_tensor_error(name, value)
    shape = column[0].shape
    for value in column[1:]:
        if value.shape != shape:
            raise RuntimeError(
                f"vmap({name}, ...): `{name}` returned tensors of different shapes for "
                f"different batch elements ({list(shape)} and {list(value.shape)}); vmap "
                "needs every element's output to have the same shape"
            )
    return flambeau.stack(column, dim=dim)


def _combine(results, out_dims, func):
    """The per-element outputs stacked along their out_dims, in the outputs' structure."""
    name = _get_name(func)
    flat0, spec = tree_flatten(results[0])
    flat_dims = _flat_out_dims(out_dims, results[0], spec, func)
    rows = [flat0]
    for result in results[1:]:
        flat = flatten_up_to(spec, result)
        if flat is None:
            raise RuntimeError(
                f"vmap({name}, ...): `{name}` returned outputs of different structures for "
                f"different batch elements ({spec} and {tree_flatten(result)[1]})"
            )
        rows.append(flat)
    out = []
    for j, dim in enumerate(flat_dims):
        column = [row[j] for row in rows]
        out.append(_unbatched(name, column) if dim is None else _stack(name, column, dim))
    return tree_unflatten(out, spec)


def _empty_batch(func, flat_in_dims, flat_args, spec, out_dims, kwargs):
    """A batch of size 0: func runs once on zeros of one element's shape, to learn the
    outputs' shapes, and each output gets a batch dimension of size 0."""
    name = _get_name(func)
    probe = []
    for dim, arg in zip(flat_in_dims, flat_args):
        if dim is None:
            probe.append(arg)
        else:
            shape = list(arg.shape)
            del shape[dim]
            probe.append(flambeau.zeros(shape, dtype=arg.dtype))
    state = flambeau.get_rng_state()
    try:
        output = func(*tree_unflatten(probe, spec), **kwargs)
    finally:
        flambeau.set_rng_state(state)
    flat, out_spec = tree_flatten(output)
    dims = _flat_out_dims(out_dims, output, out_spec, func)
    out = []
    for value, dim in zip(flat, dims):
        if dim is None:
            out.append(value)
        elif not isinstance(value, flambeau.Tensor):
            raise _not_tensor_error(name, value)
        else:
            out.append(value.unsqueeze(dim).narrow(dim, 0, 0))
    return tree_unflatten(out, out_spec)


def _vmap_call(func, in_dims, out_dims, randomness, args, kwargs):
    _check_out_dims(out_dims, func)
    batch_size, flat_in_dims, flat_args, spec = _process_inputs(in_dims, args, func)
    if batch_size == 0:
        return _empty_batch(func, flat_in_dims, flat_args, spec, out_dims, kwargs)
    start = flambeau.get_rng_state() if randomness != "different" else None
    results = []
    for i in range(batch_size):
        if randomness == "same" and i:
            flambeau.set_rng_state(start)
        element = [
            arg if dim is None else arg.select(dim, i) for dim, arg in zip(flat_in_dims, flat_args)
        ]
        results.append(func(*tree_unflatten(element, spec), **kwargs))
        if randomness == "error" and not bool(flambeau.equal(flambeau.get_rng_state(), start)):
            flambeau.set_rng_state(start)
            raise RuntimeError(RANDOM_ERROR)
    return _combine(results, out_dims, func)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorizing map: ``vmap(func)`` runs ``func`` over a dimension of its inputs.

    The returned function takes the same inputs as ``func``, each with an extra batch
    dimension, and returns ``func``'s outputs with that dimension added, as PyTorch's
    ``torch.func.vmap``. ``in_dims`` (an int, or a tuple matching the positional
    arguments, nested as they are; ``None`` for an argument that is not mapped) says
    which dimension of each input is the batch; ``out_dims`` (an int, None, or a
    structure matching the outputs) where it goes in each output. Keyword arguments are
    passed to every call unmapped. Calls nest (``vmap(vmap(f))``) and compose with
    flambeau.func's other transforms (``vmap(grad(f))`` computes per-sample gradients).

    ``randomness`` says what random operations inside ``func`` do: ``'error'`` (the
    default) raises RuntimeError, ``'different'`` draws independently for each batch
    element, ``'same'`` gives every element the same draw. ``chunk_size`` is accepted
    (a positive int or None) for PyTorch's sake; it does not change the result.

    How it works: flambeau has no batched-tensor dispatch, so vmap calls ``func`` once
    per batch element, on that element's slices of the mapped inputs (views: an in-place
    change writes through to the input), and stacks the results with
    :func:`flambeau.stack`. The results equal PyTorch's; the differences are in what is
    detected: ``func`` must return outputs of the same shape for every element (so
    data-dependent shapes that PyTorch's vmap rejects work when they agree); an output
    with ``out_dims=None`` is an error only when it differs between elements (PyTorch
    rejects any output that depends on a mapped input); ``randomness='error'`` notices
    random operations by the default generator's state, after the call (the state is
    then restored), and does not see draws from an explicit ``generator=``; in-place
    operations that PyTorch's vmap rejects (writing a batched value into an unbatched
    tensor) are not detected. A batch of size 0 calls ``func`` once on zeros of one
    element's shape to learn its outputs' shapes.

    >>> x = flambeau.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> y = flambeau.tensor([[1.0, 0.0], [1.0, 1.0]])
    >>> flambeau.func.vmap(flambeau.dot)(x, y)
    tensor([1., 7.])
    >>> flambeau.func.vmap(flambeau.mul, in_dims=(1, None))(x, flambeau.tensor([1.0, 10.0]))
    tensor([[ 1., 30.],
            [ 2., 40.]])
    """
    check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, args, kwargs)

    return wrapped
