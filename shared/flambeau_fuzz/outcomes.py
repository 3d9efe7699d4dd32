"""What a call's outcome is, and which outcomes are findings.

PyTorch is the spec: a bad argument raises RuntimeError (or a subclass), TypeError,
ValueError or IndexError with a message that says what was wrong. So:

ok         the call returned, and every tensor it returned could be read.
clean      one of those exceptions, with a message of our own. MemoryError is clean
           too: it is what a failed allocation raises here (pybind11 translates
           std::bad_alloc; the worker runs under a 4 GiB address-space limit), where
           PyTorch's allocator raises RuntimeError for the same request.
unclean    anything else: SystemError, AttributeError, KeyError, AssertionError,
           ZeroDivisionError, OverflowError (pybind11's int conversion, where PyTorch
           raises RuntimeError or TypeError), RecursionError, and NotImplementedError
           unless it says a dtype is "not implemented for" the operator (PyTorch raises
           NotImplementedError for exactly that: "ctc_loss_cpu" not implemented for
           'Long'); or a clean type whose message is empty or
           leaks C++ (stoi, basic_string, std::, a pybind11 cast); or a returned
           tensor whose shape overflows or that cannot be read.
crash      the worker died during the call: a signal, an abort, or a sanitizer report.
hang       the call ran past the per-call timeout.
sanitizer  the call returned but UBSan reported undefined behaviour during it.
skipped    the generated setup itself failed (a fuzzer problem, not a finding).
"""

from __future__ import annotations

import re

OUTCOMES = ("ok", "clean", "unclean", "crash", "hang", "sanitizer", "skipped")
FINDINGS = ("crash", "sanitizer", "hang", "unclean")  # most severe first
# With --oracle torch, a disagreement with PyTorch that is ours (see oracle.py) is a
# finding too; it is counted beside the outcome of the call, not instead of it.

CLEAN_TYPES = (RuntimeError, TypeError, ValueError, IndexError, MemoryError)
NEVER_CLEAN = (NotImplementedError, RecursionError)  # subclasses of RuntimeError
# C++ internals leaking into a message: an exception nobody meant to raise.
LEAKED_CPP = re.compile(
    r"\bsto(i|l|ll|ul|ull|f|d)\b|basic_string|std::|vector::|_M_range_check|bad_alloc|"
    r"bad_array_new_length|Unable to cast|unable to cast|pybind11::|"
    r"returned a result with an exception set|without setting an exception|"
    r"error return without exception set"
)


def classify(exc: BaseException) -> str:
    """clean or unclean, for an exception a call raised."""
    if isinstance(exc, NotImplementedError) and "not implemented for" in str(exc):
        return "clean"  # a dtype without a kernel: PyTorch's own exception type
    if isinstance(exc, NEVER_CLEAN) or not isinstance(exc, CLEAN_TYPES):
        return "unclean"
    message = str(exc)
    if isinstance(exc, MemoryError):
        return "clean"
    if not message.strip() or LEAKED_CPP.search(message):
        return "unclean"
    return "clean"


def describe(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
