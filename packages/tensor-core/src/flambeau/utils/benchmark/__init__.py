"""flambeau.utils.benchmark: PyTorch's ``torch.utils.benchmark``, for timing code.

Timer times a statement (with warm-up, a fixed thread count and replicates) and returns
a Measurement; Compare lays many Measurements out as tables. Only Python statements
are timed: C++ statements and Callgrind instruction counts are not supported.

>>> from flambeau.utils import benchmark
>>> t = benchmark.Timer("x + x", setup="x = flambeau.ones(8)", sub_label="add")
>>> m = t.blocked_autorange(min_run_time=0.01)
>>> m.num_threads, m.as_row_name
(1, 'add')
"""

import flambeau  # noqa: F401  (the examples' namespace when doctest runs this module)
from flambeau.utils.benchmark.utils.common import (
    Measurement,
    TaskSpec,
    ordered_unique,
    select_unit,
    set_torch_threads,
    trim_sigfig,
    unit_to_english,
)
from flambeau.utils.benchmark.utils.compare import Colorize, Compare
from flambeau.utils.benchmark.utils.timer import Language, Timer, timer

__all__ = [
    "Colorize",
    "Compare",
    "Language",
    "Measurement",
    "TaskSpec",
    "Timer",
    "ordered_unique",
    "select_unit",
    "set_torch_threads",
    "timer",
    "trim_sigfig",
    "unit_to_english",
]
