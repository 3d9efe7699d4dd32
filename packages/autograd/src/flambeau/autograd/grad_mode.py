"""Grad modes; they live in the core (flambeau.no_grad etc.), which owns the flag."""

from flambeau._grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
