"""flambeau.profiler: what it records (operators, ranges, shapes, memory, stacks, flops),
how events nest, the schedule's steps, and the table and trace it writes."""

from __future__ import annotations

import gzip
import json
import os
import threading
import warnings

import pytest

import flambeau
from flambeau import profiler
from flambeau.profiler import ProfilerAction, profile, record_function, schedule


def names(events):
    return [e.name for e in events]


def test_operators_and_ranges_are_recorded_in_order_with_nesting():
    with profile() as prof:
        with record_function("outer"):
            a = flambeau.ones(3)
            with record_function("inner"):
                b = a * 2
        c = b + 1
    events = prof.events()
    assert names(events) == ["outer", "aten::ones", "inner", "aten::mul", "aten::add"]
    by_name = {e.name: e for e in events}
    assert by_name["aten::ones"].cpu_parent is by_name["outer"]
    assert by_name["inner"].cpu_parent is by_name["outer"]
    assert by_name["aten::mul"].cpu_parent is by_name["inner"]
    assert by_name["aten::add"].cpu_parent is None
    assert by_name["outer"].is_user_annotation and not by_name["aten::mul"].is_user_annotation
    outer = by_name["outer"]
    assert outer.time_range.start <= by_name["aten::ones"].time_range.start
    assert by_name["aten::mul"].time_range.end <= outer.time_range.end
    # Self time is what the children do not cover.
    children = sum(ch.cpu_time_total for ch in outer.cpu_children)
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - children)
    assert c.tolist() == [3.0, 3.0, 3.0]


def test_methods_operators_and_in_place_calls_use_pytorch_names():
    x = flambeau.ones(2, 2)
    with profile() as prof:
        x.matmul(x)
        x.add_(1)
        x += 1
        _ = -x
        flambeau.relu(x)
    assert names(prof.events()) == [
        "aten::matmul",
        "aten::add_",
        "aten::add_",
        "aten::neg",
        "aten::relu",
    ]


def test_indexing_assignment_and_item_are_recorded_as_pytorch_names_them():
    x = flambeau.arange(6.0).reshape(2, 3)
    rows, ones = flambeau.tensor([1, 0]), flambeau.ones(3)
    with profile(record_shapes=True) as prof:
        x[0]
        x[:, 1:]
        x[rows]
        x[0] = 7.0
        x[1] = ones
        x[x > 6] = 0.0
        value = x[1, 2].item()
    assert names(prof.events()) == [
        "aten::select",
        "aten::slice",
        "aten::index",
        "aten::fill_",
        "aten::copy_",
        "aten::gt",
        "aten::index_put_",
        "aten::select",
        "aten::item",
    ]
    assert prof.events()[0].input_shapes == [[2, 3]]
    assert value == 1.0


def test_nothing_is_recorded_outside_a_profile():
    flambeau.ones(2) + 1
    with record_function("not profiled"):
        flambeau.ones(2)
    with profile() as prof:
        pass
    assert len(prof.events()) == 0
    assert not flambeau._C._profiler_active()


def test_record_shapes_and_concrete_inputs():
    a, b = flambeau.ones(4, 3), flambeau.ones(3, 5)
    with profile(record_shapes=True) as prof:
        a @ b
        a.sum(1)
    mm, s = prof.events()
    assert mm.input_shapes == [[4, 3], [3, 5]]
    assert s.input_shapes[0] == [4, 3]
    assert s.concrete_inputs[1] == "1"
    with profile() as prof:
        a @ b
    assert prof.events()[0].input_shapes == []


def test_key_averages_groups_by_name_and_by_shapes():
    with profile(record_shapes=True) as prof:
        for n in (2, 2, 3):
            flambeau.ones(n) * 2
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["aten::mul"].count == 3
    total = sum(e.cpu_time_total for e in prof.events() if e.name == "aten::mul")
    assert rows["aten::mul"].cpu_time_total == pytest.approx(total)
    assert rows["aten::mul"].cpu_time == pytest.approx(total / 3)
    by_shape = [r for r in prof.key_averages(group_by_input_shape=True) if r.key == "aten::mul"]
    assert sorted(r.count for r in by_shape) == [1, 2]
    assert sorted(str(r.input_shapes) for r in by_shape) == ["[[2], []]", "[[3], []]"]


def test_profile_memory_counts_net_bytes_per_event():
    with profile(profile_memory=True) as prof:
        with record_function("keep"):
            kept = flambeau.empty(1000, dtype=flambeau.float64)
        flambeau.empty(500, dtype=flambeau.float32)  # freed at once
    empties = [e.cpu_memory_usage for e in prof.events() if e.name == "aten::empty"]
    assert empties == [8000, 2000]  # what each call handed out; the second is freed after
    keep = next(e for e in prof.events() if e.name == "keep")
    assert keep.cpu_memory_usage == 8000
    assert keep.self_cpu_memory_usage == 0  # its child allocated it
    assert kept.numel() == 1000


def test_with_stack_records_the_calling_python_frame():
    def model_forward():
        return flambeau.ones(2) + 1

    with profile(with_stack=True) as prof:
        model_forward()
    add = next(e for e in prof.events() if e.name == "aten::add")
    assert "model_forward" in add.stack[0] and __file__ in add.stack[0]
    assert not any("/flambeau/profiler/" in f for f in add.stack)


def test_with_flops_counts_products_and_convolutions_by_hand():
    a, b = flambeau.ones(8, 16), flambeau.ones(16, 4)
    x, w = flambeau.ones(2, 3, 8, 8), flambeau.ones(4, 3, 3, 3)
    batch = flambeau.ones(5, 8, 16)
    with profile(with_flops=True) as prof:
        a @ b
        batch @ b
        flambeau.conv2d(x, w, stride=2, padding=1)
        a * a
    flops = {e.name + str(i): e.flops for i, e in enumerate(prof.events())}
    assert list(flops.values()) == [
        2 * 8 * 16 * 4,
        2 * 5 * 8 * 16 * 4,
        2 * 2 * (4 * 4) * (4 * 3 * 3 * 3),  # output 4x4 per sample, one FMA per weight
        8 * 16,
    ]
    # with_flops alone does not show shapes
    assert prof.events()[0].input_shapes == []


def test_table_lists_columns_rows_and_the_total():
    with profile(profile_memory=True, with_flops=True) as prof:
        flambeau.ones(4, 4) @ flambeau.ones(4, 4)
    text = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    header = text.splitlines()[1]
    for column in ("Name", "Self CPU %", "CPU total", "CPU Mem", "# of Calls", "FLOPs"):
        assert column in header
    assert "aten::matmul" in text and "aten::ones" in text
    assert text.rstrip().splitlines()[-1].startswith("Self CPU time total: ")
    with pytest.raises(AttributeError, match="no_such_field"):
        prof.key_averages().table(sort_by="no_such_field")
    assert len(prof.key_averages().table(row_limit=1).splitlines()) == 6


def test_chrome_trace_is_valid_json_with_complete_events(tmp_path):
    with profile(record_shapes=True) as prof:
        with record_function("region"):
            flambeau.ones(3) + 1
    prof.add_metadata("run", "test")
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    assert doc["run"] == "test"
    complete = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in complete] == ["region", "aten::ones", "aten::add"]
    region = complete[0]
    assert region["cat"] == "user_annotation" and complete[1]["cat"] == "cpu_op"
    assert region["pid"] == os.getpid() and region["tid"] == threading.get_native_id()
    assert complete[2]["args"]["Input Dims"] == [[3], []]
    for e in complete[1:]:
        assert region["ts"] <= e["ts"] and e["ts"] + e["dur"] <= region["ts"] + region["dur"]
    gz = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(str(gz))
    assert json.loads(gzip.open(gz, "rt").read())["traceEvents"]


def test_events_of_other_threads_carry_their_thread():
    def work():
        flambeau.ones(2) * 3

    with profile() as prof:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        flambeau.ones(2) * 3
    threads = {e.thread for e in prof.events() if e.name == "aten::mul"}
    assert len(threads) == 2 and threading.get_native_id() in threads


@pytest.mark.parametrize(
    "kwargs, expected",
    [  # from torch.profiler.schedule
        (dict(wait=1, warmup=1, active=2, repeat=1), [0, 1, 2, 3, 0, 0, 0, 0]),
        (dict(wait=2, warmup=0, active=1, repeat=2, skip_first=1), [0, 0, 0, 3, 0, 0, 3, 0]),
        (dict(wait=2, warmup=1, active=2, repeat=2, skip_first_wait=1), [1, 2, 3, 0, 0, 1, 2, 3]),
        (dict(wait=0, warmup=1, active=1), [1, 3, 1, 3, 1, 3, 1, 3]),
    ],
)
def test_schedule_matches_pytorch(kwargs, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = schedule(**kwargs)
    assert [s(i).value for i in range(8)] == expected


def test_schedule_rejects_bad_arguments():
    with pytest.raises(ValueError, match="active"):
        schedule(wait=0, warmup=1, active=0)
    with pytest.raises(ValueError, match="wait"):
        schedule(wait=-1, warmup=1, active=1)
    with pytest.warns(UserWarning, match="warmup"):
        schedule(wait=0, warmup=0, active=1)


def test_scheduled_profile_saves_each_cycle_with_step_ranges():
    saved = []

    def on_ready(p):
        saved.append(names(p.events()))

    s = schedule(wait=1, warmup=1, active=2, repeat=2)
    with profile(schedule=s, on_trace_ready=on_ready) as prof:
        for step in range(10):
            flambeau.full((1,), float(step)) + 1
            prof.step()
    assert len(saved) == 2
    # cycle 1 records steps 2 and 3, cycle 2 steps 6 and 7; warm-up steps are dropped
    assert [n for n in saved[0] if n.startswith("ProfilerStep")] == [
        "ProfilerStep#2",
        "ProfilerStep#3",
    ]
    assert [n for n in saved[1] if n.startswith("ProfilerStep")] == [
        "ProfilerStep#6",
        "ProfilerStep#7",
    ]
    assert saved[0].count("aten::full") == 2
    assert prof.step_num == 10


def test_unfinished_cycle_is_saved_at_stop():
    saved = []
    s = schedule(wait=0, warmup=1, active=3)
    with profile(schedule=s, on_trace_ready=lambda p: saved.append(len(p.events()))) as prof:
        for _ in range(2):
            flambeau.ones(1)
            prof.step()
    assert len(saved) == 1  # step 1 was recording when the profile stopped


def test_start_stop_without_context_manager():
    prof = profile()
    prof.start()
    flambeau.zeros(2)
    prof.stop()
    assert names(prof.events()) == ["aten::zeros"]
    assert prof.key_averages()[0].key == "aten::zeros"


def test_errors():
    with pytest.raises(RuntimeError, match="nothing has been recorded"):
        profile().events()
    with profile():
        with pytest.raises(RuntimeError, match="already running"):
            with profile():
                pass
    with pytest.raises(TypeError, match="name must be a str"):
        record_function(3)
    with pytest.raises(RuntimeError, match="with_stack"):
        with profile() as prof:
            pass
        prof.export_stacks("/dev/null")
    with pytest.warns(UserWarning, match="CPU activity only"):
        profile(activities=[profiler.ProfilerActivity.CUDA])


def test_record_function_decorates_and_recurses():
    @record_function("fib")
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    with profile() as prof:
        assert fib(4) == 3
    fibs = [e for e in prof.events() if e.name == "fib"]
    assert len(fibs) == 9
    assert all(e.time_range.end <= fibs[0].time_range.end for e in fibs)


def test_tensorboard_trace_handler_writes_one_file_per_cycle(tmp_path):
    handler = profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w0")
    s = schedule(wait=0, warmup=1, active=1, repeat=2)
    with profile(schedule=s, on_trace_ready=handler) as prof:
        for _ in range(5):
            flambeau.ones(1)
            prof.step()
    files = sorted(os.listdir(tmp_path / "tb"))
    assert len(files) == 2 and all(
        f.startswith("w0.") and f.endswith(".pt.trace.json") for f in files
    )


def test_export_stacks_writes_folded_stacks(tmp_path):
    with profile(with_stack=True) as prof:
        flambeau.ones(2) + 1
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path))
    lines = path.read_text().splitlines()
    assert lines and all(line.rsplit(" ", 1)[1].isdigit() for line in lines)
    assert any(line.rsplit(" ", 1)[0].endswith(";aten::add") for line in lines)


def test_supported_activities_and_kineto():
    assert profiler.supported_activities() == {profiler.ProfilerActivity.CPU}
    assert profiler.kineto_available()
    assert ProfilerAction.RECORD_AND_SAVE.value == 3


def test_step_tracker_counts_each_iteration_once_across_requesters():
    tracker = profiler.KinetoStepTracker
    tracker.init_step_count("test-a")
    tracker.init_step_count("test-b")
    start = tracker.current_step()
    assert tracker.increment_step("test-a") == start + 1
    assert tracker.increment_step("test-b") == start + 1  # the same iteration
    assert tracker.increment_step("test-b") == start + 2
    assert tracker.erase_step_count("test-a") and tracker.erase_step_count("test-b")
    assert not tracker.erase_step_count("test-a")
    assert profiler.RecordScope.USER_SCOPE == 7


def test_optimizer_names_come_from_flambeau_optim():
    optim = pytest.importorskip("flambeau.optim")
    assert profiler.Optimizer is optim.Optimizer
    assert profiler.register_optimizer_step_post_hook is (
        optim.optimizer.register_optimizer_step_post_hook
    )
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        profiler.nope  # noqa: B018
