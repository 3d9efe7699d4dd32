"""flambeau.utils.tensorboard writes what torch.utils.tensorboard writes: the same
summary payloads, byte for byte, for the same values; and the same event files."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorboard")
torch = pytest.importorskip("torch")

from tensorboard_events import events, install_fake_moviepy  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402
from torch.utils.tensorboard import summary as T  # noqa: E402

import flambeau  # noqa: E402
from flambeau.utils.tensorboard import SummaryWriter  # noqa: E402
from flambeau.utils.tensorboard import summary as S  # noqa: E402


@pytest.fixture
def fake_moviepy(monkeypatch):
    return install_fake_moviepy(monkeypatch)


def same_bytes(ours, theirs):
    assert ours.SerializeToString() == theirs.SerializeToString()


def test_scalar_and_text_and_audio_payloads_match_pytorch():
    for kwargs in ({}, {"new_style": True}, {"new_style": True, "double_precision": True}):
        same_bytes(
            S.scalar("s", flambeau.tensor(0.1), **kwargs),
            T.scalar("s", torch.tensor(0.1), **kwargs),
        )
        same_bytes(S.scalar("s", 3, **kwargs), T.scalar("s", 3, **kwargs))
    same_bytes(S.text("t", "héllo"), T.text("t", "héllo"))
    sound = np.sin(np.arange(300) / 7.0).astype(np.float32)[None]
    same_bytes(
        S.audio("a", flambeau.from_numpy(sound), 8000), T.audio("a", torch.from_numpy(sound), 8000)
    )


@pytest.mark.parametrize(
    "dtype",
    [
        "float32",
        "float64",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "bool",
        "float16",
        "bfloat16",
        "complex64",
        "complex128",
    ],
)
def test_tensor_payloads_match_pytorch(dtype):
    data = np.array([[1.5, 0.0, -2.0], [3.0, 4.25, 1.0]])
    ours = flambeau.from_numpy(data).to(getattr(flambeau, dtype))
    theirs = torch.from_numpy(data).to(getattr(torch, dtype))
    same_bytes(S.tensor_proto("t", ours), T.tensor_proto("t", theirs))


def test_histogram_payloads_match_pytorch(tmp_path):
    data = np.random.default_rng(2).standard_normal((40, 25)).astype(np.float32)
    with SummaryWriter(tmp_path) as writer:
        tf_bins = writer.default_bins
    with TorchWriter(tmp_path / "torch") as torch_writer:
        assert torch_writer.default_bins == tf_bins
    for bins, max_bins in ((tf_bins, None), (tf_bins, 50), (30, None), (30, 7), ("fd", None)):
        same_bytes(
            S.histogram("h", flambeau.from_numpy(data), bins, max_bins),
            T.histogram("h", torch.from_numpy(data), bins, max_bins),
        )


def test_image_payloads_match_pytorch():
    rng = np.random.default_rng(3)
    cases = [
        (rng.random((3, 6, 9), dtype=np.float32), "CHW"),
        (rng.integers(0, 256, (6, 9, 3), dtype=np.uint8), "HWC"),
        (rng.random((6, 9)), "HW"),
        (rng.random((11, 1, 4, 5), dtype=np.float32), "NCHW"),
        (rng.random((3, 4, 5, 3), dtype=np.float32), "NHWC"),
    ]
    for data, layout in cases:
        same_bytes(
            S.image("i", flambeau.from_numpy(data), dataformats=layout),
            T.image("i", torch.from_numpy(data), dataformats=layout),
        )
    img = rng.random((3, 30, 40), dtype=np.float32)
    boxes = np.array([[2.0, 3.0, 25.0, 20.0], [10, 10, 35, 28]])
    for labels in (None, ["cat", "dog"]):
        same_bytes(
            S.image_boxes("b", flambeau.from_numpy(img), flambeau.from_numpy(boxes), labels=labels),
            T.image_boxes("b", torch.from_numpy(img), torch.from_numpy(boxes), labels=labels),
        )
    same_bytes(
        S.image_boxes("b", img, boxes, rescale=1.5), T.image_boxes("b", img, boxes, rescale=1.5)
    )


def test_video_payloads_match_pytorch(fake_moviepy):
    rng = np.random.default_rng(7)
    for clips in (
        rng.random((5, 3, 3, 4, 6), dtype=np.float32),
        rng.integers(0, 256, (2, 2, 1, 3, 3), dtype=np.uint8),
    ):
        same_bytes(
            S.video("v", flambeau.from_numpy(clips), fps=5),
            T.video("v", torch.from_numpy(clips), fps=5),
        )


def test_plugin_payloads_match_pytorch():
    layout = {"A": {"m": ["Multiline", ["x", "y"]], "g": ["Margin", ["v", "l", "u"]]}}
    same_bytes(S.custom_scalars(layout), T.custom_scalars(layout))
    labels = np.array([1, 0, 1, 1, 0, 1, 0, 0, 1])
    predictions = np.linspace(0.05, 0.95, 9)
    for kwargs in ({"num_thresholds": 9}, {"num_thresholds": 300}, {"weights": np.arange(9.0)}):
        same_bytes(
            S.pr_curve("p", labels, predictions, **kwargs),
            T.pr_curve("p", labels, predictions, **kwargs),
        )
    rows = T.compute_curve(labels, predictions, num_thresholds=5)
    same_bytes(
        S.pr_curve_raw("p", *rows, num_thresholds=5), T.pr_curve_raw("p", *rows, num_thresholds=5)
    )
    vertices = np.random.default_rng(4).random((2, 5, 3)).astype(np.float32)
    colors = np.full((2, 5, 3), 128, dtype=np.uint8)
    for args in (
        (vertices, colors, None, {"a": 1}),
        (vertices, None, np.zeros((2, 1, 3), np.int32), None),
    ):
        ours = S.mesh(
            "m", *[flambeau.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
        )
        theirs = T.mesh(
            "m", *[torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
        )
        same_bytes(ours, theirs)


def test_hparams_payloads_match_pytorch():
    hparams = {"lr": 0.01, "n": 4, "name": "x", "flag": False, "none": None}
    domains = {"n": [2, 4], "name": ["x", "y"], "flag": [True, False]}
    ours = S.hparams(hparams, {"m/a": 1, "m/b": 2}, domains)
    theirs = T.hparams(hparams, {"m/a": 1, "m/b": 2}, domains)
    for mine, pytorchs in zip(ours, theirs):
        assert mine == pytorchs  # messages equal field for field (map order aside)


def test_writer_event_files_match_pytorchs(tmp_path):
    data = np.random.default_rng(5).random((4, 3), dtype=np.float32)
    images = np.random.default_rng(6).random((4, 3, 4, 6), dtype=np.float32)

    def log(writer, lib):
        as_tensor = lib.from_numpy
        writer.add_scalar("s", 0.5, 1, walltime=10.0)
        writer.add_scalars("group/x", {"a": 1.0, "b": 2.0}, 2, walltime=11.0)
        writer.add_histogram("h", as_tensor(data), 3, walltime=12.0)
        writer.add_images("i", as_tensor(images), 4, walltime=13.0)
        writer.add_text("t", "text", 5, walltime=14.0)
        writer.add_embedding(as_tensor(data), ["p", "q", "r", "s"], as_tensor(images), 6, "e/1")
        writer.add_embedding(as_tensor(data), [["p", 1]] * 4, metadata_header=["a", "b"], tag="m")
        writer.add_tensor("x", as_tensor(data), 7, walltime=15.0)
        writer.add_image_with_boxes(
            "b",
            as_tensor(images[0]),
            as_tensor(np.hstack([data, data[:, :1]]) * 5),
            8,
            16.0,
            labels=list("abcd"),
        )
        writer.add_audio("a", as_tensor(data.reshape(1, -1)), 9, 8000, walltime=17.0)
        writer.add_pr_curve("p", np.array([1, 0, 1, 0]), as_tensor(data[:, 0]), 10, 9, None, 18.0)
        writer.add_pr_curve_raw("r", *np.ones((6, 3)), 11, num_thresholds=3, walltime=19.0)
        writer.add_histogram_raw("hr", 0, 2, 3, 3, 5, [1, 2], [1, 2], 12, walltime=20.0)
        writer.add_mesh(
            "m", as_tensor(images[:1, :, :, :3].reshape(1, -1, 3)), global_step=13, walltime=21.0
        )
        writer.add_hparams({"lr": 0.1, "opt": "sgd"}, {"hp/m": 0.5}, run_name="hp", global_step=14)

    with SummaryWriter(tmp_path / "ours", purge_step=1) as writer:
        log(writer, flambeau)
    with TorchWriter(tmp_path / "torch", purge_step=1) as writer:
        log(writer, torch)
    for run in ("", "group_x_a", "group_x_b", "hp"):
        ours, theirs = events(tmp_path / "ours" / run), events(tmp_path / "torch" / run)
        assert ours and len(ours) == len(theirs)
        for mine, pytorchs in zip(ours, theirs):
            if run == "hp" or mine.HasField("session_log"):  # stamped with the time: no walltime
                mine.wall_time = pytorchs.wall_time = 0
            assert mine.SerializeToString() == pytorchs.SerializeToString()
    for name in (
        "projector_config.pbtxt",
        "00006/e%2f1/tensors.tsv",
        "00006/e%2f1/metadata.tsv",
        "00006/e%2f1/sprite.png",
        "00000/m/metadata.tsv",
        "00000/m/tensors.tsv",
    ):
        assert (tmp_path / "ours" / name).read_bytes() == (tmp_path / "torch" / name).read_bytes()

    def folders(root):
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir())

    assert folders(tmp_path / "ours") == folders(tmp_path / "torch")
