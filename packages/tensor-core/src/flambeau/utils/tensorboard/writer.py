"""``SummaryWriter`` and ``FileWriter``, as ``torch.utils.tensorboard.writer``.

A ``FileWriter`` appends ``Event`` protocol buffers to one event file through
TensorBoard's own asynchronous ``EventFileWriter``; a ``SummaryWriter`` turns values
into summaries (see ``flambeau.utils.tensorboard.summary``) and hands them to its
``FileWriter``s, one per log directory it writes into.
"""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime

from tensorboard.compat.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from flambeau.utils.tensorboard._histogram_summaries import tensorflow_bins
from flambeau.utils.tensorboard._image_layout import figure_to_image
from flambeau.utils.tensorboard._projector import encode_tag, write_embedding
from flambeau.utils.tensorboard._to_numpy import make_np
from flambeau.utils.tensorboard.summary import (
    audio,
    custom_scalars,
    histogram,
    histogram_raw,
    hparams,
    image,
    image_boxes,
    mesh,
    pr_curve,
    pr_curve_raw,
    scalar,
    tensor_proto,
    text,
    video,
)

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes ``Event`` protocol buffers into a new event file in ``log_dir``.

    Events are queued and written by a background thread: the queue is written out
    when it holds ``max_queue`` events, every ``flush_secs`` seconds, and on ``flush``
    and ``close``. ``filename_suffix`` ends the event file's name.

    >>> import tempfile
    >>> from flambeau.utils.tensorboard import FileWriter
    >>> from flambeau.utils.tensorboard.summary import scalar
    >>> writer = FileWriter(tempfile.mkdtemp())
    >>> writer.add_summary(scalar("loss", 0.5), global_step=1)
    >>> writer.close()
    """

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix="") -> None:
        self._settings = (str(log_dir), max_queue, flush_secs, filename_suffix)
        self.event_writer = EventFileWriter(*self._settings)
        self._closed = False

    def get_logdir(self):
        """The directory the event file is in."""
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None) -> None:
        """Queue ``event`` (an ``Event`` proto), stamped with ``walltime`` (seconds since
        the epoch; default now) and, if given, the global ``step``."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)  # a NumPy or tensor step, as an int the proto accepts
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None) -> None:
        """Queue ``summary`` (a ``Summary`` proto) in an event at ``global_step``."""
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None) -> None:
        """Queue a ``(GraphDef, RunMetadata)`` pair: the graph, then its step statistics
        under the tag ``step1``."""
        graph, run_metadata = graph_profile[0], graph_profile[1]
        self.add_event(Event(graph_def=graph.SerializeToString()), None, walltime)
        tagged = TaggedRunMetadata(tag="step1", run_metadata=run_metadata.SerializeToString())
        self.add_event(Event(tagged_run_metadata=tagged), None, walltime)

    def add_onnx_graph(self, graph, walltime=None) -> None:
        """Queue a ``GraphDef`` proto."""
        self.add_event(Event(graph_def=graph.SerializeToString()), None, walltime)

    def flush(self) -> None:
        """Write every queued event to disk."""
        self.event_writer.flush()

    def close(self) -> None:
        """Write every queued event to disk and close the event file."""
        self.event_writer.close()
        self._closed = True

    def reopen(self) -> None:
        """After ``close``, start a new event file in the same directory for the events
        that follow; does nothing while the writer is open."""
        if self._closed:
            self.event_writer = EventFileWriter(*self._settings)
            self._closed = False


def _default_log_dir(comment: str) -> str:
    stamp = datetime.now().strftime("%b%d_%H-%M-%S")
    return os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")


class SummaryWriter:
    """Writes scalars, histograms, images, text, embeddings... into event files in
    ``log_dir`` for TensorBoard to show.

    ``log_dir`` defaults to ``runs/<date_time>_<hostname><comment>`` (``comment`` is
    ignored when ``log_dir`` is given). With ``purge_step`` (resuming a run that
    crashed), TensorBoard hides the events an earlier writer wrote at that step and
    later. ``max_queue``, ``flush_secs`` and ``filename_suffix`` go to the
    ``FileWriter``s. Values may be flambeau tensors, NumPy arrays or Python numbers. A
    ``SummaryWriter`` is a context manager that closes itself; writing after ``close``
    starts new event files.

    >>> import tempfile
    >>> from flambeau.utils.tensorboard import SummaryWriter
    >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
    ...     for step in range(3):
    ...         writer.add_scalar("loss", 1.0 / (step + 1), step)
    """

    def __init__(
        self,
        log_dir=None,
        comment="",
        purge_step=None,
        max_queue=10,
        flush_secs=120,
        filename_suffix="",
    ) -> None:
        if not log_dir:
            log_dir = _default_log_dir(comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        # The bucket edges of bins="tensorflow".
        self.default_bins = tensorflow_bins()

    def _get_file_writer(self):
        """The writer of ``log_dir``'s event file, opened anew after ``close``."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(
                self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # A new file version at purge_step, then a restart: TensorBoard drops the
                # events at and after purge_step that came before these.
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                start = SessionLog(status=SessionLog.START)
                self.file_writer.add_event(Event(step=step, session_log=start))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory this writer writes into (``log_dir``).

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> folder = tempfile.mkdtemp()
        >>> with SummaryWriter(folder) as writer:
        ...     writer.get_logdir() == folder
        True
        """
        return self.log_dir

    def _write(self, summary, global_step=None, walltime=None) -> None:
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_hparams(
        self,
        hparam_dict,
        metric_dict,
        hparam_domain_discrete=None,
        run_name=None,
        global_step=None,
    ) -> None:
        """Record a run's hyperparameters with its final metrics, for the HPARAMS tab.

        They go into a run of their own, the folder ``run_name`` (default: the current
        time) under ``log_dir``, with each metric as a scalar there. ``hparam_dict``
        maps names to bools, strings, numbers, one-element tensors or ``None``;
        ``metric_dict`` maps scalar tags to values; ``hparam_domain_discrete`` maps a
        name to the list of values it can take. Not dicts raise ``TypeError``.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_hparams({"lr": 0.1, "batch": 32}, {"hparam/accuracy": 0.9},
        ...                        run_name="trial0")
        """
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        run_dir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=run_dir) as run_writer:
            for summary in summaries:
                run_writer.file_writer.add_summary(summary, global_step)
            for tag, value in metric_dict.items():
                run_writer.add_scalar(tag, value, global_step)

    def add_scalar(
        self,
        tag,
        scalar_value,
        global_step=None,
        walltime=None,
        new_style=False,
        double_precision=False,
    ) -> None:
        """Record one number (a Python or NumPy number, or a one-element tensor) under
        ``tag`` at ``global_step``. ``new_style`` writes it as a tensor (float32, or
        float64 with ``double_precision``), which TensorBoard loads faster.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_scalar("loss", flambeau.tensor(0.25), global_step=10)
        """
        summary = scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision)
        self._write(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None) -> None:
        """Record several numbers on one chart: each ``tag_scalar_dict`` entry goes, as
        the scalar ``main_tag``, into a run of its own, the folder
        ``<log_dir>/<main_tag>_<tag>`` (slashes in ``main_tag`` become underscores).

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_scalars("loss", {"train": 0.5, "test": 0.7}, global_step=1)
        """
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            run_dir = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            if self.all_writers is None:
                raise AssertionError("self.all_writers is None")
            if run_dir not in self.all_writers:
                self.all_writers[run_dir] = FileWriter(
                    run_dir, self.max_queue, self.flush_secs, self.filename_suffix
                )
            self.all_writers[run_dir].add_summary(scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None) -> None:
        """Record a whole tensor: its shape, dtype and elements.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_tensor("weights", flambeau.tensor([1.0, 2.0, 3.0]))
        """
        self._write(tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(
        self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None
    ) -> None:
        """Record the histogram of ``values`` (any shape). ``bins`` is ``"tensorflow"``
        (TensorFlow's buckets, growing by 10% away from 0), or anything
        ``numpy.histogram`` takes: a count, the edges, ``"auto"``, ``"fd"``...
        ``max_bins`` merges neighbouring buckets down to about that many.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_histogram("weights", flambeau.randn(1000), global_step=0)
        ...     writer.add_histogram("weights", flambeau.randn(1000), global_step=1, bins=30)
        """
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._write(histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(
        self,
        tag,
        min,  # noqa: A002
        max,  # noqa: A002
        num,
        sum,  # noqa: A002
        sum_squares,
        bucket_limits,
        bucket_counts,
        global_step=None,
        walltime=None,
    ) -> None:
        """Record a histogram given by its statistics and buckets: ``bucket_limits[i]``
        is the right edge of the bucket that holds ``bucket_counts[i]`` values; lists of
        different lengths raise ``ValueError``.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_histogram_raw("h", min=0.0, max=2.0, num=3, sum=3.0,
        ...                              sum_squares=5.0, bucket_limits=[1.0, 2.0],
        ...                              bucket_counts=[1, 2], global_step=0)
        """
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        summary = histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts)
        self._write(summary, global_step, walltime)

    def add_image(
        self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"
    ) -> None:
        """Record an image, laid out as ``dataformats`` says (``CHW``, ``HWC``, ``HW``,
        ``WH``...; one channel shows as gray): float values in [0, 1], uint8 values in
        [0, 255]. Needs Pillow.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_image("noise", flambeau.rand(3, 16, 16), global_step=0)
        ...     writer.add_image("gray", flambeau.rand(16, 16), dataformats="HW")
        """
        self._write(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(
        self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"
    ) -> None:
        """Record a batch of images (``NCHW`` or ``NHWC``...) as one image, tiled eight
        to a row. Needs Pillow.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_images("batch", flambeau.rand(10, 3, 8, 8), global_step=0)
        """
        self._write(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_image_with_boxes(
        self,
        tag,
        img_tensor,
        box_tensor,
        global_step=None,
        walltime=None,
        rescale=1,
        dataformats="CHW",
        labels=None,
    ) -> None:
        """Record an image with boxes drawn on it in red: ``box_tensor`` is ``(N, 4)``,
        one ``(xmin, ymin, xmax, ymax)`` row in pixels per box; ``labels`` (a string
        per box; one string for one box) captions them, and is dropped when it does not
        have one per box. ``rescale`` resizes the picture. Needs Pillow.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> boxes = flambeau.tensor([[2.0, 2.0, 12.0, 12.0]])
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_image_with_boxes("boxed", flambeau.rand(3, 16, 16), boxes,
        ...                                 labels=["cat"])
        """
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != box_tensor.shape[0]:
                labels = None
        summary = image_boxes(
            tag, img_tensor, box_tensor, rescale=rescale, dataformats=dataformats, labels=labels
        )
        self._write(summary, global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None) -> None:
        """Record a matplotlib figure (or a list of them, tiled) as an image; ``close``
        closes the figures once drawn. Needs matplotlib and Pillow.

        >>> import tempfile
        >>> import matplotlib.pyplot as plt  # doctest: +SKIP
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:  # doctest: +SKIP
        ...     figure = plt.figure()
        ...     _ = plt.plot([1, 3, 2])
        ...     writer.add_figure("plot", figure, global_step=0)
        """
        if isinstance(figure, list):
            pixels, layout = figure_to_image(figure, close), "NCHW"
        else:
            pixels, layout = figure_to_image(figure, close), "CHW"
        self.add_image(tag, pixels, global_step, walltime, dataformats=layout)

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None) -> None:
        """Record videos ``(N, T, C, H, W)`` (uint8 in [0, 255] or float in [0, 1]) as one
        animated GIF, the batch tiled in every frame. Needs ``moviepy`` 1.x (it uses
        ``moviepy.editor``); without it, as in PyTorch, it prints why and records an
        empty image.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:  # doctest: +SKIP
        ...     writer.add_video("clip", flambeau.rand(1, 8, 3, 16, 16), fps=4)
        """
        self._write(video(tag, vid_tensor, fps), global_step, walltime)

    def add_audio(
        self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None
    ) -> None:
        """Record sound: ``snd_tensor`` is ``(1, L)`` (or anything that squeezes to
        ``L`` samples) in [-1, 1], written as a 16-bit mono WAV at ``sample_rate`` Hz.

        >>> import math, tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> beep = 0.5 * flambeau.sin(flambeau.arange(8000.0) * (2 * math.pi * 440 / 8000))
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_audio("beep", beep.unsqueeze(0), sample_rate=8000)
        """
        self._write(audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None) -> None:
        """Record text (Markdown) for the TEXT tab.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_text("notes", "learning rate **0.1**", global_step=0)
        """
        self._write(text(tag, text_string), global_step, walltime)

    def add_onnx_graph(self, prototxt) -> None:
        """Record the graph of the ONNX model file ``prototxt``. Needs the ``onnx``
        package (``ModuleNotFoundError`` without it).

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:  # doctest: +SKIP
        ...     writer.add_onnx_graph("model.onnx")
        """
        from flambeau.utils.tensorboard._onnx_graph import load_onnx_graph

        self._get_file_writer().add_onnx_graph(load_onnx_graph(prototxt))

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True) -> None:
        """Not available: raises ``NotImplementedError`` and records nothing.

        PyTorch draws a model's graph by tracing it with TorchScript
        (``torch.jit.trace``), and raises the tracer's ``RuntimeError`` when a model
        cannot be traced. flambeau has no tracer to record a graph with
        (``flambeau.jit.trace`` runs the model eagerly), so no model can be traced:
        this raises ``NotImplementedError``, a ``RuntimeError``, so code that guards
        ``add_graph`` against tracing failures keeps working. The model is not run.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     try:
        ...         writer.add_graph(flambeau.nn.Linear(2, 1), flambeau.zeros(1, 2))
        ...     except RuntimeError as e:
        ...         print(type(e).__name__)
        NotImplementedError
        """
        raise NotImplementedError(
            "SummaryWriter.add_graph: flambeau cannot trace a model into a graph "
            "(PyTorch traces it with TorchScript, which flambeau does not have; "
            "flambeau.jit.trace runs models eagerly). No graph saved."
        )

    @staticmethod
    def _encode(rawstr):
        return encode_tag(rawstr)

    def add_embedding(
        self,
        mat,
        metadata=None,
        label_img=None,
        global_step=None,
        tag="default",
        metadata_header=None,
    ) -> None:
        """Record points for the PROJECTOR tab: ``mat`` is ``(N, D)``, one feature
        vector per point; ``metadata`` a label per point (or, with ``metadata_header``
        naming the columns, a list of values per point); ``label_img`` an image per
        point, ``(N, C, H, W)`` in [0, 1]. The files go into the folder
        ``<global_step, 5 digits>/<tag>`` under ``log_dir``, listed in its
        ``projector_config.pbtxt``. Sprites need Pillow.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_embedding(flambeau.randn(4, 3), metadata=["a", "b", "c", "d"],
        ...                          label_img=flambeau.rand(4, 3, 8, 8))
        """
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        write_embedding(
            self._get_file_writer().get_logdir(),
            self._projector_config,
            mat,
            metadata=metadata,
            label_img=label_img,
            global_step=global_step,
            tag=tag,
            metadata_header=metadata_header,
        )

    def add_pr_curve(
        self,
        tag,
        labels,
        predictions,
        global_step=None,
        num_thresholds=127,
        weights=None,
        walltime=None,
    ) -> None:
        """Record the precision-recall curve of binary ``labels`` against
        ``predictions`` in [0, 1], at ``num_thresholds`` (at most 127) thresholds.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> labels = flambeau.tensor([1, 0, 1, 1])
        >>> predictions = flambeau.tensor([0.9, 0.4, 0.6, 0.2])
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_pr_curve("pr", labels, predictions, global_step=0)
        """
        summary = pr_curve(tag, make_np(labels), make_np(predictions), num_thresholds, weights)
        self._write(summary, global_step, walltime)

    def add_pr_curve_raw(
        self,
        tag,
        true_positive_counts,
        false_positive_counts,
        true_negative_counts,
        false_negative_counts,
        precision,
        recall,
        global_step=None,
        num_thresholds=127,
        weights=None,
        walltime=None,
    ) -> None:
        """Record a precision-recall curve given by its counts and ratios, one entry
        per threshold in each (lists, arrays or tensors of one length).

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_pr_curve_raw("pr", [2, 1], [2, 0], [0, 2], [0, 1],
        ...                             [0.5, 1.0], [1.0, 0.5], num_thresholds=2)
        """
        summary = pr_curve_raw(
            tag,
            true_positive_counts,
            false_positive_counts,
            true_negative_counts,
            false_negative_counts,
            precision,
            recall,
            num_thresholds,
            weights,
        )
        self._write(summary, global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled") -> None:
        """Lay out a chart of several scalar ``tags`` on the CUSTOM SCALARS tab.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_custom_scalars_multilinechart(["loss/train", "loss/test"])
        """
        self._write(custom_scalars({category: {title: ["Multiline", tags]}}))

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled") -> None:
        """Lay out a chart of one scalar with its bounds: ``tags`` names the value, the
        lower and the upper bound (other lengths raise ``AssertionError``).

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_custom_scalars_marginchart(["acc", "acc/low", "acc/high"])
        """
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self._write(custom_scalars({category: {title: ["Margin", tags]}}))

    def add_custom_scalars(self, layout) -> None:
        """Lay out the CUSTOM SCALARS tab: ``layout`` maps category titles to charts,
        ``{chart title: ["Multiline" or "Margin", tags]}``. TensorBoard reads one layout
        per run, so call it once per writer.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> layout = {"losses": {"all": ["Multiline", ["loss/train", "loss/test"]]},
        ...           "accuracy": {"band": ["Margin", ["acc", "acc/low", "acc/high"]]}}
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_custom_scalars(layout)
        """
        self._write(custom_scalars(layout))

    def add_mesh(
        self,
        tag,
        vertices,
        colors=None,
        faces=None,
        config_dict=None,
        global_step=None,
        walltime=None,
    ) -> None:
        """Record a mesh or point cloud for the MESH tab: ``vertices`` ``(B, N, 3)``
        coordinates, ``colors`` ``(B, N, 3)`` per vertex (uint8 in [0, 255] or float in
        [0, 1]), ``faces`` ``(B, F, 3)`` vertex indices per triangle; ``config_dict``
        configures the Three.js scene.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> vertices = flambeau.tensor([[[1.0, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]])
        >>> faces = flambeau.tensor([[[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]])
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_mesh("tetrahedron", vertices=vertices, faces=faces)
        """
        summary = mesh(tag, vertices, colors, faces, config_dict)
        self._write(summary, global_step, walltime)

    def flush(self) -> None:
        """Write every queued event of every event file to disk.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> writer = SummaryWriter(tempfile.mkdtemp())
        >>> writer.add_scalar("loss", 0.5, 0)
        >>> writer.flush()
        >>> writer.close()
        """
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Write every queued event to disk and close the event files; closing twice
        does nothing, and writing after ``close`` starts new event files.

        >>> import tempfile
        >>> from flambeau.utils.tensorboard import SummaryWriter
        >>> writer = SummaryWriter(tempfile.mkdtemp())
        >>> writer.close()
        >>> writer.close()
        """
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
