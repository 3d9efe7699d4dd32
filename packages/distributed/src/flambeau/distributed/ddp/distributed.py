"""DistributedDataParallel: data-parallel training over the ranks of a process group."""

from __future__ import annotations

import inspect
from contextlib import contextmanager

import flambeau
from flambeau.futures import Future
from flambeau.nn import Module

from .. import objects
from ..algorithms.join import Join, Joinable
from ..grad_bucket import GradBucket
from ..process_group import resolve_group
from . import join as _join
from .buckets import DEFAULT_BUCKET_CAP_MB, DEFAULT_FIRST_BUCKET_BYTES
from .reducer import Reducer
from .sync import broadcast_coalesced

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module, Joinable):
    """Replicates `module` on every rank and averages gradients across ranks during
    backward, as torch.nn.parallel.DistributedDataParallel.

    At construction, rank 0's parameters and buffers are broadcast to all ranks. Each
    backward marks gradients ready as they are accumulated; buckets of them (reverse
    registration order, a 1 MiB first bucket, then up to `bucket_cap_mb`) are all-reduced
    as soon as they fill, overlapping the rest of backward, and averaged. After the first
    iteration the buckets are rebuilt once in the order the gradients became ready
    (unless find_unused_parameters is set without static_graph).

    >>> import flambeau.distributed as dist
    >>> dist.init_process_group()  # one process here; started by a launcher, one per rank
    >>> model = dist.DistributedDataParallel(flambeau.nn.Linear(2, 1))
    >>> model(flambeau.ones(4, 2)).sum().backward()  # gradients averaged over the ranks
    >>> model.module.weight.grad
    tensor([[4., 4.]])
    >>> dist.destroy_process_group()
    """

    def __init__(
        self,
        module,
        device_ids=None,
        output_device=None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        init_sync: bool = True,
        process_group=None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        delay_all_reduce_named_params=None,
        param_to_hook_all_reduce=None,
        mixed_precision=None,
        device_mesh=None,
        skip_all_reduce_unused_params: bool = False,
    ):
        super().__init__()
        Joinable.__init__(self)
        params = list(module.parameters())
        devices = {p.device for p in params}
        if (device_ids or output_device is not None) and all(d.type == "cpu" for d in devices):
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters {devices}."
            )
        if mixed_precision is not None or device_mesh is not None:
            raise ValueError("mixed_precision and device_mesh are not supported by the MPI backend")
        if process_group is not None and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        pg = resolve_group(process_group)
        if pg is None:
            raise ValueError("DistributedDataParallel: this rank is not in process_group")
        self.module = module
        self.process_group = pg
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._divide_by_initial_world_size = True

        seen, trained = set(), []
        for p in params:
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                trained.append(p)
        if not trained:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any parameter "
                "that requires a gradient."
            )
        self._buffers_to_sync = [b for b in module.buffers()]
        self._verify_same_model(trained)
        if init_sync:
            broadcast_coalesced(
                list(module.parameters()) + self._buffers_to_sync, pg.global_rank(0), pg
            )
        cap = DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap * 1024 * 1024)
        self.reducer = Reducer(
            trained,
            pg,
            self.bucket_bytes_cap,
            min(DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap),
            gradient_as_bucket_view,
            find_unused_parameters,
            static_graph,
        )

    def _verify_same_model(self, params) -> None:
        mine = [(tuple(p.shape), str(p.dtype)) for p in params]
        everyone = [None] * self.process_group.size()
        objects.all_gather_object(everyone, mine, group=self.process_group)
        for r, theirs in enumerate(everyone):
            if theirs != everyone[0]:
                raise RuntimeError(
                    "DDP expects same model across all ranks, but Rank "
                    f"{self.process_group.global_rank(r)} has {len(theirs)} params, while rank 0 "
                    f"has {len(everyone[0])} params (or their shapes or dtypes differ)."
                )

    def forward(self, *inputs, **kwargs):
        if self._join_config.enable:
            _join.before_forward(self)
        else:
            self.reducer.rebuild_buckets()
            _join.sync_buffers(self, 0)
        output = self.module(*inputs, **kwargs)
        if flambeau.is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_backward(output)
        else:
            self.reducer.expect_backward = False
        return output

    @contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside; the first backward after it synchronizes
        them all."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def join(
        self,
        divide_by_initial_world_size: bool = True,
        enable: bool = True,
        throw_on_early_termination: bool = False,
    ) -> Join:
        """A context manager for training with uneven inputs across ranks: a rank whose
        inputs run out waits at the end of the ``with`` block, shadowing the collectives
        of the ranks still training (so none of them hangs), and at the end every rank
        takes the parameters of one that trained to the end.

        Args:
            divide_by_initial_world_size: average gradients over the whole group (True)
                or over the ranks still training (False).
            enable: False makes the context do nothing.
            throw_on_early_termination: raise RuntimeError on every rank as soon as one
                runs out of inputs.
        """
        return Join(
            [self],
            enable,
            throw_on_early_termination,
            divide_by_initial_world_size=divide_by_initial_world_size,
        )

    def join_hook(self, **kwargs) -> _join.DDPJoinHook:
        """The hook a joined rank runs (kwargs: divide_by_initial_world_size)."""
        return _join.DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return next(iter(self.module.parameters())).device

    @property
    def join_process_group(self):
        return self.process_group

    def register_comm_hook(self, state: object, hook) -> None:
        """Replace the gradient all-reduce with ``hook(state, bucket) -> Future[Tensor]``.

        The hook gets each full bucket as a :class:`~flambeau.distributed.GradBucket`
        and returns a :class:`flambeau.futures.Future` of a tensor of the bucket's size:
        the reduced gradients, which DDP writes back to ``.grad``. DDP does not divide by
        the world size when a hook is registered: averaging is up to the hook (see
        ``flambeau.distributed.algorithms.ddp_comm_hooks.default_hooks``). Register it
        once, before the first forward.
        """
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        try:  # string annotations (``from __future__ import annotations``) resolved
            sig = inspect.signature(hook, eval_str=True)
        except Exception:
            sig = inspect.signature(hook)
        bucket = sig.parameters.get("bucket")
        if bucket is not None and bucket.annotation not in (inspect.Parameter.empty, GradBucket):
            raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
        if sig.return_annotation not in (inspect.Signature.empty, Future[flambeau.Tensor]):
            raise ValueError(
                "Communication hook: return annotation should be "
                "torch.futures.Future[torch.Tensor]."
            )
        self.reducer.register_comm_hook(state, hook)

    def _register_builtin_comm_hook(self, comm_hook_type) -> None:
        """Register a built-in hook by its :class:`~flambeau.distributed.BuiltinCommHookType`
        (``ALLREDUCE`` or ``FP16_COMPRESS``), on the default group."""
        from ..algorithms.ddp_comm_hooks import default_hooks
        from ..comm_hook_type import BuiltinCommHookType

        hooks = {
            BuiltinCommHookType.ALLREDUCE: default_hooks.allreduce_hook,
            BuiltinCommHookType.FP16_COMPRESS: default_hooks.fp16_compress_hook,
        }
        if comm_hook_type not in hooks:
            raise TypeError(f"expected a BuiltinCommHookType, got {comm_hook_type!r}")
        self.reducer.register_comm_hook(None, hooks[BuiltinCommHookType(comm_hook_type)])

    def _get_ddp_logging_data(self) -> dict:
        """Figures of the last iteration: bucket sizes, and when the all-reduces started
        and ended relative to backward (perf_counter seconds)."""
        t = self.reducer.timeline
        data = {
            "world_size": self.process_group.size(),
            "bucket_sizes": [b.nbytes for b in self.reducer.buckets],
            "bucket_cap_bytes": self.bucket_bytes_cap,
            "find_unused_parameters": self.find_unused_parameters,
            "gradient_as_bucket_view": self.gradient_as_bucket_view,
            "static_graph": self.static_graph,
            "iterations": self.reducer.iterations,
            "has_rebuilt_buckets": self.reducer.rebuilt,
            "comm_hook": getattr(self.reducer.comm_hook, "__qualname__", None),
        }
        if t.get("launch"):
            start, end = t["backward_start"], t["backward_end"]
            data["first_launch_before_backward_end_s"] = end - t["launch"][0][1]
            data["backward_time_s"] = end - start
            data["comm_wait_after_backward_s"] = t["comm_done"] - end
            data["launch_times"] = [(i, s - start) for i, s in t["launch"]]
        return data
