"""The generic join context manager (torch.distributed.algorithms.join).

Ranks often hold different numbers of batches. Inside ``with Join([joinables]):`` a rank
still training announces it before each step (``Join.notify_join_context``: an
all-reduce of 1 on the process group); a rank whose loop ended enters ``__exit__`` and
answers that all-reduce with 0 for as long as any rank trains, each time running its
joinables' ``JoinHook.main_hook`` to shadow the collectives of one of their steps, so
nobody waits forever. Once every rank has joined, ``post_hook(is_last_joiner)`` runs.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from typing import Any, NamedTuple

import flambeau

from .. import collectives
from ..process_group import get_rank

__all__ = ["Join", "JoinHook", "Joinable"]

_EARLY_TERMINATION = "Detected at least one rank that exhausted inputs. Throwing across all ranks."
_WARN_THRESHOLD = 1000


class JoinHook:
    """What a joined rank runs for a joinable: ``main_hook`` once per step some other rank
    still takes, ``post_hook`` once every rank has joined.

    >>> from flambeau.distributed.algorithms import JoinHook
    >>> class Hook(JoinHook):
    ...     def post_hook(self, is_last_joiner):
    ...         print("every rank has joined; last:", is_last_joiner)
    >>> Hook().post_hook(True)
    every rank has joined; last: True
    """

    def main_hook(self) -> None:
        """Shadow the collectives of one step of the ranks still training."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Run after every rank has joined; `is_last_joiner` tells whether this rank was
        among the last to join."""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Joinable(ABC):
    """A class whose steps run collectives that a joined rank must shadow. Its
    constructor must call ``Joinable.__init__``; each step calls
    ``Join.notify_join_context(self)`` first.

    >>> import flambeau.distributed as dist
    >>> from flambeau.distributed.algorithms import Joinable
    >>> issubclass(dist.DistributedDataParallel, Joinable)
    True
    """

    @abstractmethod
    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        """The JoinHook a joined rank runs for this joinable; `kwargs` are those given to
        Join."""

    @property
    @abstractmethod
    def join_device(self) -> flambeau.device:
        """The device the join context's own collectives use."""

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        """The process group of the join context's collectives."""


class Join:
    """Context manager for training with uneven inputs across ranks, as
    torch.distributed.algorithms.Join.

    Args:
        joinables: the Joinable objects taking part (at least one, all on the same
            process group); the first does the context's own collectives.
        enable: False makes the context do nothing.
        throw_on_early_termination: raise RuntimeError on every rank as soon as one rank
            runs out of inputs, instead of shadowing.
        **kwargs: passed to each joinable's ``join_hook``.

    >>> import flambeau.distributed as dist
    >>> from flambeau.distributed.algorithms import Join
    >>> dist.init_process_group()
    >>> model = dist.DistributedDataParallel(flambeau.nn.Linear(2, 1))
    >>> with Join([model]):  # a rank whose batches run out waits here for the others
    ...     for x in flambeau.ones(3, 1, 2):
    ...         model(x).sum().backward()
    >>> dist.destroy_process_group()
    """

    def __init__(
        self,
        joinables: list[Joinable],
        enable: bool = True,
        throw_on_early_termination: bool = False,
        **kwargs,
    ):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = list(joinables)
        self._join_hooks = [j.join_hook(**kwargs) for j in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        self._set_joinable_configs()
        self._extract_dist_info()

    def _set_joinable_configs(self) -> None:
        for n, joinable in enumerate(self._joinables):
            joinable._join_config = _JoinConfig(
                enable=self._enable,
                throw_on_early_termination=self._throw_on_early_termination,
                is_first_joinable=n == 0,
            )

    def _extract_dist_info(self) -> None:
        group = self._joinables[0].join_process_group
        for joinable in self._joinables[1:]:
            if joinable.join_process_group is not group:
                raise ValueError("Using join context manager with multiple process groups")
        self._process_group = group
        self._rank = get_rank(group)
        self._device = self._joinables[0].join_device

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        try:
            if not self._enable or exc_type is not None:
                return False  # an exception propagates as it is
            is_last_joiner = True
            steps = 0
            while self._get_num_nonjoined_procs() > 0:
                if steps == _WARN_THRESHOLD + 1:
                    warnings.warn(
                        f"Detected uneven input skew of greater than {_WARN_THRESHOLD}. This "
                        f"means that rank {self._rank} has at least {_WARN_THRESHOLD} fewer "
                        "inputs than other currently-active ranks. This level of skew could "
                        "lead to performance degradation during training.",
                        stacklevel=2,
                    )
                if self._throw_on_early_termination:
                    self._notify_procs_to_terminate()
                for hook in self._join_hooks:
                    hook.main_hook()
                is_last_joiner = False
                steps += 1
            for hook in self._join_hooks:
                hook.post_hook(is_last_joiner)
            return False
        finally:
            for joinable in self._joinables:
                joinable._join_config = _JoinConfig.construct_disabled_join_config()

    def _get_num_nonjoined_procs(self) -> int:
        """This rank's 0 against the 1 of each rank still training."""
        count = flambeau.zeros(1, dtype=flambeau.int32)
        collectives.all_reduce(count, group=self._process_group)
        return int(count.item())

    def _notify_procs_to_terminate(self):
        ones = flambeau.ones(1, dtype=flambeau.int32)
        collectives.all_reduce(ones, group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable: Joinable):
        """Called by a joinable at the start of each step: tells the joined ranks that this
        one still trains. Returns the Work of that all-reduce (whose tensor ends as the
        number of ranks still training) for the first joinable of an enabled context,
        None otherwise. With throw_on_early_termination, raises RuntimeError once some
        rank has run out of inputs."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(
                f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor"
            )
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        group = joinable.join_process_group
        ones = flambeau.ones(1, dtype=flambeau.int32)
        work = collectives.all_reduce(ones, group=group, async_op=True)
        if config.throw_on_early_termination:
            zeros = flambeau.zeros(1, dtype=flambeau.int32)
            collectives.all_reduce(zeros, group=group)
            if zeros.item():
                raise RuntimeError(_EARLY_TERMINATION)
        return work
