"""TorchScript's module classes, as ``nn.Module`` subclasses with the JIT disabled.

Loaded on first use of one of these names (flambeau.jit's ``__getattr__``), since they
need flambeau-nn, which the core does not depend on.

A user's ``ScriptModule`` subclass is an ordinary module: its ``forward`` (with or
without ``@script_method``) runs in Python, as in PyTorch with ``PYTORCH_JIT=0``.
"""

from __future__ import annotations

from flambeau.nn import Module


class ScriptModule(Module):
    """Base class of scripted modules; here an ``nn.Module`` whose methods run eagerly.

    >>> class AddBias(flambeau.jit.ScriptModule):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.bias = flambeau.nn.Parameter(flambeau.ones(2))
    ...     @flambeau.jit.script_method
    ...     def forward(self, x):
    ...         return x + self.bias
    >>> AddBias()(flambeau.zeros(2))
    tensor([1., 1.], grad_fn=<AddBackward0>)
    """

    def __init__(self, arg=None):
        del arg  # the C++ module PyTorch's JIT would wrap
        super().__init__()


class RecursiveScriptModule(ScriptModule):
    """What ``script`` makes of an ``nn.Module`` in PyTorch; here ``script`` returns the
    module itself, so this class only serves ``isinstance`` checks.

    >>> model = flambeau.jit.script(flambeau.nn.Linear(2, 2))
    >>> isinstance(model, flambeau.jit.RecursiveScriptModule)
    False
    """

    def __init__(self, arg=None):
        super().__init__(arg)


def _cannot_trace(cls_name: str) -> RuntimeError:
    return RuntimeError(
        f"flambeau.jit.{cls_name} cannot be built: flambeau does not trace "
        "(flambeau.jit.trace returns the module itself)"
    )


class TracedModule(ScriptModule):
    """What ``trace`` makes of a submodule in PyTorch. flambeau does not trace, so it
    cannot be built (nor can it with PyTorch's JIT disabled); it serves ``isinstance``.

    >>> model = flambeau.jit.trace(flambeau.nn.Linear(2, 2), flambeau.ones(2))
    >>> isinstance(model, flambeau.jit.TracedModule)
    False
    """

    def __init__(self, orig, id_set=None, _compilation_unit=None):
        raise _cannot_trace(type(self).__name__)


class TopLevelTracedModule(TracedModule):
    """What ``trace`` returns for a module in PyTorch; see :class:`TracedModule`.

    >>> issubclass(flambeau.jit.TopLevelTracedModule, flambeau.jit.ScriptModule)
    True
    """


class ONNXTracedModule(Module):
    """The tracer's wrapper behind PyTorch's ONNX export: calling it records a graph,
    which flambeau cannot do, so ``forward`` raises RuntimeError.

    >>> wrapper = flambeau.jit.ONNXTracedModule(flambeau.nn.Linear(2, 2))
    >>> isinstance(wrapper, flambeau.nn.Module)
    True
    """

    def __init__(
        self, inner, strict=True, force_outplace=False, return_inputs=False,
        return_inputs_states=False,
    ):  # fmt: skip
        super().__init__()
        self.inner = inner
        self.strict = strict
        self._force_outplace = force_outplace
        self._return_inputs = return_inputs
        self._return_inputs_states = return_inputs_states

    def forward(self, *args):
        raise RuntimeError(
            "flambeau.jit.ONNXTracedModule: flambeau has no tracer to record a graph of "
            f"{type(self.inner).__name__}; export to ONNX from PyTorch"
        )
