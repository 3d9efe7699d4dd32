"""TorchScript's optimization settings and passes: nothing to optimize eagerly.

The settings keep their values, so code that sets and reads them ports; the passes
(``freeze``, ``optimize_for_inference``) return the module, checking what PyTorch
checks first.
"""

from __future__ import annotations

import contextlib
import warnings

from flambeau.jit._deprecation import warn_deprecated

# PyTorch's defaults: oneDNN fusion off; two static then ten dynamic specializations.
_settings = {"onednn_fusion": False, "fusion_strategy": [("STATIC", 2), ("DYNAMIC", 10)]}
# What fuser(name) turns on, of the settings flambeau reports.
_FUSERS = {"fuser0": False, "fuser1": False, "fuser2": False, "fuser3": True, "none": False}


def enable_onednn_fusion(enabled: bool) -> None:
    """Turns oneDNN JIT fusion on or off (a setting only: flambeau fuses nothing).

    >>> flambeau.jit.enable_onednn_fusion(True)
    >>> flambeau.jit.onednn_fusion_enabled()
    True
    >>> flambeau.jit.enable_onednn_fusion(False)
    """
    _settings["onednn_fusion"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    """Whether oneDNN JIT fusion is on (off by default).

    >>> flambeau.jit.onednn_fusion_enabled()
    False
    """
    return _settings["onednn_fusion"]


def set_fusion_strategy(strategy):
    """Sets the (type, depth) specializations of fusion; returns the previous strategy.

    Each type is "STATIC" or "DYNAMIC", each depth an int.

    >>> old = flambeau.jit.set_fusion_strategy([("DYNAMIC", 20)])
    >>> old
    [('STATIC', 2), ('DYNAMIC', 10)]
    >>> _ = flambeau.jit.set_fusion_strategy(old)
    """
    warn_deprecated("set_fusion_strategy")
    checked = []
    for pair in strategy:
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(f"set_fusion_strategy: expected (type, depth) pairs, got {pair!r}")
        kind, depth = pair
        if not isinstance(kind, str) or isinstance(depth, bool) or not isinstance(depth, int):
            raise TypeError(f"set_fusion_strategy: expected (str, int) pairs, got {pair!r}")
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {kind}")
        checked.append((kind, depth))
    previous, _settings["fusion_strategy"] = _settings["fusion_strategy"], checked
    return previous


@contextlib.contextmanager
def fuser(name):
    """Selects a fuser ("fuser0" legacy, "fuser1" NNC, "fuser2" nvFuser, "fuser3"
    oneDNN Graph, "none") for the block; only the oneDNN setting is observable.

    >>> with flambeau.jit.fuser("fuser3"):
    ...     flambeau.jit.onednn_fusion_enabled()
    True
    """
    if name not in _FUSERS:
        raise Exception(f"unrecognized fuser option (name: {name})")  # noqa: TRY002 - as torch
    saved = _settings["onednn_fusion"]
    _settings["onednn_fusion"] = _FUSERS[name]
    try:
        yield
    finally:
        _settings["onednn_fusion"] = saved


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """Whether the graph executor optimizes inside the block: there is none, so nothing
    changes.

    >>> with flambeau.jit.optimized_execution(False):
    ...     flambeau.ones(1) + 1
    tensor([2.])
    """
    del should_optimize
    yield


def last_executed_optimized_graph():
    """The graph the JIT last optimized and ran: None, as nothing is compiled.

    >>> flambeau.jit.last_executed_optimized_graph() is None
    True
    """
    return None


class strict_fusion:  # noqa: N801 - PyTorch's name
    """Asks the compiler to fuse every node in the block; outside TorchScript it warns
    "Only works in script mode" and does nothing.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     with flambeau.jit.strict_fusion():
    ...         y = flambeau.ones(1) * 2
    >>> str(caught[0].message)
    'Only works in script mode'
    """

    def __init__(self) -> None:
        warnings.warn("Only works in script mode", stacklevel=2)

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, tb) -> None:
        pass


def _require_module(mod, pass_name: str) -> None:
    from flambeau.jit._frontend import _module_classes

    classes = _module_classes()
    if classes is None or not isinstance(mod, classes[0]):
        raise RuntimeError(
            f"{pass_name} expects a ScriptModule as input. Please use flambeau.jit.script "
            "or flambeau.jit.trace to script your 'nn.Module'."
        )


def freeze(mod, preserved_attrs=None, optimize_numerics: bool = True):
    """Inlines a scripted module's parameters into its code; returns ``mod`` itself.

    As in PyTorch, the module must be in eval mode. (PyTorch returns a new, frozen
    copy; here the module is its own frozen form.)

    >>> model = flambeau.jit.script(flambeau.nn.Linear(2, 2).eval())
    >>> flambeau.jit.freeze(model) is model
    True
    """
    del preserved_attrs, optimize_numerics
    warn_deprecated("freeze")
    _require_module(mod, "Freezing")
    if mod.training:
        raise RuntimeError(
            "Freezing is currently only implemented for modules in eval mode. "
            "Please call .eval() on your module before freezing."
        )
    return mod


def run_frozen_optimizations(mod, optimize_numerics: bool = True, preserved_methods=None):
    """Runs the optimizations of a frozen module's graph, in place: none, here.

    >>> model = flambeau.nn.Linear(2, 2).eval()
    >>> flambeau.jit.run_frozen_optimizations(flambeau.jit.freeze(model))
    """
    del mod, optimize_numerics, preserved_methods


def optimize_for_inference(mod, other_methods=None):
    """Puts ``mod`` in eval mode, freezes it and returns it.

    >>> model = flambeau.jit.script(flambeau.nn.Linear(2, 2))
    >>> fast = flambeau.jit.optimize_for_inference(model)
    >>> fast is model, fast.training
    (True, False)
    """
    warn_deprecated("optimize_for_inference")
    _require_module(mod, "optimize_for_inference")
    return freeze(mod.eval(), preserved_attrs=other_methods)
