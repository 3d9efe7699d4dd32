"""flambeau.utils.tensorboard: TensorBoard event files, as ``torch.utils.tensorboard``.

``SummaryWriter`` writes scalars, histograms, images, audio, text, embeddings,
precision-recall curves, meshes and hyperparameters into event files that the
``tensorboard`` program reads. The event files, their protocol buffers and the
asynchronous file writer all come from the ``tensorboard`` package
(``pip install tensorboard``, or the ``tensorboard`` extra of flambeau-tensor-core),
as they do for PyTorch; values may be flambeau tensors, NumPy arrays or Python numbers.

Importing this module without ``tensorboard`` raises ``ImportError``; ``import
flambeau`` and ``import flambeau.utils`` never import ``tensorboard``.
"""

from __future__ import annotations

import re


def _require_tensorboard() -> None:
    message = "TensorBoard logging requires TensorBoard version 1.15 or above"
    try:
        import tensorboard
    except ImportError as err:
        raise ModuleNotFoundError(message, name="tensorboard") from err
    release = re.match(r"(\d+)\.(\d+)", getattr(tensorboard, "__version__", ""))
    if release is None or (int(release[1]), int(release[2])) < (1, 15):
        raise ImportError(message)


_require_tensorboard()

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from flambeau.utils.tensorboard.writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
