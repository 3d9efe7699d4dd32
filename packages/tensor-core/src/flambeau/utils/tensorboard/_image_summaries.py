"""Images, images with boxes and videos as summaries (``add_image(s)``, ``add_video``...)."""

from __future__ import annotations

import io
import tempfile

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary

from flambeau.utils.tensorboard._image_layout import convert_to_HWC, prepare_video
from flambeau.utils.tensorboard._protos import one_value
from flambeau.utils.tensorboard._to_numpy import make_np


def _scale_factor(array: np.ndarray) -> int:
    # uint8 images are in [0, 255] already; any other dtype is taken to be in [0, 1].
    return 1 if array.dtype == np.uint8 else 255


def _to_uint8(array: np.ndarray) -> np.ndarray:
    scaled = array.astype(np.float32) * _scale_factor(array)
    return scaled.clip(0, 255).astype(np.uint8)


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """A ``Summary`` holding one PNG image: ``tensor`` laid out as ``dataformats`` says
    (a batch is tiled into a grid, eight to a row), float values in [0, 1] or uint8
    values in [0, 255], out-of-range values clipped. ``rescale`` resizes the picture
    (the proto keeps the original height and width). Needs Pillow.

    >>> from flambeau.utils.tensorboard.summary import image
    >>> png = image("img", flambeau.zeros(2, 3, 4, 5)).value[0].image
    >>> png.height, png.width, png.colorspace, png.encoded_image_string[:4]
    (4, 10, 3, b'\\x89PNG')
    """
    hwc = convert_to_HWC(make_np(tensor), dataformats)
    return one_value(tag, image=make_image(_to_uint8(hwc), rescale=rescale))


def image_boxes(tag, tensor_image, tensor_boxes, rescale=1, dataformats="CHW", labels=None):
    """A ``Summary`` holding an image with boxes drawn on it: ``tensor_boxes`` is
    ``(N, 4)``, one ``(xmin, ymin, xmax, ymax)`` row in pixels per box, and ``labels``
    an optional caption per box. Needs Pillow.

    >>> from flambeau.utils.tensorboard.summary import image_boxes
    >>> boxes = flambeau.tensor([[1.0, 1.0, 6.0, 6.0]])
    >>> png = image_boxes("img", flambeau.ones(3, 8, 8), boxes, labels=["cat"]).value[0].image
    >>> png.height, png.width
    (8, 8)
    """
    hwc = convert_to_HWC(make_np(tensor_image), dataformats)
    scaled = hwc.astype(np.float32) * _scale_factor(hwc)
    picture = make_image(
        scaled.clip(0, 255).astype(np.uint8),
        rescale=rescale,
        rois=make_np(tensor_boxes),
        labels=labels,
    )
    return one_value(tag, image=picture)


def _draw_box(picture, box, label, color="Red", text_color="black", width=2):
    from PIL import ImageDraw, ImageFont

    left, top, right, bottom = box
    draw = ImageDraw.Draw(picture)
    corners = [(left, top), (left, bottom), (right, bottom), (right, top), (left, top)]
    draw.line(corners, width=width, fill=color)
    if label:  # a caption in a filled strip along the box's lower edge, inside it
        font = ImageFont.load_default()
        x0, y0, x1, y1 = font.getbbox(label)
        text_width, text_height = x1 - x0, y1 - y0
        margin = np.ceil(0.05 * text_height)
        strip_top = bottom - text_height - 2 * margin
        draw.rectangle([(left, strip_top), (left + text_width, bottom)], fill=color)
        draw.text((left + margin, bottom - text_height - margin), label, fill=text_color, font=font)
    return picture


def draw_boxes(disp_image, boxes, labels=None):
    """Draw each ``(xmin, ymin, xmax, ymax)`` row of ``boxes`` on the PIL image
    ``disp_image`` in red, captioned by ``labels[i]`` if given; returns the image.

    >>> import numpy as np
    >>> from PIL import Image
    >>> from flambeau.utils.tensorboard.summary import draw_boxes
    >>> picture = draw_boxes(Image.new("RGB", (8, 8)), np.array([[1, 1, 6, 6]]))
    >>> picture.getpixel((1, 3))
    (255, 0, 0)
    """
    for index in range(boxes.shape[0]):
        label = None if labels is None else labels[index]
        disp_image = _draw_box(disp_image, boxes[index, :4], label)
    return disp_image


def make_image(tensor, rescale=1, rois=None, labels=None):
    """A ``Summary.Image`` of the uint8 ``(H, W, C)`` array ``tensor`` encoded as PNG,
    boxes ``rois`` drawn on it (see ``draw_boxes``), resized by ``rescale``. Needs Pillow.

    >>> import numpy as np
    >>> from flambeau.utils.tensorboard.summary import make_image
    >>> png = make_image(np.zeros((4, 6, 3), dtype=np.uint8))
    >>> png.height, png.width, png.colorspace
    (4, 6, 3)
    """
    from PIL import Image

    height, width, channels = tensor.shape
    picture = Image.fromarray(tensor)
    if rois is not None:
        picture = draw_boxes(picture, rois, labels=labels)
    size = (int(width * rescale), int(height * rescale))
    picture = picture.resize(size, Image.Resampling.LANCZOS)
    with io.BytesIO() as buffer:
        picture.save(buffer, format="PNG")
        png = buffer.getvalue()
    return Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=png)


def video(tag, tensor, fps=4):
    """A ``Summary`` holding an animated GIF of the ``(N, T, C, H, W)`` videos ``tensor``
    (uint8 in [0, 255] or float in [0, 1]), the batch tiled into a grid in every frame.
    Needs ``moviepy`` (1.x, whose ``moviepy.editor`` it uses): without it, it prints why,
    as PyTorch does, and the summary value holds no image.

    >>> from flambeau.utils.tensorboard.summary import video
    >>> summary = video("clip", flambeau.zeros(1, 2, 3, 4, 4))  # doctest: +SKIP
    """
    frames = prepare_video(make_np(tensor))
    return one_value(tag, image=make_video(_to_uint8(frames), fps))


def make_video(tensor, fps):
    """A ``Summary.Image`` holding the ``(T, H, W, C)`` uint8 frames ``tensor`` as an
    animated GIF at ``fps`` frames a second, written by ``moviepy``; ``None`` (after
    printing why) when ``moviepy`` or its ``moviepy.editor`` cannot be imported.

    >>> import numpy as np
    >>> from flambeau.utils.tensorboard.summary import make_video
    >>> gif = make_video(np.zeros((2, 4, 4, 3), dtype=np.uint8), fps=4)  # doctest: +SKIP
    """
    try:
        import moviepy  # noqa: F401
    except ImportError:
        print("add_video needs package moviepy")
        return None
    try:
        from moviepy import editor
    except ImportError:
        print(
            "moviepy is installed, but can't import moviepy.editor.",
            "Some packages could be missing [imageio, requests]",
        )
        return None
    _, height, width, channels = tensor.shape
    clip = editor.ImageSequenceClip(list(tensor), fps=fps)
    with tempfile.NamedTemporaryFile(suffix=".gif") as gif:
        # moviepy's versions differ in how its progress output is silenced.
        for quiet in (
            {"verbose": False, "logger": None},
            {"verbose": False, "progress_bar": False},
        ):
            try:
                clip.write_gif(gif.name, **quiet)
                break
            except TypeError:
                continue
        else:
            clip.write_gif(gif.name, verbose=False)
        gif.seek(0)
        encoded = gif.read()
    return Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=encoded
    )
