"""The ``Summary`` protos ``SummaryWriter`` writes, as ``torch.utils.tensorboard.summary``.

Each function turns values (flambeau tensors, NumPy arrays, Python numbers) into a
``tensorboard.compat.proto.summary_pb2.Summary`` (or the proto inside one) that a
``FileWriter`` can write with ``add_summary``. The payloads are PyTorch's, field for
field, so TensorBoard shows a flambeau run as it shows a PyTorch one.
"""

from __future__ import annotations

from flambeau.utils.tensorboard._audio_summary import audio
from flambeau.utils.tensorboard._custom_scalars_summary import custom_scalars
from flambeau.utils.tensorboard._histogram_summaries import (
    histogram,
    histogram_raw,
    make_histogram,
)
from flambeau.utils.tensorboard._hparams_summary import hparams
from flambeau.utils.tensorboard._image_summaries import (
    draw_boxes,
    image,
    image_boxes,
    make_image,
    make_video,
    video,
)
from flambeau.utils.tensorboard._mesh_summary import mesh
from flambeau.utils.tensorboard._pr_curve_summaries import compute_curve, pr_curve, pr_curve_raw
from flambeau.utils.tensorboard._tensor_summaries import (
    half_to_int,
    int_to_half,
    scalar,
    tensor_proto,
)
from flambeau.utils.tensorboard._text_summary import text

__all__ = [
    "half_to_int",
    "int_to_half",
    "hparams",
    "scalar",
    "histogram_raw",
    "histogram",
    "make_histogram",
    "image",
    "image_boxes",
    "draw_boxes",
    "make_image",
    "video",
    "make_video",
    "audio",
    "custom_scalars",
    "text",
    "tensor_proto",
    "pr_curve_raw",
    "pr_curve",
    "compute_curve",
    "mesh",
]
