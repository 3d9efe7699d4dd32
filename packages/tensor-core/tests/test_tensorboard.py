"""flambeau.utils.tensorboard: importing, the writers, and the summaries that are not
media, each written to an event file and read back with TensorBoard's own readers."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import types

import numpy as np
import pytest

pytest.importorskip("tensorboard")

from tensorboard.compat.proto.event_pb2 import SessionLog  # noqa: E402
from tensorboard.compat.proto.graph_pb2 import GraphDef  # noqa: E402
from tensorboard.plugins.custom_scalar import layout_pb2  # noqa: E402
from tensorboard.plugins.hparams import metadata as hparams_metadata  # noqa: E402
from tensorboard.plugins.mesh import metadata as mesh_metadata  # noqa: E402
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData  # noqa: E402
from tensorboard.util.tensor_util import make_ndarray  # noqa: E402
from tensorboard_events import (  # noqa: E402
    accumulator,
    all_events,
    event_files,
    events,
    values,
)

import flambeau  # noqa: E402
from flambeau.utils.tensorboard import FileWriter, SummaryWriter  # noqa: E402
from flambeau.utils.tensorboard import summary as S  # noqa: E402


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


# ---- importing ---------------------------------------------------------------------------------


def test_import_flambeau_and_flambeau_utils_do_not_import_tensorboard():
    out = run_python(
        "import sys, flambeau, flambeau.utils\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'tensorboard'))"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_without_tensorboard_the_import_fails_with_pytorchs_message():
    out = run_python(
        "import sys; sys.modules['tensorboard'] = None\n"
        "import flambeau, flambeau.utils\n"
        "for attempt in ('import flambeau.utils.tensorboard', 'flambeau.utils.tensorboard'):\n"
        "    try:\n"
        "        exec(attempt)\n"
        "    except ImportError as e:\n"
        "        print(type(e).__name__, e)\n"
    )
    assert out.returncode == 0, out.stderr
    message = "TensorBoard logging requires TensorBoard version 1.15 or above"
    assert out.stdout.splitlines() == [f"ModuleNotFoundError {message}"] * 2


def test_an_old_tensorboard_is_refused():
    out = run_python(
        "import sys, types\n"
        "sys.modules['tensorboard'] = types.SimpleNamespace(__version__='1.14.0')\n"
        "try:\n"
        "    import flambeau.utils.tensorboard\n"
        "except ImportError as e:\n"
        "    print(type(e).__name__, e)\n"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (
        "ImportError TensorBoard logging requires TensorBoard version 1.15 or above"
    )


def test_the_package_exports_pytorchs_names():
    from tensorboard.summary.writer.record_writer import RecordWriter

    import flambeau.utils.tensorboard as tb

    assert tb.__all__ == ["FileWriter", "RecordWriter", "SummaryWriter"]
    assert tb.RecordWriter is RecordWriter
    assert flambeau.utils.tensorboard is tb
    assert flambeau.utils.tensorboard.writer.SummaryWriter is SummaryWriter


# ---- writers -------------------------------------------------------------------------------------


def test_default_log_dir_is_runs_datetime_hostname_comment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1") as writer:
        logdir = writer.get_logdir()
    pattern = r"runs/[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_" + re.escape(socket.gethostname())
    assert re.fullmatch(pattern + "_lr0.1", logdir), logdir
    assert len(event_files(tmp_path / logdir)) == 1


def test_log_dir_given_ignores_comment_and_accepts_a_path(tmp_path):
    with SummaryWriter(tmp_path / "exp", comment="ignored", filename_suffix=".v2") as writer:
        assert writer.get_logdir() == tmp_path / "exp"
        assert writer.file_writer.get_logdir() == str(tmp_path / "exp")
    (path,) = event_files(tmp_path / "exp")
    assert path.name.endswith(".v2")


def test_context_manager_close_twice_and_writing_after_close(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalar("a", 1.0, 0)
    writer.close()  # a second close does nothing
    writer.add_scalar("a", 2.0, 1)  # a new event file
    writer.close()
    assert len(event_files(tmp_path)) == 2
    assert [(step, v.simple_value) for step, v in values(tmp_path)] == [(0, 1.0), (1, 2.0)]


def test_flush_writes_queued_events(tmp_path):
    writer = SummaryWriter(tmp_path, max_queue=1000, flush_secs=1000)
    writer.add_scalar("a", 3.0, 7)
    writer.flush()
    assert [(step, v.simple_value) for step, v in values(tmp_path)] == [(7, 3.0)]
    writer.close()


def test_purge_step_writes_a_restart_at_that_step(tmp_path):
    with SummaryWriter(tmp_path, purge_step=42) as writer:
        writer.add_scalar("a", 1.0, 42)
    written = all_events(tmp_path)
    assert [(e.step, e.file_version) for e in written[1:2]] == [(42, "brain.Event:2")]
    assert written[2].step == 42
    assert written[2].session_log.status == SessionLog.START
    assert writer.purge_step is None


def test_file_writer_events_summaries_steps_and_reopen(tmp_path):
    writer = FileWriter(tmp_path, filename_suffix=".fw")
    assert writer.get_logdir() == str(tmp_path)
    writer.add_summary(S.scalar("x", 1.5), global_step=np.int64(3), walltime=123.0)
    writer.reopen()  # open: nothing happens
    writer.close()
    writer.reopen()  # closed: a new event file
    writer.add_summary(S.scalar("x", 2.5), global_step=4)
    writer.close()
    assert len(event_files(tmp_path)) == 2
    got = events(tmp_path)
    assert [(e.step, e.summary.value[0].simple_value) for e in got] == [(3, 1.5), (4, 2.5)]
    assert got[0].wall_time == 123.0


def test_add_graph_raises_not_implemented_a_runtime_error(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(NotImplementedError, match="trace"):
            writer.add_graph(flambeau.nn.Linear(2, 1), flambeau.zeros(1, 2))
        assert issubclass(NotImplementedError, RuntimeError)
    assert values(tmp_path) == []


def test_add_onnx_graph_reads_the_model_with_onnx(tmp_path, monkeypatch):
    ns = types.SimpleNamespace

    def value_info(name, elem_type, dims):
        shape = ns(dim=[ns(dim_value=d) for d in dims])
        return ns(name=name, type=ns(tensor_type=ns(elem_type=elem_type, shape=shape)))

    class Attribute:
        def ListFields(self):  # noqa: N802 (protobuf's name)
            return [("name", "alpha"), ("f", 0.5)]

    graph = ns(
        input=[value_info("x", 1, [1, 3])],
        output=[value_info("y", 1, [1, 2])],
        node=[ns(output=["y"], op_type="Gemm", input=["x", "w"], attribute=[Attribute()])],
    )
    fake = types.ModuleType("onnx")
    fake.load = lambda path: ns(graph=graph)
    monkeypatch.setitem(sys.modules, "onnx", fake)
    with SummaryWriter(tmp_path) as writer:
        writer.add_onnx_graph("model.onnx")
    (event,) = events(tmp_path)
    graph_def = GraphDef.FromString(event.graph_def)
    assert [(n.name, n.op) for n in graph_def.node] == [
        ("x", "Variable"),
        ("y", "Variable"),
        ("y", "Gemm"),
    ]
    assert [d.size for d in graph_def.node[0].attr["shape"].shape.dim] == [1, 3]
    assert graph_def.node[2].attr["parameters"].s == b"alpha = 0.5"
    assert list(graph_def.node[2].input) == ["x", "w"]
    assert graph_def.versions.producer == 22


def test_add_onnx_graph_without_onnx_raises_module_not_found(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with SummaryWriter(tmp_path) as writer, pytest.raises(ModuleNotFoundError):
        writer.add_onnx_graph("model.onnx")


# ---- scalars and tensors ------------------------------------------------------------------------


@pytest.mark.parametrize("new_style", [False, True])
def test_scalars_read_back_with_tensorboards_accumulator(tmp_path, new_style):
    inputs = [0.5, flambeau.tensor(1.25), np.float32(2.0), 3, flambeau.tensor([[4.5]])]
    with SummaryWriter(tmp_path) as writer:
        for step, value in enumerate(inputs):
            writer.add_scalar("loss", value, step, walltime=100.0 + step, new_style=new_style)
    acc = accumulator(tmp_path)
    if new_style:
        got = [(t.step, make_ndarray(t.tensor_proto).item()) for t in acc.Tensors("loss")]
        assert acc.SummaryMetadata("loss").plugin_data.plugin_name == "scalars"
    else:
        got = [(s.step, s.value) for s in acc.Scalars("loss")]
        assert [s.wall_time for s in acc.Scalars("loss")] == [100.0 + i for i in range(5)]
    assert got == [(0, 0.5), (1, 1.25), (2, 2.0), (3, 3.0), (4, 4.5)]


def test_scalar_double_precision_and_errors(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalar("x", 0.1, 0, new_style=True, double_precision=True)
        with pytest.raises(AssertionError, match="one element"):
            writer.add_scalar("x", flambeau.tensor([1.0, 2.0]))
        with pytest.raises(NotImplementedError, match="numpy array or flambeau tensor"):
            writer.add_scalar("x", [1.0])
    ((_, value),) = values(tmp_path)
    assert list(value.tensor.double_val) == [0.1]
    assert value.tensor.dtype == 2  # DT_DOUBLE


def test_scalar_of_a_bfloat16_and_a_grad_tensor():
    assert S.scalar("x", flambeau.tensor(1.5, dtype=flambeau.bfloat16)).value[0].simple_value == 1.5
    grad = flambeau.tensor(2.5, requires_grad=True) * 1
    assert S.scalar("x", grad).value[0].simple_value == 2.5


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        for step in range(3):
            writer.add_scalars("loss/all", {"train": step, "test": 2 * step}, step)
        assert set(writer.all_writers) == {
            str(tmp_path),
            f"{tmp_path}/loss_all_train",
            f"{tmp_path}/loss_all_test",
        }
    for tag, factor in (("train", 1), ("test", 2)):
        got = [
            (s.step, s.value) for s in accumulator(tmp_path / f"loss_all_{tag}").Scalars("loss/all")
        ]
        assert got == [(0, 0.0), (1, 1.0 * factor), (2, 2.0 * factor)]
    assert values(tmp_path) == []


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "int8", "int16", "int32", "int64", "bool", "complex64"]
)
def test_add_tensor_round_trips_through_make_ndarray(tmp_path, dtype):
    data = np.array([[1, 0, 3], [4, 5, 0]]).astype(dtype)
    with SummaryWriter(tmp_path) as writer:
        writer.add_tensor("t", flambeau.from_numpy(data), global_step=5)
    ((step, value),) = values(tmp_path)
    assert step == 5 and value.metadata.plugin_data.plugin_name == "tensor"
    back = make_ndarray(value.tensor)
    assert back.dtype == data.dtype
    np.testing.assert_array_equal(back, data)


def test_add_tensor_fields_of_uint8_and_half_precision_are_pytorchs():
    uint8 = S.tensor_proto("t", flambeau.tensor([1, 255], dtype=flambeau.uint8)).value[0].tensor
    assert list(uint8.uint32_val) == [1, 255] and not uint8.int_val
    half = S.tensor_proto("t", flambeau.tensor([0.5, 2.0], dtype=flambeau.float16)).value[0].tensor
    assert [S.int_to_half(i) for i in half.half_val] == [0.5, 2.0]
    bf16 = S.tensor_proto("t", flambeau.tensor([3.0], dtype=flambeau.bfloat16)).value[0].tensor
    assert bf16.dtype == 14 and [S.int_to_half(i) for i in bf16.half_val] == [3.0]  # DT_BFLOAT16
    with pytest.raises(ValueError, match="unsupported tensor dtype"):
        S.tensor_proto("t", flambeau.tensor([1], dtype=flambeau.uint16))


# ---- histograms -------------------------------------------------------------------------------


@pytest.mark.parametrize("bins", [10, "auto", [-3.0, -1.0, 0.0, 0.5, 3.0]])
def test_histogram_buckets_are_numpys(tmp_path, bins):
    data = np.random.default_rng(0).standard_normal(500).clip(-2.9, 2.9)
    with SummaryWriter(tmp_path) as writer:
        writer.add_histogram("h", flambeau.from_numpy(data), global_step=3, bins=bins)
    (event,) = accumulator(tmp_path).Histograms("h")
    counts, edges = np.histogram(data, bins=bins)
    histo = event.histogram_value
    assert event.step == 3
    assert histo.bucket == [0.0, *counts.tolist()]  # first and last bins are not empty
    assert histo.bucket_limit == edges.tolist()
    assert (histo.min, histo.max, histo.num) == (data.min(), data.max(), 500)
    assert histo.sum == pytest.approx(data.sum())
    assert histo.sum_squares == pytest.approx((data**2).sum())


def test_histogram_tensorflow_bins_cover_the_values_and_cut_empty_buckets(tmp_path):
    data = np.array([0.5, 1.0, 1.0, 7.0])
    with SummaryWriter(tmp_path) as writer:
        writer.add_histogram("h", data)
        edges = np.array(writer.default_bins)
    assert edges[0] == -edges[-1] and 0 in writer.default_bins and edges[-1] >= 1e20 / 1.1
    ((_, value),) = values(tmp_path)
    counts, _ = np.histogram(data, bins=edges)
    filled = np.flatnonzero(counts)
    assert list(value.histo.bucket) == counts[filled[0] - 1 : filled[-1] + 1].tolist()
    assert list(value.histo.bucket_limit) == edges[filled[0] : filled[-1] + 2].tolist()
    assert sum(value.histo.bucket) == 4


def test_histogram_max_bins_merges_neighbours():
    data = np.arange(10.0)
    histo = S.histogram("h", data, bins=10, max_bins=3).value[0].histo
    # 10 buckets in runs of 3 (the last padded): 3, 3, 3, 1 values.
    assert list(histo.bucket) == [0, 3, 3, 3, 1]
    assert list(histo.bucket_limit) == [0.0, 2.7, 5.4, 8.1, 9.0]


def test_histogram_of_nothing_raises_and_raw_lengths_must_agree(tmp_path):
    with pytest.raises(ValueError, match="no element"):
        S.histogram("h", np.array([]), bins=3)
    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(ValueError, match="bucket_limits"):
            writer.add_histogram_raw("h", 0, 1, 1, 1, 1, [1.0, 2.0], [1])
        writer.add_histogram_raw("h", 0.0, 2.0, 3, 3.0, 5.0, [1.0, 2.0], [1, 2], global_step=9)
    (event,) = accumulator(tmp_path).Histograms("h")
    histo = event.histogram_value
    assert event.step == 9 and histo.bucket_limit == [1.0, 2.0] and histo.bucket == [1.0, 2.0]
    assert (histo.min, histo.max, histo.num, histo.sum, histo.sum_squares) == (0, 2, 3, 3, 5)


# ---- text -----------------------------------------------------------------------------------


def test_text_goes_to_the_text_plugin(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_text("notes", "héllo **world**", 4)
    ((step, value),) = values(tmp_path)
    assert step == 4 and value.tag == "notes/text_summary"
    assert value.metadata.plugin_data.plugin_name == "text"
    assert make_ndarray(value.tensor).tolist() == ["héllo **world**".encode()]
    acc = accumulator(tmp_path)
    assert "notes/text_summary" in acc.Tags()["tensors"]


# ---- hyperparameters -----------------------------------------------------------------------------


def test_add_hparams_writes_experiment_session_and_metrics_in_a_run(tmp_path):
    hparams = {
        "lr": 0.1,
        "layers": 3,
        "opt": "adam",
        "bn": True,
        "skip": None,
        "wd": flambeau.tensor(0.5),
    }
    domains = {"opt": ["adam", "sgd"], "layers": [2, 3]}
    with SummaryWriter(tmp_path) as writer:
        writer.add_hparams(hparams, {"hp/acc": 0.75}, domains, run_name="run1", global_step=5)
    assert values(tmp_path) == []
    by_tag = {v.tag: (step, v) for step, v in values(tmp_path / "run1")}
    assert set(by_tag) == {
        "_hparams_/experiment",
        "_hparams_/session_start_info",
        "_hparams_/session_end_info",
        "hp/acc",
    }
    assert {step for step, _ in by_tag.values()} == {5}
    assert by_tag["hp/acc"][1].simple_value == 0.75

    def content(tag):
        plugin = by_tag[tag][1].metadata.plugin_data
        assert plugin.plugin_name == "hparams"
        return plugin.content

    experiment = hparams_metadata.parse_experiment_plugin_data(content("_hparams_/experiment"))
    infos = {h.name: h for h in experiment.hparam_infos}
    assert list(infos) == ["lr", "layers", "opt", "bn", "wd"]
    assert infos["opt"].type == 1 and infos["lr"].type == 3  # STRING, FLOAT64
    assert infos["bn"].type == 3  # bools are numbers, as in PyTorch
    assert [v.string_value for v in infos["opt"].domain_discrete.values] == ["adam", "sgd"]
    assert [v.number_value for v in infos["layers"].domain_discrete.values] == [2.0, 3.0]
    assert not infos["lr"].HasField("domain_discrete")
    assert [m.name.tag for m in experiment.metric_infos] == ["hp/acc"]
    start = hparams_metadata.parse_session_start_info_plugin_data(
        content("_hparams_/session_start_info")
    )
    assert {k: v.WhichOneof("kind") for k, v in start.hparams.items()} == {
        "lr": "number_value",
        "layers": "number_value",
        "opt": "string_value",
        "bn": "number_value",
        "wd": "number_value",
    }
    assert start.hparams["lr"].number_value == 0.1 and start.hparams["wd"].number_value == 0.5
    assert start.hparams["opt"].string_value == "adam" and start.hparams["bn"].number_value == 1
    end = hparams_metadata.parse_session_end_info_plugin_data(content("_hparams_/session_end_info"))
    assert end.status == 1  # STATUS_SUCCESS


def test_add_hparams_default_run_name_is_a_timestamp(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_hparams({"lr": 0.1}, {"acc": 1.0})
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert float(run.name) == pytest.approx(time.time(), abs=60)


def test_add_hparams_errors(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(TypeError, match="should be dictionary"):
            writer.add_hparams([("lr", 0.1)], {})
        with pytest.raises(ValueError, match="value should be one of"):
            writer.add_hparams({"lr": [0.1]}, {})
        with pytest.raises(TypeError, match=r"hparam_domain_discrete\[lr\]"):
            writer.add_hparams({"lr": 0.1}, {}, {"lr": ["a"]})
        with pytest.raises(TypeError, match=r"hparam_domain_discrete should be a dictionary"):
            writer.add_hparams({"lr": 0.1}, {}, [0.1])


# ---- precision-recall curves ----------------------------------------------------------------


def hand_computed_curve(labels, predictions, thresholds, weights=None):
    """Each threshold i/(n-1): what is predicted positive (bucket index >= i) and is."""
    weights = np.ones(len(labels)) if weights is None else weights
    rows = []
    for i in range(thresholds):
        positive = np.floor(predictions * (thresholds - 1)) >= i
        tp = sum(w for w, lab, p in zip(weights, labels, positive) if p and lab)
        fp = sum(w for w, lab, p in zip(weights, labels, positive) if p and not lab)
        tn = sum(w for w, lab, p in zip(weights, labels, positive) if not p and not lab)
        fn = sum(w for w, lab, p in zip(weights, labels, positive) if not p and lab)
        precision = tp / max(tp + fp, 1e-7)
        recall = tp / max(tp + fn, 1e-7)
        rows.append([tp, fp, tn, fn, precision, recall])
    return np.array(rows, dtype=np.float64).T


def test_pr_curve_matches_a_hand_computation(tmp_path):
    labels = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    predictions = np.array([0.95, 0.8, 0.6, 0.45, 0.3, 0.1, 0.05, 0.55])
    with SummaryWriter(tmp_path) as writer:
        writer.add_pr_curve(
            "pr", flambeau.from_numpy(labels), flambeau.from_numpy(predictions), 1, 5
        )
        writer.add_pr_curve("many", labels, predictions, 1, num_thresholds=500)
    by_tag = {v.tag: v for _, v in values(tmp_path)}
    pr = by_tag["pr"]
    assert pr.metadata.plugin_data.plugin_name == "pr_curves"
    assert PrCurvePluginData.FromString(pr.metadata.plugin_data.content).num_thresholds == 5
    np.testing.assert_allclose(
        make_ndarray(pr.tensor), hand_computed_curve(labels, predictions, 5), rtol=1e-6
    )
    many = make_ndarray(by_tag["many"].tensor)
    assert many.shape == (6, 127)  # at most 127 thresholds
    np.testing.assert_allclose(many, hand_computed_curve(labels, predictions, 127), rtol=1e-6)


def test_pr_curve_weights_and_raw():
    labels = np.array([1, 0, 1])
    predictions = np.array([0.9, 0.6, 0.2])
    weights = np.array([2.0, 1.0, 0.5])
    rows = S.compute_curve(labels, predictions, num_thresholds=3, weights=weights)
    np.testing.assert_allclose(rows, hand_computed_curve(labels, predictions, 3, weights))
    raw = S.pr_curve_raw("pr", *[flambeau.from_numpy(r) for r in rows], num_thresholds=300)
    value = raw.value[0]
    assert PrCurvePluginData.FromString(value.metadata.plugin_data.content).num_thresholds == 127
    np.testing.assert_allclose(make_ndarray(value.tensor), rows.astype(np.float32))


def test_add_pr_curve_raw_writes_the_rows_given(tmp_path):
    rows = [[2, 1], [2, 0], [0, 2], [0, 1], [0.5, 1.0], [1.0, 0.5]]
    with SummaryWriter(tmp_path) as writer:
        writer.add_pr_curve_raw("pr", *rows, global_step=8, num_thresholds=2)
    ((step, value),) = values(tmp_path)
    assert step == 8
    np.testing.assert_array_equal(make_ndarray(value.tensor), np.array(rows, dtype=np.float32))


# ---- custom scalars and meshes --------------------------------------------------------------


def test_custom_scalars_layouts(tmp_path):
    layout = {
        "Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
        "USA": {"dow": ["Margin", ["dow/a", "dow/b", "dow/c"]]},
    }
    with SummaryWriter(tmp_path) as writer:
        writer.add_custom_scalars(layout)
        writer.add_custom_scalars_multilinechart(["a", "b"], category="c", title="t")
        writer.add_custom_scalars_marginchart(["v", "lo", "hi"])
        with pytest.raises(AssertionError, match="Expected 3 tags"):
            writer.add_custom_scalars_marginchart(["v", "lo"])
        with pytest.raises(AssertionError):
            writer.add_custom_scalars({"x": {"y": ["Margin", ["v"]]}})
    got = [v for _, v in values(tmp_path)]
    assert {v.tag for v in got} == {"custom_scalars__config__"}
    assert {v.metadata.plugin_data.plugin_name for v in got} == {"custom_scalars"}
    first, multi, margin = (layout_pb2.Layout.FromString(v.tensor.string_val[0]) for v in got)
    assert [c.title for c in first.category] == ["Taiwan", "USA"]
    assert list(first.category[0].chart[0].multiline.tag) == ["twse/0050", "twse/2330"]
    series = first.category[1].chart[0].margin.series[0]
    assert (series.value, series.lower, series.upper) == ("dow/a", "dow/b", "dow/c")
    assert (multi.category[0].title, multi.category[0].chart[0].title) == ("c", "t")
    assert margin.category[0].title == "default"
    assert margin.category[0].chart[0].title == "untitled"


def test_add_mesh_writes_one_value_per_part(tmp_path):
    vertices = flambeau.tensor([[[1.0, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]])
    colors = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 0, 255]]], dtype=np.int32)
    faces = flambeau.tensor([[[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]], dtype=flambeau.int32)
    config = {"camera": {"cls": "PerspectiveCamera", "fov": 75}}
    with SummaryWriter(tmp_path) as writer:
        writer.add_mesh("tet", vertices, colors, faces, config, global_step=2)
    got = {v.tag: v for _, v in values(tmp_path)}
    assert list(got) == ["tet_VERTEX", "tet_FACE", "tet_COLOR"]
    for tag, expected in (
        ("tet_VERTEX", vertices.numpy()),
        ("tet_FACE", faces.numpy()),
        ("tet_COLOR", colors),
    ):
        value = got[tag]
        np.testing.assert_array_equal(make_ndarray(value.tensor), expected.astype(np.float32))
        data = mesh_metadata.parse_plugin_metadata(value.metadata.plugin_data.content)
        assert (data.name, list(data.shape), data.components) == ("tet", [1, 4, 3], 0b1110)
        assert json.loads(data.json_config) == config
    with pytest.raises(ValueError, match="BxNx3"):
        S.mesh("bad", np.zeros((4, 3)), None, None, None)
