"""flambeau.nn.attention: what changes the behaviour of
flambeau.nn.functional.scaled_dot_product_attention (torch.nn.attention).

``sdpa_kernel`` enables some backends (kernels) for a block; they are the flags of
flambeau.backends.cuda (``enable_flash_sdp``...). On the CPU, as in PyTorch, two backends
can run: ``FLASH_ATTENTION`` for the inputs it takes (4-D, no dropout, equal head
dimensions...) and ``MATH`` for any. flambeau computes both with its one fused operator,
so the choice changes no result; it decides, as in PyTorch, whether a call may run: with
neither enabled, or with only flash enabled and inputs it cannot take,
scaled_dot_product_attention raises PyTorch's RuntimeError. Not here: flex_attention,
varlen and experimental, PyTorch's prototypes built on torch.compile.
"""

from __future__ import annotations

import contextlib
from warnings import warn

from flambeau.backends import _sdp
from flambeau.backends._sdp import SDPBackend
from flambeau.backends.cuda import (  # noqa: F401 - PyTorch's torch.nn.attention has them
    SDPAParams,
    can_use_efficient_attention,
    can_use_flash_attention,
)

from ._registry import (
    activate_flash_attention_impl,
    current_flash_attention_impl,
    list_flash_attention_impls,
    register_flash_attention_impl,
    restore_flash_attention_impl,
)

__all__ = [
    "SDPBackend",
    "sdpa_kernel",
    "WARN_FOR_UNFUSED_KERNELS",
    "register_flash_attention_impl",
    "activate_flash_attention_impl",
    "list_flash_attention_impls",
    "current_flash_attention_impl",
    "restore_flash_attention_impl",
]

# Set to True to be warned when a bias of flambeau.nn.attention.bias cannot use a fused
# kernel (on the CPU it never can) and attention falls back to a materialized mask.
WARN_FOR_UNFUSED_KERNELS = False


def _raise_kernel_warnings(params: SDPAParams) -> None:
    """The warnings WARN_FOR_UNFUSED_KERNELS asks for, as PyTorch's: for each fused kernel
    (efficient, flash attention) that cannot take ``params``, a warning, then the kernel's
    own reasons (its ``can_use_*`` with debug=True; on a build without CUDA it gives none)."""
    if WARN_FOR_UNFUSED_KERNELS:
        if not can_use_efficient_attention(params):
            warn("Efficient attention can't be used because:", stacklevel=2)
            can_use_efficient_attention(params, True)
        if not can_use_flash_attention(params):
            warn("Flash attention can't be used because:", stacklevel=2)
            can_use_flash_attention(params, True)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Enables only ``backends`` (an SDPBackend or a list of them) for scaled dot product
    attention inside the ``with`` block; the previous flags come back after it. With
    ``set_priority=True`` the list's order also becomes the backends' priority order
    (on the CPU, as in PyTorch, flash is tried before math whatever it says).

    >>> import flambeau.nn.functional as F
    >>> from flambeau.nn.attention import SDPBackend, sdpa_kernel
    >>> q = flambeau.ones(1, 1, 2, 4)
    >>> with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    ...     F.scaled_dot_product_attention(q, q, q).shape
    flambeau.Size([1, 1, 2, 4])
    >>> with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):  # doctest: +ELLIPSIS
    ...     F.scaled_dot_product_attention(q, q, q)
    Traceback (most recent call last):
    RuntimeError: No viable backend for scaled_dot_product_attention was found. ...
    >>> flambeau.backends.cuda.math_sdp_enabled()
    True
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
            f"got {type(backends).__name__}"
        )
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    with _sdp.only_enabled(backends, set_priority) as context:
        yield context
