"""Reading back the event files flambeau.utils.tensorboard writes, for the
test_tensorboard*.py suites (which skip where tensorboard is not installed)."""

from __future__ import annotations

import io
import sys
import types
from pathlib import Path

import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader


def event_files(logdir) -> list[Path]:
    return sorted(Path(logdir).glob("events.out.tfevents.*"))


def all_events(logdir) -> list:
    """Every event of the event files directly in ``logdir``, in the order written."""
    return [e for path in event_files(logdir) for e in LegacyEventFileLoader(str(path)).Load()]


def events(logdir) -> list:
    """Every event of the event files directly in ``logdir``, the file headers left out."""
    return [e for e in all_events(logdir) if not e.file_version]


def values(logdir) -> list[tuple[int, object]]:
    """(step, Summary.Value) of every summary value in ``logdir``."""
    return [(e.step, v) for e in events(logdir) for v in e.summary.value]


def accumulator(logdir) -> EventAccumulator:
    keep_all = dict.fromkeys(["scalars", "histograms", "images", "audio", "tensors"], 0)
    acc = EventAccumulator(str(logdir), size_guidance=keep_all)
    acc.Reload()
    return acc


def decode_png(data: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(data)))


def as_uint8(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float32) * 255).clip(0, 255).astype(np.uint8)


def install_fake_moviepy(monkeypatch) -> dict:
    """A moviepy 1.x stand-in: ``recorded`` gets the frames given; the GIF is fake."""
    recorded = {}

    class ImageSequenceClip:
        def __init__(self, frames, fps):
            recorded["frames"], recorded["fps"] = np.stack(frames), fps

        def write_gif(self, filename, verbose, logger):
            Path(filename).write_bytes(b"GIF89a-fake" + recorded["frames"].tobytes())

    editor = types.ModuleType("moviepy.editor")
    editor.ImageSequenceClip = ImageSequenceClip
    moviepy = types.ModuleType("moviepy")
    moviepy.editor = editor
    monkeypatch.setitem(sys.modules, "moviepy", moviepy)
    monkeypatch.setitem(sys.modules, "moviepy.editor", editor)
    return recorded
