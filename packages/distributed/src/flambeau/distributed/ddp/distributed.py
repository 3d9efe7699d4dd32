"""DistributedDataParallel: data-parallel training over the ranks of a process group."""

from __future__ import annotations

from contextlib import contextmanager

import flambeau
from flambeau.nn import Module

from .. import objects
from ..process_group import resolve_group
from .buckets import DEFAULT_BUCKET_CAP_MB, DEFAULT_FIRST_BUCKET_BYTES
from .join import Join
from .reducer import Reducer
from .sync import broadcast_coalesced

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Replicates `module` on every rank and averages gradients across ranks during
    backward, as torch.nn.parallel.DistributedDataParallel.

    At construction, rank 0's parameters and buffers are broadcast to all ranks. Each
    backward marks gradients ready as they are accumulated; buckets of them (reverse
    registration order, a 1 MiB first bucket, then up to `bucket_cap_mb`) are all-reduced
    as soon as they fill, overlapping the rest of backward, and averaged.
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
        self._join: Join | None = None
        self._authoritative_rank = pg.global_rank(0)

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
        if self._join is not None:
            self._join.before_forward()
        if self.broadcast_buffers and self._buffers_to_sync and self.process_group.size() > 1:
            broadcast_coalesced(self._buffers_to_sync, self._authoritative_rank, self.process_group)
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
        """A context manager for training with uneven inputs across ranks (see join.py)."""
        return Join(self, divide_by_initial_world_size, enable, throw_on_early_termination)

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
        }
        if t.get("launch"):
            start, end = t["backward_start"], t["backward_end"]
            data["first_launch_before_backward_end_s"] = end - t["launch"][0][1]
            data["backward_time_s"] = end - start
            data["comm_wait_after_backward_s"] = t["comm_done"] - end
            data["launch_times"] = [(i, s - start) for i, s in t["launch"]]
        return data
