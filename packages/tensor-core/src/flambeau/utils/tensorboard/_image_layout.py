"""Image and video arrays laid out as TensorBoard shows them: height, width, channels."""

from __future__ import annotations

import numpy as np


def make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """Tile an ``(N, 1 or 3, H, W)`` batch row by row into one ``(3, H * rows, W * cols)``
    image, at most ``ncols`` to a row; one-channel images become gray RGB."""
    if not isinstance(images, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if images.ndim == 4 and images.shape[1] == 1:
        images = np.repeat(images, 3, axis=1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    count, _, height, width = images.shape
    cols = min(count, ncols)
    rows = -(-count // cols)
    canvas = np.zeros((3, height * rows, width * cols), dtype=images.dtype)
    for index in range(count):
        row, col = divmod(index, cols)
        canvas[:, row * height : (row + 1) * height, col * width : (col + 1) * width] = images[
            index
        ]
    return canvas


def convert_to_HWC(tensor: np.ndarray, input_format: str) -> np.ndarray:  # noqa: N802
    """``tensor`` laid out as ``input_format`` says (``NCHW``, ``CHW``, ``HWC``, ``HW``...)
    rearranged to height, width, channels: a batch tiled by ``make_grid``, one channel or
    none repeated into three."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(
            f"You can not use the same dimension shorthand twice. input_format: {input_format}"
        )
    if tensor.ndim != len(input_format):
        raise AssertionError(
            "size of input tensor and input format are different. "
            f"tensor shape: {tensor.shape}, input_format: {input_format}"
        )
    input_format = input_format.upper()
    if len(input_format) == 4:
        batch = tensor.transpose([input_format.find(axis) for axis in "NCHW"])
        return make_grid(batch).transpose(1, 2, 0)
    if len(input_format) == 3:
        image = tensor.transpose([input_format.find(axis) for axis in "HWC"])
        return np.repeat(image, 3, axis=2) if image.shape[2] == 1 else image
    if len(input_format) == 2:
        gray = tensor.transpose([input_format.find(axis) for axis in "HW"])
        return np.stack([gray, gray, gray], 2)
    return None  # as PyTorch: other lengths are not a layout


def prepare_video(video: np.ndarray) -> np.ndarray:
    """A ``(N, T, C, H, W)`` batch of videos as ``(T, H', W', C)`` frames: the batch,
    padded with black videos to a power of two, tiled into a grid in every frame. uint8
    becomes float in [0, 1]."""
    batch, frames, channels, height, width = video.shape
    if video.dtype == np.uint8:
        video = np.float32(video) / 255.0
    if batch == 0 or batch & (batch - 1):  # not a power of two
        blank = np.zeros(((1 << batch.bit_length()) - batch, frames, channels, height, width))
        video = np.concatenate((video, blank), axis=0)
    rows = 1 << ((batch.bit_length() - 1) // 2)
    cols = video.shape[0] // rows
    video = video.reshape(rows, cols, frames, channels, height, width)
    video = video.transpose(2, 0, 4, 1, 5, 3)
    return video.reshape(frames, rows * height, cols * width, channels)


def figure_to_image(figures, close: bool = True) -> np.ndarray:
    """A matplotlib figure rendered as a ``(3, H, W)`` uint8 array, or a list of them as
    ``(N, 3, H, W)``; ``close`` closes each figure once drawn. Needs ``matplotlib``."""
    import matplotlib.backends.backend_agg as backend_agg
    import matplotlib.pyplot as plt

    def render(figure) -> np.ndarray:
        canvas = backend_agg.FigureCanvasAgg(figure)
        canvas.draw()
        rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8)
        width, height = figure.canvas.get_width_height()
        rgb = rgba.reshape(height, width, 4)[:, :, :3]
        if close:
            plt.close(figure)
        return np.moveaxis(rgb, 2, 0)

    if isinstance(figures, list):
        return np.stack([render(figure) for figure in figures])
    return render(figures)
