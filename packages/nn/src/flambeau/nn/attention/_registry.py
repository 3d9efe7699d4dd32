"""The registry of flash attention implementations (torch.nn.attention's): a provider
registers a callable that installs its kernels; a user activates one by name.

PyTorch registers two of its own, "FA3" and "FA4" (CUDA kernels from the flash-attn
packages); flambeau registers none, so the list starts empty.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)

_IMPLS: dict[str, Callable] = {}  # name -> the callable that installs it
_ACTIVE: tuple | None = None  # (name, the handle its callable returned)


def register_flash_attention_impl(impl: str, *, register_fn: Callable) -> None:
    """Registers ``register_fn`` as the way to activate the flash attention implementation
    named ``impl``; it may return a handle with a ``remove()`` method, which
    :func:`restore_flash_attention_impl` calls. For providers: users call
    :func:`activate_flash_attention_impl`.

    >>> from flambeau.nn import attention
    >>> attention.register_flash_attention_impl("Doc", register_fn=lambda: None)
    >>> "Doc" in attention.list_flash_attention_impls()
    True
    """
    _IMPLS[impl] = register_fn


def activate_flash_attention_impl(impl: str) -> None:
    """Restores the default implementation, then calls the callable registered for
    ``impl``; the handle it returns (if any) is kept, and ``impl`` becomes the current one.
    ValueError for a name nothing registered.

    >>> from flambeau.nn import attention
    >>> class Handle:
    ...     def remove(self):
    ...         print("removed")
    >>> attention.register_flash_attention_impl("Doc", register_fn=Handle)
    >>> attention.activate_flash_attention_impl("Doc")
    >>> attention.current_flash_attention_impl()
    'Doc'
    >>> attention.restore_flash_attention_impl()
    removed
    """
    global _ACTIVE
    restore_flash_attention_impl(_raise_warn=False)
    register_fn = _IMPLS.get(impl)
    if register_fn is None:
        raise ValueError(
            f"Unknown flash attention impl '{impl}'. Available implementations: "
            f"{list_flash_attention_impls()}"
        )
    handle = register_fn()
    if handle is not None:
        _ACTIVE = (impl, handle)


def list_flash_attention_impls() -> list[str]:
    """The names of the registered flash attention implementations, sorted.

    >>> from flambeau.nn import attention
    >>> isinstance(attention.list_flash_attention_impls(), list)
    True
    """
    return sorted(_IMPLS)


def current_flash_attention_impl() -> str | None:
    """The name of the activated implementation (one whose callable returned a handle);
    None when the default is in use.

    >>> from flambeau.nn import attention
    >>> attention.current_flash_attention_impl() is None
    True
    """
    return None if _ACTIVE is None else _ACTIVE[0]


def restore_flash_attention_impl(_raise_warn: bool = True) -> None:
    """Goes back to the default implementation: the activated one's handle is removed. With
    none activated, logs a warning.

    >>> from flambeau.nn import attention
    >>> attention.restore_flash_attention_impl(_raise_warn=False)
    >>> attention.current_flash_attention_impl() is None
    True
    """
    global _ACTIVE
    if _ACTIVE is not None:
        _ACTIVE[1].remove()
    elif _raise_warn:
        logger.warning("Trying to restore default FA2 impl when no custom impl was activated")
    _ACTIVE = None
