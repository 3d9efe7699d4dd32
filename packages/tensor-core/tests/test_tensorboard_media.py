"""flambeau.utils.tensorboard: images, figures, videos, audio and embeddings, written
and read back (PNG and WAV decoded, the projector's files parsed)."""

from __future__ import annotations

import io
import math
import sys
import wave

import numpy as np
import pytest

pytest.importorskip("tensorboard")

from google.protobuf import text_format  # noqa: E402
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig  # noqa: E402
from tensorboard_events import (  # noqa: E402
    accumulator,
    as_uint8,
    decode_png,
    install_fake_moviepy,
    values,
)

import flambeau  # noqa: E402
from flambeau.utils.tensorboard import SummaryWriter  # noqa: E402
from flambeau.utils.tensorboard import summary as S  # noqa: E402

# ---- images, figures, videos ---------------------------------------------------------------


def test_images_in_every_layout_decode_to_the_pixels_given(tmp_path):
    rng = np.random.default_rng(1)
    chw = rng.random((3, 5, 7), dtype=np.float32)
    hwc8 = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
    hw = rng.random((5, 7))
    rgba = rng.random((4, 5, 7))
    with SummaryWriter(tmp_path) as writer:
        writer.add_image("chw", flambeau.from_numpy(chw), 0)
        writer.add_image("hwc", flambeau.from_numpy(hwc8), 0, dataformats="HWC")
        writer.add_image("hw", hw, 0, dataformats="HW")
        writer.add_image("wh", hw.T, 0, dataformats="WH")
        writer.add_image("gray", chw[:1], 0)
        writer.add_image("rgba", rgba, 0)
    acc = accumulator(tmp_path)

    def picture(tag):
        (event,) = acc.Images(tag)
        assert (event.height, event.width) == (5, 7)
        return decode_png(event.encoded_image_string)

    np.testing.assert_array_equal(picture("chw"), as_uint8(chw.transpose(1, 2, 0)))
    np.testing.assert_array_equal(picture("hwc"), hwc8)
    gray = np.repeat(as_uint8(hw)[:, :, None], 3, axis=2)
    np.testing.assert_array_equal(picture("hw"), gray)
    np.testing.assert_array_equal(picture("wh"), gray)
    np.testing.assert_array_equal(picture("gray"), np.repeat(as_uint8(chw[0])[:, :, None], 3, 2))
    np.testing.assert_array_equal(picture("rgba"), as_uint8(rgba.transpose(1, 2, 0)))


def test_float_images_are_clipped_and_truncated():
    pixels = np.array([[-0.5, 0.0, 0.5, 1.0, 2.0]])
    png = S.image("x", pixels, dataformats="HW").value[0].image
    assert decode_png(png.encoded_image_string)[0, :, 0].tolist() == [0, 0, 127, 255, 255]


def test_add_images_tiles_the_batch_eight_to_a_row(tmp_path):
    batch = np.stack([np.full((3, 2, 4), i / 10) for i in range(10)])
    with SummaryWriter(tmp_path) as writer:
        writer.add_images("nchw", flambeau.from_numpy(batch), 0)
        writer.add_images("nhwc", batch.transpose(0, 2, 3, 1), 0, dataformats="NHWC")
    acc = accumulator(tmp_path)
    for tag in ("nchw", "nhwc"):
        (event,) = acc.Images(tag)
        grid = decode_png(event.encoded_image_string)
        assert grid.shape == (4, 32, 3)
        for i in range(10):
            row, col = divmod(i, 8)
            tile = grid[2 * row : 2 * row + 2, 4 * col : 4 * col + 4]
            assert (tile == as_uint8(np.array(i / 10))).all()
        assert (grid[2:, 8:] == 0).all()  # the unfilled cells of the last row


def test_image_layout_errors_are_assertion_errors():
    with pytest.raises(AssertionError, match="same dimension shorthand twice"):
        S.image("x", np.zeros((3, 3)), dataformats="HH")
    with pytest.raises(AssertionError, match="size of input tensor and input format"):
        S.image("x", np.zeros((3, 3)), dataformats="CHW")


def test_image_with_boxes_draws_red_boxes(tmp_path):
    img = np.zeros((3, 20, 20), dtype=np.float32)
    boxes = flambeau.tensor([[2.0, 3.0, 15.0, 17.0]])
    with SummaryWriter(tmp_path) as writer:
        writer.add_image_with_boxes("boxes", img, boxes, 0)
        writer.add_image_with_boxes("labelled", img, boxes, 0, labels="cat")
        writer.add_image_with_boxes("mismatch", img, boxes, 0, labels=["a", "b"])
    acc = accumulator(tmp_path)
    plain = decode_png(acc.Images("boxes")[0].encoded_image_string)
    assert plain[10, 2].tolist() == [255, 0, 0]  # the left edge
    assert plain[3, 10].tolist() == [255, 0, 0]  # the top edge
    assert plain[10, 10].tolist() == [0, 0, 0]  # inside
    labelled = acc.Images("labelled")[0].encoded_image_string
    assert not np.array_equal(decode_png(labelled), plain)
    assert (
        acc.Images("mismatch")[0].encoded_image_string
        == acc.Images("boxes")[0].encoded_image_string
    )


def test_image_rescale_resizes_the_picture():
    png = S.image_boxes("x", np.ones((3, 4, 6)), np.zeros((0, 4)), rescale=2).value[0].image
    assert (png.height, png.width) == (4, 6)
    assert decode_png(png.encoded_image_string).shape == (8, 12, 3)


def test_add_figure_renders_matplotlib(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(2, 1), dpi=50)
    plt.plot([0, 1], [1, 0])
    figures = [plt.figure(figsize=(2, 1), dpi=50) for _ in range(2)]
    with SummaryWriter(tmp_path) as writer:
        writer.add_figure("one", figure, 0)
        writer.add_figure("two", figures, 0, close=False)
    acc = accumulator(tmp_path)
    assert decode_png(acc.Images("one")[0].encoded_image_string).shape == (50, 100, 3)
    assert decode_png(acc.Images("two")[0].encoded_image_string).shape == (50, 200, 3)
    assert not plt.fignum_exists(figure.number)
    assert all(plt.fignum_exists(f.number) for f in figures)
    plt.close("all")


def test_add_video_without_moviepy_prints_and_writes_an_empty_image(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "moviepy", None)
    with SummaryWriter(tmp_path) as writer:
        writer.add_video("clip", flambeau.rand(1, 2, 3, 4, 4), 0)
    assert capsys.readouterr().out == "add_video needs package moviepy\n"
    ((_, value),) = values(tmp_path)
    assert value.tag == "clip" and not value.HasField("image")


@pytest.fixture
def fake_moviepy(monkeypatch):
    return install_fake_moviepy(monkeypatch)


def test_add_video_tiles_the_batch_into_frames_and_encodes_a_gif(tmp_path, fake_moviepy):
    recorded = fake_moviepy
    clips = np.zeros((3, 2, 3, 4, 5), dtype=np.uint8)
    for i in range(3):
        clips[i] = 60 * (i + 1)
    with SummaryWriter(tmp_path) as writer:
        writer.add_video("clip", clips, 0, fps=7)
    frames = recorded["frames"]
    # 3 videos padded to 4 with a black one, tiled 1 x 4 (PyTorch sizes the grid's rows
    # by the batch before padding) in each of the 2 frames.
    assert frames.shape == (2, 4, 20, 3) and frames.dtype == np.uint8 and recorded["fps"] == 7
    assert [frames[:, :, 5 * i : 5 * i + 5].max() for i in range(4)] == [60, 120, 180, 0]
    assert [frames[:, :, 5 * i : 5 * i + 5].min() for i in range(4)] == [60, 120, 180, 0]
    ((_, value),) = values(tmp_path)
    assert value.image.encoded_image_string == b"GIF89a-fake" + frames.tobytes()
    assert (value.image.height, value.image.width, value.image.colorspace) == (4, 20, 3)


# ---- audio -----------------------------------------------------------------------------


def test_audio_is_a_16_bit_mono_wav(tmp_path, capsys):
    t = np.arange(400) / 8000
    sound = (0.5 * np.sin(2 * math.pi * 440 * t)).astype(np.float32)
    with SummaryWriter(tmp_path) as writer:
        writer.add_audio("beep", flambeau.from_numpy(sound).unsqueeze(0), 2, sample_rate=8000)
        writer.add_audio("loud", np.array([2.0, -3.0, 0.5]), 2, sample_rate=8000)
    assert capsys.readouterr().out == "warning: audio amplitude out of range, auto clipped.\n"
    acc = accumulator(tmp_path)
    (event,) = acc.Audio("beep")
    assert (event.step, event.sample_rate, event.length_frames) == (2, 8000, 400)
    assert event.content_type == "audio/wav"
    with wave.open(io.BytesIO(event.encoded_audio_string)) as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 8000)
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")
    np.testing.assert_array_equal(pcm, (sound * 32767).astype(np.int16))
    (loud,) = acc.Audio("loud")
    with wave.open(io.BytesIO(loud.encoded_audio_string)) as wav:
        clipped = np.frombuffer(wav.readframes(3), dtype="<i2")
    assert clipped.tolist() == [32767, -32767, 16383]
    with pytest.raises(AssertionError, match="1 dimensional"):
        S.audio("x", np.zeros((2, 3)))


# ---- embeddings --------------------------------------------------------------------------------


def test_add_embedding_writes_tensors_metadata_sprite_and_config(tmp_path):
    mat = np.arange(12, dtype=np.float32).reshape(4, 3) / 8
    images = np.zeros((4, 3, 2, 5), dtype=np.float32)
    for i in range(4):
        images[i] = (i + 1) / 4
    with SummaryWriter(tmp_path) as writer:
        writer.add_embedding(
            flambeau.from_numpy(mat), ["a", "b", "c", 1], flambeau.from_numpy(images), 3, "my/emb"
        )
        writer.add_embedding(
            mat, [["a", 1], ["b", 2], ["c", 3], ["d", 4]], metadata_header=["name", "n"], tag="cols"
        )
    folder = tmp_path / "00003" / "my%2femb"
    rows = [line.split("\t") for line in (folder / "tensors.tsv").read_text().splitlines()]
    np.testing.assert_array_equal(np.array(rows, dtype=np.float32), mat)
    assert (folder / "metadata.tsv").read_text() == "a\nb\nc\n1\n"
    # Four 2x5 images, two to a row, at the top of a 10x10 square.
    sprite = decode_png((folder / "sprite.png").read_bytes())
    assert sprite.shape == (10, 10, 3)
    assert sprite[0, 0, 0] == 63 and sprite[0, 5, 0] == 127
    assert sprite[2, 0, 0] == 191 and sprite[2, 5, 0] == 255 and (sprite[4:] == 0).all()
    cols = tmp_path / "00000" / "cols"
    assert (cols / "metadata.tsv").read_text() == "name\tn\na\t1\nb\t2\nc\t3\nd\t4\n"
    config = text_format.Parse((tmp_path / "projector_config.pbtxt").read_text(), ProjectorConfig())
    first, second = config.embeddings
    assert first.tensor_name == "my/emb:00003"
    assert first.tensor_path == "00003/my%2femb/tensors.tsv"
    assert first.metadata_path == "00003/my%2femb/metadata.tsv"
    assert first.sprite.image_path == "00003/my%2femb/sprite.png"
    assert list(first.sprite.single_image_dim) == [5, 2]
    assert (second.tensor_name, second.metadata_path) == ("cols:00000", "00000/cols/metadata.tsv")
    assert not second.HasField("sprite")


def test_add_embedding_checks(tmp_path, capsys):
    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(AssertionError, match="#labels"):
            writer.add_embedding(np.zeros((3, 2)), ["a"])
        with pytest.raises(AssertionError, match="#images"):
            writer.add_embedding(np.zeros((3, 2)), label_img=np.zeros((2, 3, 4, 4)), tag="i")
        with pytest.raises(AssertionError, match="mat should be 2D"):
            writer.add_embedding(np.zeros(3), tag="flat")
        with pytest.raises(AssertionError, match="len of header"):
            writer.add_embedding(np.zeros((1, 2)), [["a", 1]], metadata_header=["x"], tag="h")
        writer.add_embedding(np.zeros((1, 2)), tag="again")
        capsys.readouterr()
        writer.add_embedding(np.zeros((1, 2)), tag="again")
        assert "Embedding dir exists" in capsys.readouterr().out
        (tmp_path / "00000" / "file").write_text("")
        with pytest.raises(NotADirectoryError):
            writer.add_embedding(np.zeros((1, 2)), tag="file")
