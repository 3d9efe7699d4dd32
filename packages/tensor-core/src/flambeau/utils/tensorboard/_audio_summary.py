"""Sound as a summary (``add_audio``)."""

from __future__ import annotations

import io
import wave

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary

from flambeau.utils.tensorboard._protos import one_value
from flambeau.utils.tensorboard._to_numpy import make_np


def audio(tag, tensor, sample_rate=44100):
    """A ``Summary`` holding ``tensor`` (one channel of samples in [-1, 1], any shape
    that squeezes to one dimension) as a 16-bit mono WAV file. Louder samples are
    clipped, with a printed warning; a signal that is not one-dimensional raises
    ``AssertionError``.

    >>> from flambeau.utils.tensorboard.summary import audio
    >>> sound = audio("beep", flambeau.zeros(1, 800), sample_rate=8000).value[0].audio
    >>> sound.sample_rate, sound.length_frames, sound.content_type
    (8000.0, 800, 'audio/wav')
    """
    samples = make_np(tensor).squeeze()
    if abs(samples).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        samples = samples.clip(-1, 1)
    if samples.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    pcm = (samples * np.iinfo(np.int16).max).astype("<i2")
    with io.BytesIO() as buffer:
        with wave.open(buffer, "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(sample_rate)
            wav.writeframes(pcm.tobytes())
        encoded = buffer.getvalue()
    sound = Summary.Audio(
        sample_rate=sample_rate,
        num_channels=1,
        length_frames=pcm.shape[-1],
        encoded_audio_string=encoded,
        content_type="audio/wav",
    )
    return one_value(tag, audio=sound)
