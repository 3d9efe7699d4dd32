"""The device axis: which devices this environment can run the operator table on."""

from __future__ import annotations

import warnings

import flambeau


def devices() -> list[str]:
    """ "cpu", then the device type of every installed backend plugin that loads and sees a
    device ("cuda" when ``flambeau.cuda.is_available()``), in the order of
    ``flambeau.backends.available()``.

    A plugin that ``FLAMBEAU_BACKENDS`` blocks is left out on purpose; one that fails to
    load is left out with a ``RuntimeWarning`` that carries its error, so a broken backend
    never looks like a checked one.

    >>> devices()[0]
    'cpu'
    """
    found = ["cpu"]
    for backend in flambeau.backends.available():
        if backend.status == "blocked":
            continue
        if backend.name == "cuda":
            usable = flambeau.cuda.is_available()  # the core's facade warns on a failed load
        else:
            try:
                module = flambeau.backends.module(backend.name)
            except RuntimeError as e:
                warnings.warn(
                    f"device {backend.name!r} left out: {e}", RuntimeWarning, stacklevel=2
                )
                continue
            is_available = getattr(module, "is_available", None)
            usable = module is not None and (is_available is None or bool(is_available()))
        if usable:
            found.append(backend.name)
    return found


def other_devices() -> list[str]:
    """:func:`devices` without the CPU: those whose results are compared with the CPU's.

    >>> "cpu" in other_devices()
    False
    """
    return devices()[1:]
