"""flambeau.nn.utils.stateless: ``functional_call``, the deprecated name of
:func:`flambeau.func.functional_call` (torch.nn.utils.stateless)."""

from __future__ import annotations

import warnings

__all__ = ["functional_call"]


def _reparametrize_module(module, parameters_and_buffers, tie_weights: bool = False,
                          strict: bool = False, stack_weights: bool = False):  # fmt: skip
    """A context in which ``module``'s parameters and buffers named in
    ``parameters_and_buffers`` are the given tensors, its own back in place on exit
    (PyTorch's private helper of the same name, which libraries call directly).
    ``stack_weights`` only orders PyTorch's restoring; nothing here depends on it.

    >>> from flambeau import nn
    >>> lin = nn.Linear(2, 1)
    >>> with _reparametrize_module(lin, {"bias": flambeau.tensor([5.0])}):
    ...     lin.bias
    tensor([5.])
    >>> lin.bias.requires_grad
    True
    """
    from flambeau.func._modules import _reparametrized

    return _reparametrized(module, parameters_and_buffers, tie_weights, strict)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):  # fmt: skip
    """Calls ``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameters_and_buffers`` replaced: :func:`flambeau.func.functional_call`, of which
    this is the deprecated name (FutureWarning, as in PyTorch 2.0 and later).

    >>> import warnings
    >>> from flambeau import nn
    >>> from flambeau.nn.utils.stateless import functional_call
    >>> lin = nn.Linear(2, 1)
    >>> params = {"weight": flambeau.tensor([[1.0, 2.0]]), "bias": flambeau.tensor([0.5])}
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     functional_call(lin, params, (flambeau.tensor([[3.0, 4.0]]),))
    tensor([[11.5000]])
    """
    warnings.warn(
        "`flambeau.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and "
        "will be removed in a future version of PyTorch. Please use "
        "`flambeau.func.functional_call` instead which is a drop-in replacement.",
        FutureWarning,
        stacklevel=2,
    )
    from flambeau.func import functional_call as _functional_call

    return _functional_call(
        module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict
    )
