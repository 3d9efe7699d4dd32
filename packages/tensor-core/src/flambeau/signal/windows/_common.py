"""The checks and the trivial windows every window function of
flambeau.signal.windows shares, with PyTorch's error types and messages."""

import flambeau


def resolve_dtype(dtype):
    """``dtype=None`` means the default dtype, as for any factory."""
    return flambeau.get_default_dtype() if dtype is None else dtype


def check_window_args(function_name, M, dtype, layout):
    """PyTorch's checks, in its order: the length, the layout, then the dtype."""
    if M < 0:
        raise ValueError(f"{function_name} requires non-negative window length, got M={M}")
    if layout is not flambeau.strided:
        raise ValueError(f"{function_name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (flambeau.float32, flambeau.float64):
        raise ValueError(f"{function_name} expects float32 or float64 dtypes, got: {dtype}")


def empty_window(dtype, layout, device, requires_grad):
    """The window of length 0."""
    return flambeau.empty(
        (0,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def unit_window(dtype, layout, device, requires_grad):
    """The window of length 1: a single 1, whatever the shape parameters."""
    return flambeau.ones(
        (1,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def sample_points(start, end, M, dtype, layout, device, requires_grad):
    """``M`` evenly spaced points from start to end: every window evaluates its formula at
    these, so that the result is a vectorized expression of one tensor."""
    return flambeau.linspace(
        start,
        end,
        steps=M,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )
