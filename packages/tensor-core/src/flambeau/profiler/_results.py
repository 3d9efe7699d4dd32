"""What both profile classes (flambeau.profiler.profile and the older
flambeau.autograd.profiler.profile) answer once a recording is saved, and the warning
both give for device activity they do not record."""

from __future__ import annotations

import warnings

from flambeau.profiler._trace import write_chrome_trace

__all__ = ["ProfileResults", "warn_unrecorded"]


def warn_unrecorded(names: str, use_cuda: bool = False) -> None:
    """Warns that device activity (names) is not recorded; use_cuda adds PyTorch's
    deprecation of that argument."""
    if use_cuda:
        warnings.warn(
            "The attribute `use_cuda` will be deprecated soon, please use "
            "``use_device = 'cuda'`` instead.",
            FutureWarning,
            stacklevel=3,
        )
    if names:
        warnings.warn(
            f"flambeau's profiler records CPU activity only; {names} activity is not recorded",
            stacklevel=3,
        )


class ProfileResults:
    """The results of a profile: subclasses set ``_events`` (an EventList, None until a
    recording is saved), ``_start_ns``, ``_metadata`` and ``with_stack``."""

    _events = None
    _start_ns = 0
    _not_recorded = "nothing has been recorded yet: the profile must stop first"

    def events(self):
        """The events of the last saved recording (an EventList)."""
        if self._events is None:
            raise RuntimeError(f"{type(self).__name__}.events(): {self._not_recorded}")
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):  # fmt: skip
        """The events grouped by name (see ``EventList.key_averages``)."""
        return self.events().key_averages(
            group_by_input_shapes=group_by_input_shape,
            group_by_stack_n=group_by_stack_n,
            group_by_overload_name=group_by_overload_name,
        )

    def export_chrome_trace(self, path) -> None:
        """Writes the last recording as a Chrome trace (gzip-compressed if path ends in
        .gz)."""
        write_chrome_trace(self.events(), path, base_time_ns=self._start_ns,
                           metadata=getattr(self, "_metadata", None))  # fmt: skip

    def export_stacks(self, path, metric: str = "self_cpu_time_total") -> None:
        """Writes the events' stacks in folded form (needs ``with_stack=True``)."""
        if not self.with_stack:
            raise RuntimeError("export_stacks() needs a profile created with with_stack=True")
        self.events().export_stacks(path, metric)
