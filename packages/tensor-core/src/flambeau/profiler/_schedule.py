"""The profiler's schedule: which steps of a training loop it skips, warms up on and
records (torch.profiler.schedule and ProfilerAction)."""

from __future__ import annotations

import enum
import warnings

__all__ = ["ProfilerAction", "schedule"]


class ProfilerAction(enum.Enum):
    """What the profiler does at a step.

    >>> flambeau.profiler.ProfilerAction.RECORD_AND_SAVE.value
    3
    """

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(
    *, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
    skip_first_wait: int = 0,
):  # fmt: skip
    """A function of the step number: skip ``skip_first`` steps, then cycles of ``wait``
    idle steps, ``warmup`` steps and ``active`` recorded steps (the last of which saves the
    trace), ``repeat`` times (0: until the loop ends). With ``skip_first_wait`` the first
    cycle starts without its wait.

    >>> s = flambeau.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
    >>> [s(i).name for i in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    for name, value, least in (
        ("wait", wait, 0), ("warmup", warmup, 0), ("active", active, 1), ("repeat", repeat, 0),
        ("skip_first", skip_first, 0), ("skip_first_wait", skip_first_wait, 0),
    ):  # fmt: skip
        if value < least:
            raise ValueError(f"schedule(): {name} must be at least {least}, got {value}")
    if warmup == 0:
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results", stacklevel=2
        )
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"schedule: the step number must be non-negative, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def _always_record(step: int) -> ProfilerAction:
    """The schedule of a profile given none: every step is recorded."""
    return ProfilerAction.RECORD
