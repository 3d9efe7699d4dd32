"""Autocast policies of Python composites.

Operators of the table declare their autocast policy there (``autocast:`` in
``ops/*.yaml``). A function written in Python that PyTorch's autocast lists name
(``nn.functional.linear``, ``prelu``, ``cdist``, ...) declares it here instead:

    @autocast_policy("lower_precision_fp")
    def linear(input, weight, bias=None): ...

While autocast is on for the device type of its tensors, the call's floating-point
tensor arguments (also inside lists and tuples) are cast as the table's operators
cast theirs, and the body runs with autocast off for that device type, as PyTorch
runs an autocast kernel's body. While autocast is off the wrapper costs one call.
See docs/design/autocast.rst.
"""

from __future__ import annotations

import functools

from flambeau._C import _autocast_any_enabled, _autocast_call

POLICIES = ("lower_precision_fp", "fp32", "promote")


def autocast_policy(policy: str):
    """Decorator: run the function under autocast policy ``policy`` (one of POLICIES)."""
    if policy not in POLICIES:
        raise ValueError(f"autocast policy must be one of {', '.join(POLICIES)}, not {policy!r}")

    def decorate(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            if _autocast_any_enabled():
                return _autocast_call(policy, fn, args, kwargs)
            return fn(*args, **kwargs)

        return call

    return decorate
