"""Timer: timeit with flambeau's conventions (warm-up, a fixed thread count, replicates
measured in blocks), as PyTorch's ``torch.utils.benchmark.Timer``."""

import enum
import textwrap
import timeit as _timeit_module
from collections.abc import Callable
from typing import Any

import flambeau
from flambeau.utils.benchmark.utils.common import Measurement, TaskSpec, set_torch_threads

__all__ = ["Language", "Timer", "timer"]

# No real statement takes less: a floor that also keeps ratios finite.
_MIN_RUN_TIME = 1e-9
# Block sizes stay below what a C int holds, as PyTorch's do.
_MAX_BLOCK_SIZE = 2147483647


def timer() -> float:
    """Timer's default clock: ``timeit.default_timer()`` after waiting for the current
    accelerator's queued work, so that asynchronous kernels are timed to completion.

    >>> from flambeau.utils.benchmark import timer
    >>> a = timer()
    >>> timer() >= a
    True
    """
    if flambeau.accelerator.is_available():
        flambeau.accelerator.synchronize()
    return _timeit_module.default_timer()


class Language(enum.Enum):
    """The language of a Timer's statement. flambeau times Python only: ``CPP`` is
    accepted by name, and Timer refuses it.

    >>> from flambeau.utils.benchmark import Language
    >>> Language.PYTHON
    <Language.PYTHON: 0>
    """

    PYTHON = 0
    CPP = 1


def _normalize_snippet(code: str) -> str:
    """Dedented, without the first newline of a triple-quoted block and without trailing
    whitespace; what runs is the same, and reprs read better."""
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Timer:
    """Times a Python statement as PyTorch's ``torch.utils.benchmark.Timer`` does.

    Unlike ``timeit.Timer``, it warms up before measuring, runs the statement with
    ``num_threads`` intra-op threads (restoring the previous count afterwards), and
    returns a Measurement that keeps every replicate. The statement and setup run in a
    copy of ``globals`` in which ``torch`` and ``flambeau`` name flambeau unless given,
    so snippets written for PyTorch run unchanged.

    Args:
        stmt: the code to time.
        setup: code run once before timing, defining what ``stmt`` uses.
        global_setup: C++ only; must be empty for Python.
        timer: the clock, a callable returning seconds.
        globals: the variables ``stmt`` and ``setup`` see.
        label, sub_label, description, env: labels for Measurement and Compare
            (description names Compare's column, sub_label its row).
        num_threads: the thread count while timing. Default: 1.
        language: ``Language.PYTHON`` (or ``"py"``, ``"python"``). C++ is not supported.

    >>> from flambeau.utils.benchmark import Timer
    >>> t = Timer("x * 2", setup="x = flambeau.ones(4)", label="mul")
    >>> m = t.timeit(100)
    >>> m.number_per_run, len(m.times), m.title
    (100, 1, 'mul')
    """

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = timer,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        # A copy: exec adds __builtins__, and the caller's dict must not change.
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            self._globals.setdefault("torch", flambeau)
            self._globals.setdefault("flambeau", flambeau)
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(
                    f"global_setup is C++ only, got `{global_setup}`. Most "
                    "likely this code can simply be moved to `setup`."
                )
        elif language in (Language.CPP, "cpp", "c++"):
            if globals:
                raise ValueError("C++ timing does not support globals.")
            # PyTorch compiles C++ snippets with its JIT extension toolchain, which
            # flambeau does not have; PyTorch raises RuntimeError when that build fails.
            raise RuntimeError(
                "flambeau's Timer times Python statements only: language=Language.CPP "
                "(C++ snippets compiled against libtorch) is not supported. Time the "
                "Python call instead."
            )
        else:
            raise ValueError(f"Invalid language `{language}`.")

        stmt = _normalize_snippet(stmt)
        setup = _normalize_snippet(setup)
        self._timer = _timeit_module.Timer(
            stmt=stmt, setup=setup, timer=timer, globals=self._globals
        )
        self._task_spec = TaskSpec(
            stmt=stmt,
            setup=setup,
            global_setup=global_setup,
            label=label,
            sub_label=sub_label,
            description=description,
            env=env,
            num_threads=num_threads,
        )

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), _MIN_RUN_TIME)

    def _measurement(self, number: int, times: list[float]) -> Measurement:
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Runs the statement ``number`` times (after a warm-up of ``number // 100``
        runs, at least 2) and returns that one replicate, as ``timeit.Timer.timeit``.

        >>> from flambeau.utils.benchmark import Timer
        >>> Timer("pass").timeit(10).number_per_run
        10
        """
        with set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return self._measurement(number, [self._timeit(number)])

    def repeat(self, repeat: int = -1, number: int = -1):
        """Not supported, as in PyTorch: use blocked_autorange.

        >>> from flambeau.utils.benchmark import Timer
        >>> Timer().repeat()
        Traceback (most recent call last):
        ...
        NotImplementedError: See `Timer.blocked_autorange.`
        """
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        """Not supported, as in PyTorch: use blocked_autorange.

        >>> from flambeau.utils.benchmark import Timer
        >>> Timer().autorange()
        Traceback (most recent call last):
        ...
        NotImplementedError: See `Timer.blocked_autorange.`
        """
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time: float) -> int:
        """The smallest power of ten of executions per replicate whose time dwarfs the
        timer's own overhead (under 0.01%) and is at least min_run_time / 1000; this
        doubles as the warm-up."""
        with set_torch_threads(self._task_spec.num_threads):
            overhead = sorted(self._timeit(0) for _ in range(5))[2]
            number = 1
            while True:
                elapsed = self._timeit(number)
                if overhead / elapsed <= 1e-4 and elapsed >= min_run_time / 1000:
                    break
                if elapsed > min_run_time or number * 10 > _MAX_BLOCK_SIZE:
                    break
                number *= 10
        return number

    def _measure_blocks(self, number, can_stop, min_run_time, max_run_time, callback):
        """Times blocks of ``number`` executions until they total min_run_time and
        ``can_stop(times)`` agrees, or until they pass max_run_time (if given)."""
        times: list[float] = []
        total = 0.0
        stop = False
        with set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not stop:
                elapsed = self._timeit(number)
                times.append(elapsed)
                total += elapsed
                if callback:
                    callback(number, elapsed)
                stop = can_stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        """Times blocks of executions until they total ``min_run_time`` seconds.

        The block size is chosen first (a warm-up that grows it tenfold until the timer's
        overhead is negligible); each block is one replicate of the Measurement.
        ``callback(number, seconds)`` is called after each block.

        A fake clock that each execution advances by half a second:

        >>> from flambeau.utils.benchmark import Timer
        >>> clock = [0.0]
        >>> t = Timer("clock[0] += 0.5", timer=lambda: clock[0], globals={"clock": clock})
        >>> m = t.blocked_autorange(min_run_time=2.0)
        >>> m.number_per_run, m.raw_times
        (1, [0.5, 0.5, 0.5, 0.5])
        """
        number = self._estimate_block_size(min_run_time)
        times = self._measure_blocks(
            number,
            lambda times: True,
            min_run_time=min_run_time,
            max_run_time=None,
            callback=callback,
        )
        return self._measurement(number, times)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback=None,
    ) -> Measurement:
        """Like blocked_autorange, but keeps timing blocks until the times are steady:
        at least four blocks, ``min_run_time`` seconds in all and an interquartile range
        under ``threshold`` times the median; or until ``max_run_time`` seconds.

        A fake clock that each execution advances by half a second (steady from the
        start, so four blocks suffice):

        >>> from flambeau.utils.benchmark import Timer
        >>> clock = [0.0]
        >>> t = Timer("clock[0] += 0.5", timer=lambda: clock[0], globals={"clock": clock})
        >>> m = t.adaptive_autorange()
        >>> m.number_per_run, m.raw_times
        (1, [0.5, 0.5, 0.5, 0.5])
        """
        number = self._estimate_block_size(min_run_time=0.05)

        def steady(times):
            return len(times) > 3 and self._measurement(number, times).meets_confidence(
                threshold=threshold
            )

        times = self._measure_blocks(number, steady, min_run_time, max_run_time, callback)
        return self._measurement(number, times)

    def collect_callgrind(
        self,
        number: int = 100,
        *,
        repeats: int | None = None,
        collect_baseline: bool = True,
        retain_out_file: bool = False,
    ):
        """Not supported: flambeau has no Callgrind (Valgrind) bindings. Raises OSError,
        as PyTorch does where Valgrind is unavailable, after PyTorch's checks of the
        arguments and of the statement (run once).

        >>> from flambeau.utils.benchmark import Timer
        >>> Timer("pass").collect_callgrind()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        OSError: collect_callgrind is not supported by flambeau: ...
        """
        if repeats is not None and repeats < 1:
            raise ValueError("If specified, `repeats` must be >= 1")
        self._timeit(1)  # a faulty stmt or setup fails here, as in PyTorch
        raise OSError(
            "collect_callgrind is not supported by flambeau: it has no Valgrind/Callgrind "
            "bindings. Use blocked_autorange or adaptive_autorange to measure wall time."
        )
