"""Compare: the measurements of many Timers as text tables, as PyTorch's
``torch.utils.benchmark.Compare``."""

import collections

from flambeau.utils.benchmark.utils._compare_table import Colorize, render_table
from flambeau.utils.benchmark.utils.common import Measurement

__all__ = ["Colorize", "Compare"]


class Compare:
    """Tables of measurements: one per label, a row per sub-label (or statement) and
    thread count, a column per description; replicates of a task are merged first.
    ``str(compare)`` is the text that ``print()`` prints.

    Args:
        results: the Measurements to show.

    >>> from flambeau.utils.benchmark import Compare, Measurement, TaskSpec
    >>> def measured(sub_label, description, seconds):
    ...     spec = TaskSpec("f(x)", "pass", label="f", sub_label=sub_label,
    ...                     description=description)
    ...     return Measurement(1, [seconds], spec)
    >>> Compare([measured("float", "n=1", 2e-6), measured("int", "n=1", 3e-6),
    ...          measured("float", "n=8", 9e-6)]).print()  # doctest: +NORMALIZE_WHITESPACE
    [----------- f -----------]
                 |  n=1  |  n=8
    1 threads: ----------------
          float  |  2.0  |  9.0
          int    |  3.0  |
    <BLANKLINE>
    Times are in microseconds (us).
    <BLANKLINE>
    """

    def __init__(self, results) -> None:
        self._results: list[Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results) -> None:
        """Adds Measurements to those shown; anything else raises ValueError.

        >>> from flambeau.utils.benchmark import Compare, Measurement, TaskSpec
        >>> c = Compare([])
        >>> c.extend_results([Measurement(1, [1e-3], TaskSpec("f()", "pass"))])
        >>> c.extend_results([0.5])
        Traceback (most recent call last):
        ...
        ValueError: Expected an instance of `Measurement`, got <class 'float'> instead.
        """
        results = list(results)
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Shows each median with only its estimated significant figures.

        >>> from flambeau.utils.benchmark import Compare
        >>> c = Compare([])
        >>> c.trim_significant_figures()
        """
        self._trim_significant_figures = True

    def colorize(self, rowwise=False) -> None:
        """Colors each median against the best of its column (or of its row, with
        ``rowwise=True``), in ANSI terminal colors.

        >>> from flambeau.utils.benchmark import Compare
        >>> c = Compare([])
        >>> c.colorize(rowwise=True)
        """
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Marks the medians whose measurements vary much with ``(! XX%)``, their
        interquartile range in percent of the median.

        >>> from flambeau.utils.benchmark import Compare
        >>> c = Compare([])
        >>> c.highlight_warnings()
        """
        self._highlight_warnings = True

    def print(self) -> None:
        """Prints the tables.

        >>> from flambeau.utils.benchmark import Compare
        >>> Compare([]).print()
        <BLANKLINE>
        """
        print(str(self))

    def _render(self) -> list[str]:
        by_label = collections.defaultdict(list)
        for m in Measurement.merge(self._results):
            by_label[m.label].append(m)
        return [
            render_table(
                group,
                self._colorize,
                self._trim_significant_figures,
                self._highlight_warnings,
            )
            for group in by_label.values()
        ]
