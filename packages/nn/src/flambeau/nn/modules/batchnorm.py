"""BatchNorm1d/2d/3d, SyncBatchNorm, InstanceNorm1d/2d/3d and their lazy forms: per-channel
normalisation with running statistics."""

from __future__ import annotations

import warnings

import flambeau

from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module


class _NormBase(Module):
    """Per-channel affine parameters and running statistics shared by batch and instance norm."""

    _version = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True):  # fmt: skip
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        self.bias_enabled = affine and bias
        if affine:
            self.weight = Parameter(flambeau.empty(num_features, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(flambeau.empty(num_features, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer(
                "running_mean", flambeau.zeros(num_features, dtype=dtype, device=device)
            )
            self.register_buffer(
                "running_var", flambeau.ones(num_features, dtype=dtype, device=device)
            )
            self.register_buffer(
                "num_batches_tracked",
                flambeau.tensor(0, dtype=flambeau.int64, device=device),
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with flambeau.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input) -> None:
        raise NotImplementedError

    def _rank_error(self, input, expected: str):
        return ValueError(
            f"{type(self).__name__}: expected {expected} input (got {input.dim()}D input of "
            f"shape {tuple(input.shape)})"
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, *args, **kwargs):
        # Checkpoints from before num_batches_tracked existed load with a count of zero.
        key = prefix + "num_batches_tracked"
        if self.track_running_stats and key not in state_dict:
            version = (local_metadata or {}).get("version")
            if version is None or version < 2:
                state_dict[key] = flambeau.tensor(0, dtype=flambeau.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, *args, **kwargs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        # Without weights or statistics num_features is unused (a lazy one stays 0).
        sized = self.weight is not None or self.running_mean is not None
        if sized and input.shape[1] != self.num_features:
            raise ValueError(
                f"{type(self).__name__}: expected input with {self.num_features} channels in "
                f"dim 1, but got input of shape {tuple(input.shape)}"
            )
        # momentum None: a cumulative moving average, factor 1 / batches seen.
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with flambeau.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / int(self.num_batches_tracked.item())
        # In eval, batch statistics are used only when there are no running ones.
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if keep else None,
            self.running_var if keep else None,
            self.weight,
            self.bias,
            use_batch_stats,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input.

    >>> import flambeau.nn as nn
    >>> m = nn.BatchNorm1d(2)
    >>> x = flambeau.tensor([[0.0, 10.0], [1.0, 20.0], [2.0, 30.0], [3.0, 40.0]])
    >>> m(x)
    tensor([[-1.3416, -1.3416],
            [-0.4472, -0.4472],
            [ 0.4472,  0.4472],
            [ 1.3416,  1.3416]], grad_fn=<...>)
    >>> m.running_mean
    tensor([0.1500, 2.5000])
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (2, 3):
            raise self._rank_error(input, "2D or 3D")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.BatchNorm2d(16)
    >>> out = m(flambeau.randn(8, 16, 6, 6))
    >>> out.shape, m.num_batches_tracked.item()
    (flambeau.Size([8, 16, 6, 6]), 1)
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() != 4:
            raise self._rank_error(input, "4D")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) input.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.BatchNorm3d(4, affine=False)
    >>> m(flambeau.randn(2, 4, 3, 5, 5)).shape
    flambeau.Size([2, 4, 3, 5, 5])
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() != 5:
            raise self._rank_error(input, "5D")


class _InstanceNorm(_NormBase):
    _no_batch_dim = 0
    _ranks = ""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True):  # fmt: skip
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)  # fmt: skip

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (self._no_batch_dim, self._no_batch_dim + 1):
            raise self._rank_error(input, self._ranks)

    def _apply_instance_norm(self, input):
        return F.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0, self.eps,
        )  # fmt: skip

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"{type(self).__name__}: expected input's size at dim={feature_dim} to match "
                    f"num_features ({self.num_features}), but got: {input.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False",
                stacklevel=3,
            )
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) input.

    >>> import flambeau.nn as nn
    >>> m = nn.InstanceNorm1d(2)
    >>> m(flambeau.tensor([[[1.0, 2.0, 3.0, 4.0], [8.0, 6.0, 4.0, 2.0]]]))
    tensor([[[-1.3416, -0.4472,  0.4472,  1.3416],
             [ 1.3416,  0.4472, -0.4472, -1.3416]]])
    """

    _no_batch_dim = 2
    _ranks = "2D or 3D"


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) input.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.InstanceNorm2d(3, affine=True)
    >>> m(flambeau.randn(2, 3, 8, 8)).shape
    flambeau.Size([2, 3, 8, 8])
    """

    _no_batch_dim = 3
    _ranks = "3D or 4D"


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.InstanceNorm3d(3)
    >>> m(flambeau.randn(2, 3, 4, 5, 5)).shape
    flambeau.Size([2, 3, 4, 5, 5])
    """

    _no_batch_dim = 4
    _ranks = "4D or 5D"


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over (N, C, *) whose statistics, in distributed training, are reduced over
    the process group.

    flambeau's nn runs in one process, where this is BatchNorm (as PyTorch's SyncBatchNorm
    is when torch.distributed is not initialized); ``process_group`` is kept for the
    flambeau-distributed package.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))
    >>> net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    >>> net[1]
    SyncBatchNorm(8, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> net(flambeau.randn(2, 3, 6, 6)).shape
    flambeau.Size([2, 8, 4, 4])
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None,
                 dtype=None, *, bias: bool = True):  # fmt: skip
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)  # fmt: skip
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """`module` with every BatchNorm*D inside replaced by a SyncBatchNorm that shares its
        parameters and running statistics."""
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group,
                            bias=module.bias is not None)  # fmt: skip
            if module.affine:
                converted.weight = module.weight
                converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted


# ---- lazy forms: num_features from the first input --------------------------------------------


class _LazyNormBase(LazyModuleMixin, _NormBase):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):  # fmt: skip
        # Made with no parameters or statistics: the uninitialized ones come next.
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = flambeau.tensor(0, dtype=flambeau.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        if self.affine:
            self.weight.materialize((self.num_features,))
            if self.bias is not None:
                self.bias.materialize((self.num_features,))
        if self.track_running_stats:
            self.running_mean.materialize((self.num_features,))
            self.running_var.materialize((self.num_features,))
        self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A BatchNorm1d whose num_features is read from its first input.

    >>> import flambeau.nn as nn
    >>> m = nn.LazyBatchNorm1d()
    >>> out = m(flambeau.randn(4, 3, 5))
    >>> m
    BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    cls_to_become = BatchNorm1d

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A BatchNorm2d whose num_features is read from its first input.

    >>> import flambeau.nn as nn
    >>> m = nn.LazyBatchNorm2d()
    >>> out = m(flambeau.randn(4, 3, 5, 5))
    >>> m
    BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    cls_to_become = BatchNorm2d

    def _check_input_dim(self, input) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A BatchNorm3d whose num_features is read from its first input.

    >>> import flambeau.nn as nn
    >>> m = nn.LazyBatchNorm3d()
    >>> out = m(flambeau.randn(4, 3, 2, 5, 5))
    >>> m
    BatchNorm3d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    cls_to_become = BatchNorm3d

    def _check_input_dim(self, input) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")
