"""The compiler's stance and ``OptimizedModule``, where ``torch._dynamo.eval_frame`` has them.

flambeau runs eagerly: ``flambeau.compile`` returns the model it is given, so no module
is ever an ``OptimizedModule`` (libraries test ``isinstance(model,
torch._dynamo.eval_frame.OptimizedModule)`` to unwrap a compiled model, and rightly find
nothing to unwrap).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["DynamoStance", "OptimizedModule", "innermost_fn"]


@dataclass
class DynamoStance:
    """The stance ``flambeau.compiler.set_stance`` sets (it changes nothing: flambeau
    always runs eagerly, which is what every stance falls back to).

    >>> from flambeau._dynamo.eval_frame import DynamoStance
    >>> DynamoStance()
    DynamoStance(stance='default', skip_guard_eval_unsafe=False, backend=None)
    """

    stance: str = "default"
    skip_guard_eval_unsafe: bool = False
    backend: Any = None


_stance = DynamoStance()


def _set_stance(stance: DynamoStance) -> DynamoStance:
    global _stance
    prior, _stance = _stance, stance
    return prior


class OptimizedModule:
    """The wrapper ``torch.compile`` puts around a module. ``flambeau.compile`` returns
    the module itself, so nothing is an instance of this class; it exists for the
    ``isinstance`` tests libraries write.

    >>> import flambeau
    >>> from flambeau._dynamo.eval_frame import OptimizedModule
    >>> def model(x):
    ...     return x + 1
    >>> isinstance(flambeau.compile(model), OptimizedModule)
    False
    """

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError(
            "flambeau has no compiler: flambeau.compile returns the module itself, and no "
            "OptimizedModule is ever made"
        )


def innermost_fn(fn):
    """The function under compiler wrappers; flambeau adds none, so ``fn`` itself.

    >>> from flambeau._dynamo.eval_frame import innermost_fn
    >>> innermost_fn(len) is len
    True
    """
    return fn
