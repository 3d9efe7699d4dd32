"""The files of TensorBoard's embedding projector (``add_embedding``).

Each embedding gets a folder ``<global_step, 5 digits>/<tag>`` under the log directory
holding ``tensors.tsv`` (one row per point), optionally ``metadata.tsv`` (a label per
point, or a header and rows of columns) and ``sprite.png`` (the points' images tiled
into a square); ``projector_config.pbtxt`` in the log directory lists every embedding.
Files go through TensorBoard's ``gfile``, so remote log directories work as for PyTorch.
"""

from __future__ import annotations

import io
import math

import numpy as np
from google.protobuf import text_format
from tensorboard.compat import tf
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo, ProjectorConfig

from flambeau.utils.tensorboard._image_layout import make_grid
from flambeau.utils.tensorboard._to_numpy import make_np


def join(folder: str, name: str) -> str:
    # TensorFlow's gfile has join; TensorBoard's stand-in for it keeps it on the filesystem.
    gfile = tf.io.gfile
    if hasattr(gfile, "join"):
        return gfile.join(folder, name)
    return gfile.get_filesystem(folder).join(folder, name)


def _write(path: str, data: bytes) -> None:
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(data)


def encode_tag(tag: str) -> str:
    """``tag`` made safe as one folder name: ``%``, ``/`` and ``\\`` percent-encoded."""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def _metadata_tsv(metadata, metadata_header) -> bytes:
    if not metadata_header:
        lines = [str(label) for label in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in metadata")
        lines = ["\t".join(str(cell) for cell in row) for row in [metadata_header, *metadata]]
    return ("\n".join(lines) + "\n").encode()


def _tensors_tsv(mat: np.ndarray) -> bytes:
    rows = ("\t".join(str(x.item()) for x in row) + "\n" for row in mat)
    return "".join(rows).encode()


def _sprite_png(label_img: np.ndarray) -> bytes:
    """The ``(N, C, H, W)`` images in [0, 1] tiled ``ceil(sqrt(N))`` to a row, at the
    top of a square canvas as wide as the tiles, as PNG."""
    from PIL import Image

    per_row = math.ceil(label_img.shape[0] ** 0.5)
    tiles = make_grid(label_img, ncols=per_row).transpose(1, 2, 0)
    side = tiles.shape[1]
    canvas = np.zeros((side, side, 3))
    canvas[: tiles.shape[0]] = tiles
    with io.BytesIO() as buffer:
        Image.fromarray(np.uint8((canvas * 255).clip(0, 255))).save(buffer, format="PNG")
        return buffer.getvalue()


def _prepare_folder(path: str) -> None:
    gfile = tf.io.gfile
    if not gfile.exists(path):
        gfile.makedirs(path)
    elif gfile.isdir(path):
        print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
    else:
        raise NotADirectoryError(f"Path: `{path}` exists, but is a file. Cannot proceed.")


def write_embedding(
    logdir: str,
    config: ProjectorConfig,
    mat,
    metadata=None,
    label_img=None,
    global_step=None,
    tag="default",
    metadata_header=None,
) -> None:
    """Write one embedding's files under ``logdir``, add it to ``config`` and rewrite
    ``projector_config.pbtxt`` (the projector reads the whole list from it)."""
    mat = make_np(mat)
    if global_step is None:
        global_step = 0
    subdir = f"{str(global_step).zfill(5)}/{encode_tag(tag)}"
    folder = join(logdir, subdir)
    _prepare_folder(folder)
    info = EmbeddingInfo(
        tensor_name=f"{tag}:{str(global_step).zfill(5)}", tensor_path=join(subdir, "tensors.tsv")
    )
    if metadata is not None:
        if mat.shape[0] != len(metadata):
            raise AssertionError("#labels should equal with #data points")
        _write(join(folder, "metadata.tsv"), _metadata_tsv(metadata, metadata_header))
        info.metadata_path = join(subdir, "metadata.tsv")
    if label_img is not None:
        images = make_np(label_img)
        if mat.shape[0] != images.shape[0]:
            raise AssertionError("#images should equal with #data points")
        _write(join(folder, "sprite.png"), _sprite_png(images))
        info.sprite.image_path = join(subdir, "sprite.png")
        info.sprite.single_image_dim.extend([images.shape[3], images.shape[2]])
    if mat.ndim != 2:
        raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
    _write(join(folder, "tensors.tsv"), _tensors_tsv(mat))
    config.embeddings.extend([info])
    pbtxt = text_format.MessageToString(config)
    _write(join(logdir, "projector_config.pbtxt"), pbtxt.encode())
