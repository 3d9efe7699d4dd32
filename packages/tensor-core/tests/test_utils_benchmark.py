"""flambeau.utils.benchmark: Timer's algorithms on a fake clock (every result exactly
predictable), Measurement's statistics against numpy, and Compare's tables as PyTorch
lays them out. No test depends on real timings."""

import dataclasses
import inspect
import pickle
import re

import numpy as np
import pytest

import flambeau
from flambeau.utils import benchmark
from flambeau.utils.benchmark import Compare, Language, Measurement, TaskSpec, Timer


class FakeClock:
    """A clock that only the timed statement moves: each ``tick()`` is ``cost`` seconds.
    Costs are powers of two, so sums of them are exact."""

    def __init__(self, cost):
        self.cost = cost
        self.now = 0.0
        self.ticks = 0

    def tick(self):
        self.ticks += 1
        self.now += self.cost

    def __call__(self):
        return self.now


def fake_timer(cost, **kwargs):
    clock = FakeClock(cost)
    return clock, Timer("clock.tick()", timer=clock, globals={"clock": clock}, **kwargs)


# ---- Timer ----------------------------------------------------------------------------------


def test_timeit_runs_a_warmup_then_one_replicate():
    clock, timer = fake_timer(2.0**-10)
    m = timer.timeit(number=500)
    assert m.number_per_run == 500
    assert m.raw_times == [500 * 2.0**-10]
    assert clock.ticks == 5 + 500  # warm-up: number // 100, at least 2
    clock, timer = fake_timer(2.0**-10)
    timer.timeit(number=10)
    assert clock.ticks == 2 + 10


def test_blocked_autorange_block_size_and_replicates():
    # overhead 1 ns (the floor); per execution 2**-20 s. Block sizes 1, 10, 100 leave the
    # overhead above 0.01% or the block under min_run_time / 1000; 1000 does not.
    clock, timer = fake_timer(2.0**-20)
    calls = []
    m = timer.blocked_autorange(callback=lambda n, t: calls.append((n, t)))
    block = 1000 * 2.0**-20
    assert m.number_per_run == 1000
    assert m.raw_times == [block] * 210  # the first total >= 0.2 s
    assert calls == [(1000, block)] * 210
    assert clock.ticks == 1 + 10 + 100 + 1000 + 210 * 1000


def test_blocked_autorange_stops_growing_a_block_past_min_run_time():
    clock, timer = fake_timer(0.5)
    m = timer.blocked_autorange(min_run_time=2.0)
    assert (m.number_per_run, m.raw_times) == (1, [0.5] * 4)


def test_adaptive_autorange_stops_once_steady():
    clock, timer = fake_timer(2.0**-20)
    m = timer.adaptive_autorange()
    # Block size for 0.05 s: 100 executions; then blocks until 0.01 s (105 of them).
    assert m.number_per_run == 100
    assert m.raw_times == [100 * 2.0**-20] * 105
    clock, timer = fake_timer(0.5)
    m = timer.adaptive_autorange(min_run_time=0.1)
    assert m.raw_times == [0.5] * 4  # never fewer than four blocks


class NoisyClock(FakeClock):
    """Every third tick costs four times as much: never steady within 10%."""

    def tick(self):
        self.ticks += 1
        self.now += 4 * self.cost if self.ticks % 3 == 0 else self.cost


def test_adaptive_autorange_gives_up_at_max_run_time():
    clock = NoisyClock(0.25)
    timer = Timer("clock.tick()", timer=clock, globals={"clock": clock})
    calls = []
    m = timer.adaptive_autorange(max_run_time=5.0, callback=lambda n, t: calls.append(t))
    assert m.number_per_run == 1
    assert sum(m.raw_times) > 5.0 and sum(m.raw_times[:-1]) <= 5.0
    assert calls == m.raw_times
    steady = Measurement(1, m.raw_times[:-1], m.task_spec)
    assert not steady.meets_confidence(0.1)
    # A loose threshold accepts the same noise after four blocks.
    clock = NoisyClock(0.25)
    timer = Timer("clock.tick()", timer=clock, globals={"clock": clock})
    assert len(timer.adaptive_autorange(threshold=10.0, max_run_time=5.0).raw_times) == 4


@pytest.mark.parametrize("method", ["timeit", "blocked_autorange", "adaptive_autorange"])
def test_statement_runs_with_num_threads_and_the_count_comes_back(method):
    seen = []
    clock = FakeClock(0.5)
    stmt = "seen.append(torch.get_num_threads()); clock.tick()"
    timer = Timer(stmt, timer=clock, globals={"seen": seen, "clock": clock}, num_threads=2)
    previous = flambeau.get_num_threads()
    flambeau.set_num_threads(1)
    try:
        m = timer.timeit(3) if method == "timeit" else getattr(timer, method)()
        assert flambeau.get_num_threads() == 1
    finally:
        flambeau.set_num_threads(previous)
    assert seen and set(seen) == {2}
    assert m.num_threads == 2


def test_globals_are_copied_and_torch_names_flambeau():
    names = {"x": 3}
    out = []
    timer = Timer("out.append((torch, flambeau, x))", globals={**names, "out": out})
    timer.timeit(1)
    assert out[-1] == (flambeau, flambeau, 3)
    given = {"out": out}
    Timer("out.append(1)", globals=given).timeit(1)
    assert set(given) == {"out"}  # no __builtins__, torch or flambeau added


def test_setup_runs_before_the_statement_and_snippets_are_dedented():
    timer = Timer(
        """
        y = x * 2
        """,
        setup="""
            x = 21
        """,
        label="double",
    )
    assert timer.timeit(4).task_spec == TaskSpec("y = x * 2", "x = 21", label="double")


@pytest.mark.parametrize("language", [Language.PYTHON, "py", "python"])
def test_python_language_spellings(language):
    assert Timer("pass", language=language).timeit(2).number_per_run == 2


def test_timer_errors():
    with pytest.raises(ValueError, match=r"Currently only a `str` stmt is supported\."):
        Timer(lambda: None)
    with pytest.raises(ValueError, match=r"Invalid language `java`\."):
        Timer("pass", language="java")
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only, got `#include <x>`"):
        Timer("pass", global_setup="#include <x>")
    with pytest.raises(ValueError, match=r"C\+\+ timing does not support globals\."):
        Timer("x", language="cpp", globals={"x": 1})
    for language in (Language.CPP, "cpp", "c++"):
        with pytest.raises(RuntimeError, match="Python statements only"):
            Timer("x;", language=language)
    with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
        Timer().repeat()
    with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
        Timer().autorange()
    with pytest.raises(ValueError, match="`repeats` must be >= 1"):
        Timer().collect_callgrind(repeats=0)
    with pytest.raises(OSError, match="collect_callgrind is not supported"):
        Timer().collect_callgrind(10, repeats=2)
    with pytest.raises(NameError):
        Timer("undefined_name").collect_callgrind()  # the statement runs first, as in PyTorch


def test_default_timer_is_a_clock():
    a = benchmark.timer()
    assert isinstance(a, float) and benchmark.timer() >= a
    assert inspect.signature(Timer).parameters["timer"].default is benchmark.timer


# ---- Measurement ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_statistics_match_numpy(seed):
    rng = np.random.default_rng(seed)
    raw = list(rng.lognormal(-9, 0.3, size=int(rng.integers(1, 40))))
    number = int(rng.choice([1, 10, 1000]))
    m = Measurement(number, raw, TaskSpec("f()", "pass"))
    times = np.array(raw) / number
    np.testing.assert_allclose(m.times, times, rtol=1e-15)
    assert m.mean == pytest.approx(times.mean(), rel=1e-12)
    assert m.median == pytest.approx(np.median(times), rel=1e-12)
    p25, p75 = np.quantile(times, [0.25, 0.75])
    assert m.iqr == pytest.approx(p75 - p25, rel=1e-9, abs=1e-18)
    assert m.has_warnings == (not (m.iqr / m.median < 0.1))
    assert m.meets_confidence(0.5) == ((p75 - p25) / np.median(times) < 0.5)


@pytest.mark.parametrize(
    ("times", "expected"),
    [
        ([1.0] * 4, 4),  # no spread: capped at 4
        ([1e-8] * 4, 1),  # the 25 ns floor of the interval: at least 1
        ([1.0, 1.02, 0.98, 1.0, 1.01, 0.99, 1.03, 0.97], 2),
        ([1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 1.2, 0.8], 1),
        ([1.0, 1.001, 0.999, 1.0, 1.0005, 0.9995, 1.002, 0.998], 3),
    ],
)
def test_significant_figures(times, expected):
    m = Measurement(1, times, TaskSpec("f()", "pass"))
    # The estimate: floor(log10(median / (1.645 * std / sqrt(n)))) over the middle half.
    s = sorted(times)
    middle = np.array(s[len(s) // 4 : int(np.ceil(3 * len(s) / 4))])
    interval = max(1.645 * middle.std() / np.sqrt(len(middle)), 25e-9)
    assert expected == min(max(int(np.floor(np.log10(np.median(s) / interval))), 1), 4)
    assert m.significant_figures == expected


def test_task_spec_fields_read_through():
    spec = TaskSpec(
        "f(x)", "x = 1", label="L", sub_label="S", description="D", env="E", num_threads=3
    )
    m = Measurement(1, [1.0], spec, metadata={"k": 1})
    assert (m.stmt, m.setup, m.label, m.sub_label, m.description) == (
        "f(x)",
        "x = 1",
        "L",
        "S",
        "D",
    )
    assert (m.env, m.num_threads, m.global_setup) == ("E", 3, "")
    assert m.title == "L: S" and m.as_row_name == "S"
    assert Measurement(1, [1.0], TaskSpec("f(x)", "pass")).env is None  # as PyTorch's reads
    with pytest.raises(AttributeError):
        _ = m.not_a_field


def test_task_spec_titles():
    assert TaskSpec("f(x)", "pass").title == "f(x)"
    assert TaskSpec("f(x)", "pass", sub_label="s").title == "f(x): s"
    assert TaskSpec("a\nb", "pass").title == "stmt:\n  a\n  b"
    assert TaskSpec("a\nb", "pass", sub_label="s").title == "stmt: (s)\n  a\n  b"
    assert TaskSpec("a\nb", "pass", label="L").title == "L"
    assert TaskSpec("f", "a\nb").setup_str() == "setup:\n  a\n  b"
    spec = TaskSpec("f", "pass")
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.stmt = "g"
    assert hash(spec) == hash(TaskSpec("f", "pass"))


def without_address(text):
    return re.sub(r"<[\w.]+ object at 0x[0-9a-f]+>", "<Measurement>", text)


REPRS = [
    (
        Measurement(
            100,
            [1e-4, 1.1e-4, 1.2e-4, 3e-4, 1.05e-4],
            TaskSpec("x + 1", "pass", label="add", sub_label="f32", description="n=4"),
        ),
        "<Measurement>\nadd: f32\nn=4\n  Median: 1.10 us\n  IQR:    0.15 us (1.05 to 1.20)\n"
        "  5 measurements, 100 runs per measurement, 1 thread\n"
        "  WARNING: Interquartile range is 13.6% of the median measurement.\n"
        "           This could indicate system fluctuation.",
    ),
    (
        Measurement(
            10,
            [5e-6],
            TaskSpec("y = x * 2\nz = y", "import math\nx = 1", description="d", num_threads=2),
        ),
        "<Measurement>\nstmt:\n  y = x * 2\n  z = y\n\nd\nsetup:\n  import math\n  x = 1\n\n"
        "  500.00 ns\n  1 measurement, 10 runs , 2 threads",
    ),
    (
        Measurement(10, [5e-6, 6e-6], TaskSpec("y", "x = 1")),
        "<Measurement>\ny\nsetup: x = 1\n  Median: 550.00 ns\n"
        "  2 measurements, 10 runs per measurement, 1 thread",
    ),
    (
        Measurement(1, [1.0, 1.0, 2.0, 3.0, 4.0], TaskSpec("y", "pass")),
        "<Measurement>\ny\n  Median: 2.00 s\n  IQR:    2.00 s (1.00 to 3.00)\n"
        "  5 measurements, 1 runs per measurement, 1 thread\n"
        "  WARNING: Interquartile range is 100.0% of the median measurement.\n"
        "           This suggests significant environmental influence.",
    ),
    (
        Measurement(1, [1.0, 1.01, 1.02, 1.0], TaskSpec("y", "pass")),
        "<Measurement>\ny\n  Median: 1.00 s\n  IQR:    0.01 s (1.00 to 1.01)\n"
        "  4 measurements, 1 runs per measurement, 1 thread",
    ),
]


@pytest.mark.parametrize(("m", "expected"), REPRS)
def test_repr_is_pytorchs(m, expected):
    assert without_address(repr(m)) == expected
    assert repr(m).startswith("<flambeau.utils.benchmark.utils.common.Measurement object at 0x")


def test_merge_groups_replicates():
    a, b = TaskSpec("f()", "pass"), TaskSpec("g()", "pass")
    merged = Measurement.merge(
        [
            Measurement(2, [4.0, 6.0], a, metadata={"run": 1}),
            Measurement(1, [8.0], b),
            Measurement(4, [4.0], a),
        ]
    )
    assert [m.task_spec for m in merged] == [a, b]
    assert merged[0].raw_times == [2.0, 3.0, 1.0] and merged[0].number_per_run == 1
    assert merged[0].metadata is None


def test_measurement_pickles():
    m = Measurement(10, [1.0, 2.0], TaskSpec("f()", "pass", label="L"), metadata={"k": 1})
    median = m.median  # statistics computed before pickling come along
    back = pickle.loads(pickle.dumps(m))
    assert back == m and back.median == median and back.label == "L"


def test_formatting_helpers():
    assert benchmark.select_unit(3e-5) == ("us", 1e-6)
    assert [benchmark.select_unit(t)[0] for t in (2e-9, 2e-6, 2e-3, 2.0, 2e3, 5e-10)] == [
        "ns",
        "us",
        "ms",
        "s",
        "s",
        "s",
    ]
    assert benchmark.unit_to_english("ns") == "nanosecond"
    assert benchmark.trim_sigfig(3.14159, 2) == pytest.approx(3.1, rel=1e-6)
    assert benchmark.trim_sigfig(123456.0, 3) == 123000.0
    with pytest.raises(AssertionError, match="must be an integer"):
        benchmark.trim_sigfig(1.0, 2.5)
    assert benchmark.ordered_unique(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]


# ---- Compare --------------------------------------------------------------------------------


def measured(sub, desc, times, *, label="add", env=None, threads=1):
    spec = TaskSpec(
        "x + y", "pass", label=label, sub_label=sub, description=desc, env=env, num_threads=threads
    )
    return Measurement(1, times, spec)


RESULTS = [
    measured("float", "n=1", [2.0e-6, 2.1e-6, 2.2e-6, 2.3e-6]),
    measured("int", "n=1", [3.0e-6, 3.5e-6, 4.5e-6, 6.0e-6]),
    measured("float", "n=1024", [40e-6, 41e-6, 41e-6, 42e-6]),
    measured("float", "n=1", [1.1e-6, 1.1e-6, 1.2e-6, 1.2e-6], threads=4),
]
# Rendered by torch.utils.benchmark.Compare from the same measurements.
PLAIN = (
    "[----------- add ------------]\n"
    "             |  n=1  |  n=1024\n"
    "1 threads: -------------------\n"
    "      float  |  2.1  |   41.0 \n"
    "      int    |  4.0  |        \n"
    "4 threads: -------------------\n"
    "      float  |  1.2  |        \n"
    "\n"
    "Times are in microseconds (us).\n"
)
TRIMMED_WITH_WARNINGS = (
    "[-------------- add ---------------]\n"
    "             |     n=1     |  n=1024\n"
    "1 threads: -------------------------\n"
    "      float  |   2         |   41.0 \n"
    "      int    |  4 (! 38%)  |        \n"
    "4 threads: -------------------------\n"
    "      float  |   1         |        \n"
    "\n"
    "Times are in microseconds (us).\n"
    "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
)
BEST = "\x1b[92m\x1b[1m{}\x1b[0m\x1b[0m"
VERY_BAD = "\x1b[31m\x1b[1m{}\x1b[0m\x1b[0m"


def test_compare_table_layout(capsys):
    compare = Compare(RESULTS)
    assert str(compare) == PLAIN
    compare.print()
    assert capsys.readouterr().out == PLAIN + "\n"


def test_compare_trims_and_highlights():
    compare = Compare(RESULTS)
    compare.trim_significant_figures()
    compare.highlight_warnings()
    assert str(compare) == TRIMMED_WITH_WARNINGS


def test_compare_colorize_columnwise_and_rowwise():
    compare = Compare(RESULTS)
    compare.colorize()
    lines = str(compare).splitlines()
    assert lines[3] == f"      float  |  {BEST.format('2.1')}  |  {BEST.format(' 41.0 ')}"
    assert lines[4] == "      int    |  4.0  |        "  # 1.9x the best: uncolored
    compare = Compare(RESULTS)
    compare.colorize(rowwise=True)
    lines = str(compare).splitlines()
    assert lines[3] == f"      float  |  {BEST.format('2.1')}  |  {VERY_BAD.format(' 41.0 ')}"
    assert lines[4] == f"      int    |  {BEST.format('4.0')}  |        "


def test_compare_groups_labels_and_shows_envs():
    compare = Compare(
        [
            measured("a", "d", [1e-3], env="main"),
            measured("a", "d", [2e-3], env="feature"),
            measured("b", "d", [5e-3], label="sub"),
        ]
    )
    assert str(compare) == (
        "[------- add --------]\n"
        "                |   d \n"
        "1 threads: -----------\n"
        "  (feature)  a  |  2.0\n"
        "  (main)     a  |  1.0\n"
        "\n"
        "Times are in milliseconds (ms).\n"
        "\n"
        "[---- sub ----]\n"
        "         |   d \n"
        "1 threads: ----\n"
        "      b  |  5.0\n"
        "\n"
        "Times are in milliseconds (ms).\n"
    )


def test_compare_merges_replicates_and_extends():
    compare = Compare([measured("a", "d", [1e-3])])
    compare.extend_results([measured("a", "d", [3e-3]), measured("b", "d", [2e-3])])
    lines = str(compare).splitlines()
    assert lines[3:5] == ["      a  |  2.0", "      b  |  2.0"]  # a: median of 1 and 3 ms
    with pytest.raises(
        ValueError, match="Expected an instance of `Measurement`, got <class 'str'> instead."
    ):
        compare.extend_results(["x"])


def test_compare_tolerates_what_pytorch_cannot_render():
    # PyTorch fails on a missing description and on mixing set and unset envs.
    text = str(Compare([measured("a", None, [1e-3]), measured("a", None, [1e-3], env="E")]))
    assert "(Unspecified env)  a" in text and "(E)                a" in text


def test_utils_loads_benchmark_lazily():
    assert flambeau.utils.benchmark is benchmark
    assert sorted(benchmark.__all__) == benchmark.__all__
