"""What flambeau's API reference must cover: its public modules and their public names.

Shared by the `flambeau-reference` directive (docs/_ext/flambeau_reference.py), which
writes an entry for every name listed here, and by tests-integration/test_docs_reference.py,
which checks that every public name of every installed package has one.
"""

from __future__ import annotations

import importlib
import inspect
import types

# Every public module of every package, in the order the reference presents them. The
# namespaces the API coverage tool measures are among them (shared/flambeau_coverage).
PUBLIC_MODULES = {
    "flambeau-tensor-core": [
        "flambeau",
        "flambeau.linalg",
        "flambeau.fft",
        "flambeau.special",
        "flambeau.random",
        "flambeau.serialization",
        "flambeau.storage",
        "flambeau.safetensors",
        "flambeau.testing",
        "flambeau.amp",
        "flambeau.accelerator",
        "flambeau.backends",
        "flambeau.backends.cuda",
        "flambeau.backends.mkl",
        "flambeau.backends.mps",
        "flambeau.backends.nnpack",
        "flambeau.cpu",
        "flambeau.cuda",
        "flambeau.utils",
        "flambeau.__future__",
        "flambeau.utils.deterministic",
        "flambeau.utils.hooks",
        "flambeau.utils.dlpack",
        "flambeau.types",
        "flambeau.utils.benchmark",
        "flambeau.utils.tensorboard",
        "flambeau.utils.tensorboard.summary",
        "flambeau.signal.windows",
        "flambeau.library",
        "flambeau.overrides",
        "flambeau.sparse",
        "flambeau.futures",
        "flambeau.profiler",
        "flambeau.version",
        "flambeau.jit",
        "flambeau.hub",
        "flambeau.compiler",
        "flambeau._dynamo",
        "flambeau.utils._pytree",
    ],
    "flambeau-autograd": [
        "flambeau.autograd",
        "flambeau.autograd.functional",
        "flambeau.autograd.graph",
        "flambeau.autograd.forward_ad",
        "flambeau.autograd.profiler",
        "flambeau.autograd.profiler_util",
        "flambeau.func",
        "flambeau.utils.checkpoint",
        "flambeau.distributions",
        "flambeau.distributions.constraints",
        "flambeau.distributions.constraint_registry",
    ],
    "flambeau-nn": [
        "flambeau.nn",
        "flambeau.nn.functional",
        "flambeau.nn.init",
        "flambeau.nn.utils",
        "flambeau.nn.utils.rnn",
        "flambeau.nn.utils.parametrize",
        "flambeau.nn.utils.parametrizations",
        "flambeau.nn.utils.stateless",
        "flambeau.nn.attention",
        "flambeau.nn.attention.bias",
        "flambeau.nn.utils.prune",
        "flambeau.nn.grad",
        "flambeau.nn.parallel",
        "flambeau.fx",
        "flambeau.fx.proxy",
        "flambeau.fx.subgraph_rewriter",
        "flambeau.fx.passes.shape_prop",
    ],
    "flambeau-optim": ["flambeau.optim", "flambeau.optim.lr_scheduler", "flambeau.optim.swa_utils"],
    "flambeau-mp": ["flambeau.multiprocessing", "flambeau.multiprocessing.reductions"],
    "flambeau-data": ["flambeau.utils.data", "flambeau.utils.data.distributed"],
    "flambeau-legacy": ["flambeau.legacy", "flambeau.legacy.nn", "flambeau.legacy.optim"],
    "flambeau-distributed": [
        "flambeau.distributed",
        "flambeau.distributed.algorithms",
        "flambeau.distributed.algorithms.ddp_comm_hooks",
        "flambeau.distributed.algorithms.ddp_comm_hooks.default_hooks",
        "flambeau.distributed.algorithms.ddp_comm_hooks.debugging_hooks",
    ],
    "flambeau-cpp-extension": ["flambeau.utils.cpp_extension"],
}


def importable(module: str) -> types.ModuleType | None:
    """The module, or None when its package is not installed (or it does not exist)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def operator_names() -> set[str]:
    """Names of the core's operators: the operators page documents them."""
    import flambeau

    return {op["name"] for op in flambeau.ops_table()}


def public_names(module: types.ModuleType) -> list[str]:
    """The module's public names, modules excluded: its __all__, or else every name
    without a leading underscore that is not a module and was not imported from the
    standard library or a third-party package (``typing``, ``numpy``...)."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    found = []
    for name in names:
        obj = getattr(module, name, None)
        if obj is None or inspect.ismodule(obj) or name.startswith("_"):
            continue
        owner = getattr(obj, "__module__", None) or ""
        if (inspect.isclass(obj) or callable(obj)) and owner and not _ours(owner):
            continue  # e.g. `from typing import Any`, `from numbers import Number`
        found.append(name)
    return found


def _ours(owner: str) -> bool:
    return owner.split(".")[0] in {"flambeau", "flambeau_cuda"} or owner == "builtins"
