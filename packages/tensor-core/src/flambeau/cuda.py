"""``flambeau.cuda``: CUDA devices come from a backend plugin distribution.

Without one installed no CUDA device is available; these answers are what a
program checks before choosing a device.
"""


def is_available() -> bool:
    """True if a CUDA backend is installed and sees at least one device."""
    return False


def device_count() -> int:
    """The number of CUDA devices a backend sees (0 without a backend)."""
    return 0
