"""Step counting shared by the profiler and optimizers (torch.profiler.KinetoStepTracker),
and the scopes PyTorch's recorder names (RecordScope)."""

from __future__ import annotations

import enum
from collections import defaultdict

__all__ = ["KinetoStepTracker", "RecordScope"]


class RecordScope(enum.IntEnum):
    """The kinds of scope PyTorch's recorder distinguishes (at::RecordScope).

    >>> flambeau.profiler.RecordScope.USER_SCOPE
    <RecordScope.USER_SCOPE: 7>
    """

    FUNCTION = 0
    BACKWARD_FUNCTION = 1
    TORCHSCRIPT_FUNCTION = 2
    KERNEL_FUNCTION_DTYPE = 3
    CUSTOM_CLASS = 4
    BUILD_FEATURE = 5
    LITE_INTERPRETER = 6
    USER_SCOPE = 7
    STATIC_RUNTIME_OP = 8
    STATIC_RUNTIME_MODEL = 9
    NUM_SCOPES = 10


class KinetoStepTracker:
    """One step count for a program whose steps are marked by several requesters (the
    profiler's ``step()``, each optimizer's step): each requester keeps its own count and
    the global step is the largest, so two markers of the same iteration count it once.

    >>> from flambeau.profiler import KinetoStepTracker
    >>> KinetoStepTracker.init_step_count("doc-a")
    >>> KinetoStepTracker.init_step_count("doc-b")
    >>> start = KinetoStepTracker.current_step()
    >>> KinetoStepTracker.increment_step("doc-a") - start
    1
    >>> KinetoStepTracker.increment_step("doc-b") - start
    1
    >>> KinetoStepTracker.erase_step_count("doc-a") and KinetoStepTracker.erase_step_count("doc-b")
    True
    """

    _current_step = 0
    _step_dict: dict[str, int] = defaultdict(int)

    @classmethod
    def init_step_count(cls, requester: str) -> None:
        """Starts requester's count at the current global step."""
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester: str) -> bool:
        """Forgets requester; True if it was known."""
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester: str) -> int:
        """Counts a step of requester; returns the global step."""
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        cls._current_step = max(cls._current_step, cls._step_dict[requester])
        return cls._current_step

    @classmethod
    def current_step(cls) -> int:
        """The global step."""
        return cls._current_step
