"""Weight averaging, as torch.optim.swa_utils: stochastic weight averaging (SWA) and
exponential moving averages (EMA) of a model's weights, the SWA learning-rate schedule,
and recomputing batch-norm statistics for the averaged weights.

``AveragedModel`` is a module, so this module needs the distribution flambeau-nn
(``flambeau.optim`` itself does not).
"""

from __future__ import annotations

import copy
import itertools
import math

import flambeau
from flambeau.autograd import no_grad
from flambeau.nn import Module
from flambeau.nn.modules.batchnorm import _BatchNorm

from .lr_scheduler import LRScheduler, _per_group

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]


def _check_decay(decay) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def _inexact(t) -> bool:
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA update of lists of tensors: ema = decay * ema + (1 - decay) * current.

    >>> from flambeau.optim.swa_utils import get_ema_multi_avg_fn
    >>> ema = get_ema_multi_avg_fn(decay=0.9)
    >>> averaged = [flambeau.tensor([1.0]), flambeau.tensor([0.0, 10.0])]
    >>> ema(averaged, [flambeau.tensor([11.0]), flambeau.tensor([10.0, 0.0])], 1)
    >>> averaged
    [tensor([2.]), tensor([1., 9.])]
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _num_averaged) -> None:
        if _inexact(ema_param_list[0]):
            flambeau._foreach_lerp_(ema_param_list, current_param_list, 1 - decay)
            return
        for ema, current in zip(ema_param_list, current_param_list, strict=True):
            ema.copy_(ema * decay + current * (1 - decay))  # integers: truncated on copy

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running mean of lists of tensors, given how many were averaged so far.

    >>> from flambeau.optim.swa_utils import get_swa_multi_avg_fn
    >>> swa = get_swa_multi_avg_fn()
    >>> averaged = [flambeau.tensor([1.0]), flambeau.tensor([0.0, 3.0])]
    >>> swa(averaged, [flambeau.tensor([4.0]), flambeau.tensor([3.0, 0.0])], 2)
    >>> averaged  # each the mean of two old values and the new one
    [tensor([2.]), tensor([1., 2.])]
    """

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        if _inexact(averaged_param_list[0]):
            weight = float(1 / (num_averaged + 1))
            flambeau._foreach_lerp_(averaged_param_list, current_param_list, weight)
            return
        diffs = flambeau._foreach_sub(current_param_list, averaged_param_list)
        if isinstance(num_averaged, flambeau.Tensor):
            counts = [num_averaged + 1] * len(averaged_param_list)
            flambeau._foreach_addcdiv_(averaged_param_list, diffs, counts)
        else:
            flambeau._foreach_add_(averaged_param_list, diffs, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An EMA of one tensor: returns decay * ema + (1 - decay) * current.

    >>> from flambeau.optim.swa_utils import get_ema_avg_fn
    >>> ema = get_ema_avg_fn(decay=0.9)
    >>> ema(flambeau.tensor([1.0]), flambeau.tensor([11.0]), 1)
    tensor([2.])
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """A running mean of one tensor: returns averaged + (current - averaged) / (n + 1).

    >>> from flambeau.optim.swa_utils import get_swa_avg_fn
    >>> swa = get_swa_avg_fn()
    >>> swa(flambeau.tensor([1.0]), flambeau.tensor([4.0]), 2)  # the mean of 1, 1 and 4
    tensor([2.])
    """

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _by_device_and_dtype(averaged: list, current: list) -> dict:
    """(device, dtype) -> (averaged tensors, current tensors), in first-seen order."""
    groups: dict = {}
    for a, c in zip(averaged, current):
        lists = groups.setdefault((a.device, a.dtype), ([], []))
        lists[0].append(a)
        lists[1].append(c)
    return groups


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) hold an
    average of the weights passed to :meth:`update_parameters`.

    The average is equally weighted (SWA) unless ``avg_fn(averaged, current,
    num_averaged) -> tensor`` or the in-place ``multi_avg_fn(averaged_list,
    current_list, num_averaged)`` says otherwise (``get_ema_multi_avg_fn`` for an EMA).
    The first update copies the weights. Without ``use_buffers`` the buffers are copied
    from ``model`` at every update (see :func:`update_bn` to recompute batch-norm
    statistics instead). ``n_averaged`` (a buffer, so in the state dict) counts updates.

    >>> import flambeau.nn as nn
    >>> from flambeau.optim.swa_utils import AveragedModel
    >>> model = nn.Linear(1, 1, bias=False)
    >>> swa_model = AveragedModel(model)
    >>> for w in [1.0, 2.0, 3.0]:  # three training steps, say
    ...     with flambeau.no_grad():
    ...         _ = model.weight.fill_(w)
    ...     swa_model.update_parameters(model)
    >>> swa_model.module.weight.detach(), swa_model.n_averaged
    (tensor([[2.]]), tensor(3))
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", flambeau.tensor(0, dtype=flambeau.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _averaged_tensors(self, model) -> tuple:
        if self.use_buffers:
            return (
                itertools.chain(self.module.parameters(), self.module.buffers()),
                itertools.chain(model.parameters(), model.buffers()),
            )
        return self.parameters(), model.parameters()

    @no_grad()
    def update_parameters(self, model) -> None:
        """Folds ``model``'s current weights into the average."""
        mine, theirs = self._averaged_tensors(model)
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        for a, c in zip(mine, theirs):  # as PyTorch: stops at the shorter
            a, c = a.detach(), c.detach().to(a.device)
            averaged.append(a)
            current.append(c)
            if first:
                a.copy_(c)
        if not first:
            self._average(averaged, current)
        if not self.use_buffers:
            for mine_b, theirs_b in zip(self.module.buffers(), model.buffers(), strict=True):
                mine_b.detach().copy_(theirs_b.detach().to(mine_b.device))
        self.n_averaged += 1

    def _average(self, averaged: list, current: list) -> None:
        if self.avg_fn is not None:
            for a, c in zip(averaged, current):
                a.copy_(self.avg_fn(a, c, self.n_averaged.to(a.device)))
            return
        for (device, _), (group_avg, group_cur) in _by_device_and_dtype(averaged, current).items():
            n = self.n_averaged.to(device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(group_avg, group_cur, n)
            else:
                # The equal-weight mean one tensor at a time, as PyTorch computes it on the
                # CPU (so the same rounding, and integer buffers truncated on copy).
                mean = get_swa_avg_fn()
                for a, c in zip(group_avg, group_cur):
                    a.copy_(mean(a, c, n))


@no_grad()
def update_bn(loader, model, device=None) -> None:
    """Recomputes the running statistics of ``model``'s batch-norm layers with one pass
    over ``loader`` (batches are tensors, or lists/tuples whose first item is the input).

    The statistics are reset and then accumulated as an equally weighted average over
    the batches (momentum None); each layer's momentum and the model's train/eval mode
    are restored afterwards.

    >>> import flambeau.nn as nn
    >>> from flambeau.optim.swa_utils import update_bn
    >>> bn = nn.BatchNorm1d(1)
    >>> loader = [flambeau.tensor([[1.0], [3.0]]), flambeau.tensor([[5.0], [7.0]])]
    >>> update_bn(loader, bn)
    >>> bn.running_mean, bn.running_var
    (tensor([4.]), tensor([2.]))
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


def _linear_anneal(t: float) -> float:
    return t


def _cosine_anneal(t: float) -> float:
    return (1 - math.cos(math.pi * t)) / 2


_ANNEAL = {"cos": _cosine_anneal, "linear": _linear_anneal}


class SWALR(LRScheduler):
    """Anneals each group's lr to its ``swa_lr`` over ``anneal_epochs`` steps (cosine or
    linear), then holds it there.

    Chainable like PyTorch's: each step recovers the lr annealing started from out of the
    current lr and the previous step's progress, so another scheduler may have moved it.

    >>> from flambeau.optim.swa_utils import SWALR
    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = SWALR(opt, swa_lr=0.1, anneal_epochs=3, anneal_strategy="linear")
    >>> for epoch in range(5):
    ...     print(round(sched.get_last_lr()[0], 4))  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    1.0
    0.7
    0.4
    0.1
    0.1
    """

    def __init__(
        self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1
    ) -> None:
        for value, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in _ANNEAL:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = _ANNEAL[anneal_strategy]

    def _progress(self, step: int) -> float:
        """The anneal function at ``step`` steps into annealing (0 before, 1 after)."""
        return self.anneal_func(max(0.0, min(1.0, step / max(1, self.anneal_epochs))))

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        before, now = self._progress(step - 1), self._progress(step)
        lrs = []
        for group in self.optimizer.param_groups:
            lr, swa_lr = group["lr"], group["swa_lr"]
            # lr = (1 - before) * start + before * swa_lr: solve for the starting lr.
            start = swa_lr if before == 1 else (lr - before * swa_lr) / (1 - before)
            lrs.append(swa_lr * now + start * (1 - now))
        return lrs

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
