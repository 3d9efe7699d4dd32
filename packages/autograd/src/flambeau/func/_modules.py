"""flambeau.func's helpers for modules: functional_call, stack_module_state,
replace_all_batch_norm_modules_. They need flambeau.nn (distribution flambeau-nn),
imported when first called, so that flambeau.func loads without it."""

from __future__ import annotations

import contextlib

import flambeau

_MISSING = object()


def _submodule(module, path: str, memo: dict):
    if not path:
        return module
    if path in memo:
        return memo[path]
    from flambeau import nn

    parent_path, _, attr = path.rpartition(".")
    parent = _submodule(module, parent_path, memo)
    try:
        sub = getattr(parent, attr)
    except AttributeError as e:
        raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from e
    if not isinstance(sub, nn.Module):
        raise TypeError(f"submodule `{path}`: {sub} is not an instance of flambeau.nn.Module")
    memo[path] = sub
    return sub


def _swap(module, name: str, value, memo: dict):
    """Puts `value` (a tensor, None, or _MISSING to remove) at the dotted `name` of
    module; returns what was there (_MISSING when nothing was)."""
    if value is not _MISSING and value is not None and not isinstance(value, flambeau.Tensor):
        raise TypeError(f"{value} is not an instance of flambeau.Tensor")
    path, _, attr = name.rpartition(".")
    sub = _submodule(module, path, memo)
    for table in (sub._parameters, sub._buffers):
        if attr in table:
            orig = table[attr]
            if value is _MISSING:
                del table[attr]
            else:
                table[attr] = value
            return orig
    orig = getattr(sub, attr, _MISSING)
    if orig is not _MISSING and orig is not None and not isinstance(orig, flambeau.Tensor):
        raise TypeError(f"attribute `{attr}`: {orig} is not an instance of flambeau.Tensor")
    if value is not _MISSING:
        setattr(sub, attr, value)
    elif orig is not _MISSING:
        delattr(sub, attr)
    return orig


def _named_tensors(module) -> dict:
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untie(module, given: dict) -> dict:
    """`given` extended to every name tied (the same tensor) to a given name."""
    groups: dict[int, set] = {}
    for name, tensor in _named_tensors(module).items():
        groups.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in groups.values() if len(names) > 1 for name in names}
    given_tied = {name for name in given if name in tied}
    untied = dict(given)
    for name in given_tied:
        names = tied[name]
        passed = names & given_tied
        if len(passed) > 1 and len({id(given[n]) for n in passed}) != 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(names)}, which are "
                "tied. Consider using tie_weights=False"
            )
        for other in names:
            untied[other] = given[name]
    return untied


@contextlib.contextmanager
def _reparametrized(module, given: dict, tie_weights: bool, strict: bool):
    values = _untie(module, given) if tie_weights else given
    if strict:
        valid = set(_named_tensors(module))
        missing, unexpected = sorted(valid - set(values)), sorted(set(values) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError(
                f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(msgs)
            )
    memo: dict = {}
    originals: dict = {}
    try:
        for name, value in values.items():
            originals[name] = _swap(module, name, value, memo)
        yield
    finally:
        current = {}
        for name, orig in reversed(list(originals.items())):
            current[name] = _swap(module, name, orig, memo)
        # The module may have reassigned a buffer (self.count = self.count + 1): the
        # caller's dict sees the new value, the module keeps its own.
        given.update({k: current[k] for k in given if current.get(k, _MISSING) is not _MISSING})


def functional_call(
    module,
    parameter_and_buffer_dicts,
    args=None,
    kwargs=None,
    *,
    tie_weights=True,
    strict=False,
):
    """Calls ``module(*args, **kwargs)`` with its parameters and buffers replaced.

    ``parameter_and_buffer_dicts`` maps names as ``module.named_parameters()`` and
    ``named_buffers()`` give them (``"0.weight"``) to the tensors to use instead; it may
    be a tuple or list of such dicts (a name in two of them is a ValueError). Names the
    dict leaves out keep the module's own tensors; the module's own are back in place
    when the call returns, even on error. ``args`` is one argument or a tuple of them.
    ``tie_weights=True``: a tensor the module uses under several names (tied weights)
    is replaced under all of them; ``strict=True``: the dict must name exactly the
    module's parameters and buffers (RuntimeError listing missing and unexpected keys).
    A buffer the module reassigns during the call (``self.n = self.n + 1``) updates the
    dict passed in. Differentiating with respect to the given tensors works with
    :func:`grad`, :func:`vmap` and ordinary autograd.

    >>> from flambeau import nn
    >>> lin = nn.Linear(2, 1)
    >>> params = {"weight": flambeau.tensor([[1.0, 2.0]]), "bias": flambeau.tensor([0.5])}
    >>> flambeau.func.functional_call(lin, params, (flambeau.tensor([[3.0, 4.0]]),))
    tensor([[11.5000]])
    >>> lin.weight is not params["weight"]
    True
    """
    from flambeau import nn

    if isinstance(parameter_and_buffer_dicts, dict):
        given = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries"
            )
        counts: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                "ambiguous"
            )
        given = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
            f"{type(parameter_and_buffer_dicts)}"
        )
    if not isinstance(module, nn.Module):
        raise TypeError(f"{module} is not an instance of flambeau.nn.Module")
    if isinstance(module, nn.DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrized(module, given, tie_weights, strict):
        return module(*args, **kwargs)


def _stacked_leaf(tensors, name: str):
    wants = [t.requires_grad for t in tensors]
    if any(wants) and not all(wants):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    with flambeau.no_grad():
        stacked = flambeau.stack([t.detach() for t in tensors])
    return stacked.requires_grad_(True) if all(wants) else stacked


def stack_module_state(models):
    """``(params, buffers)``: each parameter and buffer of same-shaped modules stacked
    along a new first dimension, by name.

    The stacked parameters are new leaves (requiring grad when the models' do), for
    ensembling with ``vmap(functional_call)`` over copies of one architecture. The
    models must be of one class and all in training or all in eval mode.

    >>> from flambeau import nn
    >>> models = [nn.Linear(3, 2) for _ in range(4)]
    >>> params, buffers = flambeau.func.stack_module_state(models)
    >>> params["weight"].shape, params["bias"].shape, buffers
    (flambeau.Size([4, 2, 3]), flambeau.Size([4, 2]), {})
    """
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Makes every batch norm module in ``root`` (root included) use batch statistics
    only: ``running_mean``, ``running_var`` and ``num_batches_tracked`` become None and
    ``track_running_stats`` False, in place; returns ``root``. Running statistics are
    an in-place update vmap over a model cannot make per sample.

    >>> from flambeau import nn
    >>> net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    >>> _ = flambeau.func.replace_all_batch_norm_modules_(net)
    >>> net[1].running_mean is None, net[1].track_running_stats
    (True, False)
    """
    from flambeau.nn.modules.batchnorm import _BatchNorm

    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
