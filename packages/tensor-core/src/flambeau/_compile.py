"""``flambeau.compile``: flambeau runs eagerly, so compiling returns what it is given.

PyTorch's ``torch.compile`` traces a model into fused kernels; the result computes the
same values as the model. flambeau has no compiler, and returning the model (or
function) unchanged keeps that contract: a program that compiles runs unchanged,
without the speed-up. Arguments are checked as PyTorch checks them, so a mistake
still surfaces here.
"""

from __future__ import annotations

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(  # noqa: A001 - PyTorch's name
    model=None,
    *,
    fullgraph: bool = False,
    dynamic=None,
    backend=None,
    mode=None,
    options=None,
    name=None,
    disable: bool = False,
    recompile_limit=None,
    isolate_recompiles: bool = False,
    shapes_spec=None,
):
    """Returns ``model`` itself (flambeau executes eagerly); without a model, a decorator.

    >>> def f(x):
    ...     return x.sin() + 1
    >>> compiled = flambeau.compile(f)
    >>> compiled(flambeau.zeros(2))
    tensor([1., 1.])
    """
    del fullgraph, dynamic, backend, name, disable, recompile_limit, isolate_recompiles
    del shapes_spec
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    return model
