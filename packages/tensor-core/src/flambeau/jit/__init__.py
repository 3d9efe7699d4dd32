"""``flambeau.jit``: PyTorch's ``torch.jit`` as it behaves with the JIT disabled.

flambeau has no TorchScript compiler. As under ``PYTORCH_JIT=0`` (PyTorch's "Disable
JIT for Debugging"), ``script`` returns the function or module it is given, ``trace``
returns it too (after running it once with the example inputs, as tracing does), the
decorators (``ignore``, ``unused``, ``export``...) leave functions as written and
``is_scripting()``/``is_tracing()`` are False, so scripted and traced programs run
eagerly. TorchScript archives (``save``, ``load``) do not port: flambeau can neither
write nor run them. See docs/design/eager-jit.rst.
"""

from typing import Final  # noqa: F401 - torch.jit.Final is typing.Final

# The private names (_overload, _drop...) are torch.jit's that library code calls.
from flambeau.futures import Future
from flambeau.jit._annotations import (
    Attribute,
    _unwrap_optional,  # noqa: F401
    annotate,
    isinstance,
)
from flambeau.jit._archives import (
    export_opnames,
    jit_module_from_flatbuffer,
    load,
    save,
    save_jit_module_to_flatbuffer,
)
from flambeau.jit._async import fork, wait
from flambeau.jit._frontend import (
    _overload,  # noqa: F401
    _overload_method,  # noqa: F401
    interface,
    is_scripting,
    is_tracing,
    script,
    script_if_tracing,
    script_method,
    trace,
    trace_module,
)
from flambeau.jit._modifiers import (
    _drop,  # noqa: F401
    export,
    ignore,
    unused,
)
from flambeau.jit._optimizations import (
    enable_onednn_fusion,
    freeze,
    fuser,
    last_executed_optimized_graph,
    onednn_fusion_enabled,
    optimize_for_inference,
    optimized_execution,
    run_frozen_optimizations,
    set_fusion_strategy,
    strict_fusion,
)
from flambeau.jit._script_types import (
    CompilationUnit,
    Error,
    RecursiveScriptClass,
    ScriptFunction,
    ScriptWarning,
    TracerWarning,
    TracingCheckError,
)

__all__ = [
    # torch.jit.__all__
    "Attribute",
    "CompilationUnit",
    "Error",
    "Future",
    "ScriptFunction",
    "ScriptModule",
    "annotate",
    "enable_onednn_fusion",
    "export",
    "export_opnames",
    "fork",
    "freeze",
    "interface",
    "ignore",
    "isinstance",
    "load",
    "onednn_fusion_enabled",
    "optimize_for_inference",
    "save",
    "script",
    "script_if_tracing",
    "set_fusion_strategy",
    "strict_fusion",
    "trace",
    "trace_module",
    "unused",
    "wait",
    # torch.jit's other public names
    "ONNXTracedModule",
    "RecursiveScriptClass",
    "RecursiveScriptModule",
    "ScriptWarning",
    "TopLevelTracedModule",
    "TracedModule",
    "TracerWarning",
    "TracingCheckError",
    "fuser",
    "is_scripting",
    "is_tracing",
    "jit_module_from_flatbuffer",
    "last_executed_optimized_graph",
    "optimized_execution",
    "run_frozen_optimizations",
    "save_jit_module_to_flatbuffer",
    "script_method",
]

# PyTorch's older spellings, which library code still calls.
_fork = fork
_wait = wait
_set_fusion_strategy = set_fusion_strategy
_script_if_tracing = script_if_tracing

# The module classes derive from flambeau.nn.Module (flambeau-nn): loaded on first use.
_MODULE_CLASSES = frozenset(
    {
        "ONNXTracedModule",
        "RecursiveScriptModule",
        "ScriptModule",
        "TopLevelTracedModule",
        "TracedModule",
    }
)


def __getattr__(name):
    if name in _MODULE_CLASSES:
        from flambeau.jit import _modules

        return getattr(_modules, name)
    raise AttributeError(f"module 'flambeau.jit' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _MODULE_CLASSES)
