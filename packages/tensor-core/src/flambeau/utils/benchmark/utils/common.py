"""What a benchmark measured and how it is summarized: TaskSpec (the statement and its
labels), Measurement (the times of its runs, with their statistics) and the number
formatting helpers that Measurement and Compare share, as in PyTorch's
``torch.utils.benchmark.utils.common``.
"""

import collections
import contextlib
import dataclasses
import math
import textwrap
from typing import Any

import flambeau

__all__ = [
    "Measurement",
    "TaskSpec",
    "ordered_unique",
    "select_unit",
    "set_torch_threads",
    "trim_sigfig",
    "unit_to_english",
]

# Compare shows at most this many significant figures of a median.
_MAX_SIGNIFICANT_FIGURES = 4
# A confidence interval narrower than this (25 ns) is timer noise, not precision.
_MIN_CONFIDENCE_INTERVAL = 25e-9
# An interquartile range above these fractions of the median earns a warning.
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """The description of a timed task: its statement, its setup and the labels that
    Measurement and Compare display. Hashable, so that replicates can be grouped.

    >>> from flambeau.utils.benchmark import TaskSpec
    >>> spec = TaskSpec("x + 1", "x = 1", label="add", sub_label="int")
    >>> spec.title
    'add: int'
    >>> spec.setup_str()
    'setup: x = 1'
    """

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or else a one-line statement), with the sub-label after a colon.

        >>> from flambeau.utils.benchmark import TaskSpec
        >>> TaskSpec("y = x * 2\\nz = y", "pass").title
        'stmt:\\n  y = x * 2\\n  z = y'
        """
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub_label = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub_label}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        """The setup as Measurement's repr shows it; empty when there is none.

        >>> from flambeau.utils.benchmark import TaskSpec
        >>> TaskSpec("x", "pass").setup_str()
        ''
        """
        if self.setup in ("pass", ""):
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The title, description and setup, one per line (a multi-line one is followed
        by a blank line).

        >>> from flambeau.utils.benchmark import TaskSpec
        >>> print(TaskSpec("x + 1", "x = 1", description="n=1").summarize())
        x + 1
        n=1
        setup: x = 1
        """
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(s + "\n" if "\n" in s else s for s in sections if s)


_TASKSPEC_FIELDS = frozenset(f.name for f in dataclasses.fields(TaskSpec))


def _scalar(x: float) -> flambeau.Tensor:
    """``x`` as a tensor of the default dtype. PyTorch computes the summaries' logarithms
    and roundings this way, in float32 by default, and the tables' last digits depend on
    it; computing them as it does prints the same tables."""
    return flambeau.tensor(x)


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The result of timing a task: ``raw_times`` holds the seconds each run of
    ``number_per_run`` executions took. The statistics are per execution; the fields
    of ``task_spec`` (``label``, ``stmt``, ``num_threads``...) read as attributes.

    >>> from flambeau.utils.benchmark import Measurement, TaskSpec
    >>> m = Measurement(4, [1.0, 3.0, 2.0], TaskSpec("x + 1", "pass", label="add"))
    >>> m.times
    [0.25, 0.75, 0.5]
    >>> m.median, m.label
    (0.5, 'add')
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None  # the user's; merge() does not carry it

    def __post_init__(self) -> None:
        # Statistics computed on first use (raw_times is not expected to change).
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = -1.0
        self._mean = -1.0
        self._p25 = -1.0
        self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: TaskSpec's fields read through.
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list[float]:
        """The seconds per execution of each run.

        >>> from flambeau.utils.benchmark import Measurement, TaskSpec
        >>> Measurement(4, [1.0, 2.0], TaskSpec("pass", "pass")).times
        [0.25, 0.5]
        """
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        """The median of ``times``.

        >>> from flambeau.utils.benchmark import Measurement, TaskSpec
        >>> Measurement(1, [3.0, 1.0, 2.0, 4.0], TaskSpec("pass", "pass")).median
        2.5
        """
        self._compute_statistics()
        return self._median

    @property
    def mean(self) -> float:
        """The mean of ``times``.

        >>> from flambeau.utils.benchmark import Measurement, TaskSpec
        >>> Measurement(1, [3.0, 1.0, 2.0], TaskSpec("pass", "pass")).mean
        2.0
        """
        self._compute_statistics()
        return self._mean

    @property
    def iqr(self) -> float:
        """The interquartile range of ``times`` (75th minus 25th percentile).

        >>> from flambeau.utils.benchmark import Measurement, TaskSpec
        >>> Measurement(1, [1.0, 2.0, 3.0, 4.0, 5.0], TaskSpec("pass", "pass")).iqr
        2.0
        """
        self._compute_statistics()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """A rough estimate (1 to 4) of the median's significant figures, from a 90%
        confidence interval of the interquartile times; Compare trims to it.

        >>> from flambeau.utils.benchmark import Measurement, TaskSpec
        >>> times = [1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 1.2, 0.8]
        >>> Measurement(1, times, TaskSpec("pass", "pass")).significant_figures
        1
        >>> Measurement(1, [1.0, 1.0, 1.0, 1.0], TaskSpec("pass", "pass")).significant_figures
        4
        """
        self._compute_statistics()
        count = len(self._sorted_times)
        interquartile = _scalar(self._sorted_times[count // 4 : math.ceil(3 * count / 4)])
        std = interquartile.std(correction=0).item()
        sqrt_n = _scalar(interquartile.numel()).sqrt().item()
        # z = 1.645 (90%): the sample is expected to be large enough for z to stand for t.
        interval = max(1.645 * std / sqrt_n, _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(_scalar(self._median / interval).log10().item())
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        """Whether the spread of the times is suspect (interquartile range over 10% of
        the median).

        >>> from flambeau.utils.benchmark import Measurement, TaskSpec
        >>> Measurement(1, [1.0, 1.0, 2.0, 3.0], TaskSpec("pass", "pass")).has_warnings
        True
        """
        self._compute_statistics()
        return bool(self._warnings)

    def _compute_statistics(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        times = flambeau.tensor(self._sorted_times, dtype=flambeau.float64)
        self._median = times.quantile(0.5).item()  # quantiles interpolate linearly
        self._mean = times.mean().item()
        self._p25 = times.quantile(0.25).item()
        self._p75 = times.quantile(0.75).item()
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._add_warning("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, message: str) -> None:
        relative_iqr = self.iqr / self.median * 100
        self._warnings += (
            f"  WARNING: Interquartile range is {relative_iqr:.1f}% of the median "
            f"measurement.\n           {message}",
        )

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether the interquartile range is under ``threshold`` times the median.

        >>> from flambeau.utils.benchmark import Measurement, TaskSpec
        >>> Measurement(1, [1.0, 1.0, 1.0, 1.0], TaskSpec("pass", "pass")).meets_confidence()
        True
        """
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        """The task's title (see TaskSpec.title).

        >>> from flambeau.utils.benchmark import Measurement, TaskSpec
        >>> Measurement(1, [1.0], TaskSpec("x + 1", "pass", sub_label="int")).title
        'x + 1: int'
        """
        return self.task_spec.title

    @property
    def env(self):
        """The task's ``env`` tag (None when unset), as PyTorch's ``Measurement.env``
        reads it.

        >>> from flambeau.utils.benchmark import Measurement, TaskSpec
        >>> Measurement(1, [1.0], TaskSpec("pass", "pass", env="branch-a")).env
        'branch-a'
        """
        # PyTorch's property means to answer "Unspecified env" for None, but a misspelt
        # attribute makes it fall back to the TaskSpec field: its users see the field.
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        """The name of the task's row in Compare: its sub-label, else its statement.

        >>> from flambeau.utils.benchmark import Measurement, TaskSpec
        >>> Measurement(1, [1.0], TaskSpec("x + 1", "pass", sub_label="int")).as_row_name
        'int'
        """
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._compute_statistics()
        count = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [
            super().__repr__(),
            self.task_spec.summarize(),
            f"  {'Median: ' if count > 1 else ''}{self._median / scale:.2f} {unit}",
        ]
        if count >= 4:  # quartiles of fewer times say little
            lines.append(
                f"  IQR:    {self.iqr / scale:.2f} {unit} "
                f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})"
            )
        threads = self.num_threads
        lines.append(
            f"  {count} measurement{'s' if count > 1 else ''}, {self.number_per_run} runs "
            f"{'per measurement,' if count > 1 else ','} {threads} thread"
            f"{'s' if threads > 1 else ''}"
        )
        lines.append("\n".join(self._warnings))
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements):
        """Merges the replicates of each task (equal TaskSpecs) into one Measurement with
        ``number_per_run=1``, in order of first appearance; metadata is dropped.

        >>> from flambeau.utils.benchmark import Measurement, TaskSpec
        >>> spec = TaskSpec("x + 1", "pass")
        >>> merged = Measurement.merge([Measurement(2, [4.0], spec), Measurement(1, [3.0], spec)])
        >>> len(merged), merged[0].raw_times
        (1, [2.0, 3.0])
        """
        groups = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)  # .times: runs may differ in size
        return [
            Measurement(number_per_run=1, raw_times=times, task_spec=spec, metadata=None)
            for spec, times in groups.items()
        ]


def select_unit(t: float) -> tuple[str, float]:
    """The unit (ns, us, ms or s) and its scale in seconds in which ``t`` seconds read
    as a number of one to three digits.

    >>> from flambeau.utils.benchmark import select_unit
    >>> select_unit(3e-5)
    ('us', 1e-06)
    """
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(_scalar(t).log10().item() // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    """The English name of a unit of select_unit.

    >>> from flambeau.utils.benchmark import unit_to_english
    >>> unit_to_english("us")
    'microsecond'
    """
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (in the default dtype's precision).

    >>> from flambeau.utils.benchmark import trim_sigfig
    >>> round(trim_sigfig(3.14159, 2), 6)
    3.1
    """
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(_scalar(x).abs().log10().ceil().item())
    scale = 10 ** (magnitude - n)
    return float(_scalar(x / scale).round() * scale)


def ordered_unique(elements):
    """The distinct elements, in order of first appearance.

    >>> from flambeau.utils.benchmark import ordered_unique
    >>> ordered_unique([3, 1, 3, 2, 1])
    [3, 1, 2]
    """
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int):
    """A context in which flambeau's intra-op thread pool has ``n`` threads; the previous
    count comes back on exit.

    >>> from flambeau.utils.benchmark import set_torch_threads
    >>> before = flambeau.get_num_threads()
    >>> with set_torch_threads(1):
    ...     flambeau.get_num_threads()
    1
    >>> flambeau.get_num_threads() == before
    True
    """
    previous = flambeau.get_num_threads()
    try:
        flambeau.set_num_threads(n)
        yield
    finally:
        flambeau.set_num_threads(previous)
