"""Learning-rate schedulers, as in torch.optim.lr_scheduler.

Each scheduler sets ``group["lr"]`` of its optimizer's parameter groups at every
``step()``. ``get_lr()`` is the chainable (recursive) form, which multiplies the
current lr, so that schedulers can be chained; where a closed form exists
(``_get_closed_form_lr``) it serves ``step(epoch)``.
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from math import inf  # noqa: F401  (torch.optim.lr_scheduler exposes it; programs import it)

from .optimizer import Optimizer

__all__ = [
    "LRScheduler",
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "PolynomialLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "OneCycleLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "ChainedScheduler",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the new "
    "chainable form, where available."
)

STEP_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
    "value of the learning rate schedule."
)


def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _per_group(name, optimizer, value) -> list:
    """One value per parameter group: a list of that length, or one value for all."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has "
                f"{len(value)} values, param_groups has {len(optimizer.param_groups)}."
            )
        return list(value)
    return [value] * len(optimizer.param_groups)


class LRScheduler:
    """Base class of the learning-rate schedulers: each ``step()`` sets the ``lr`` of
    every parameter group of ``optimizer`` for the next epoch.

    Constructing a scheduler records each group's ``initial_lr`` (from its ``lr``, when
    ``last_epoch`` is -1) and takes a first step, which sets the rates for epoch 0. Call
    ``scheduler.step()`` once per epoch after ``optimizer.step()``; a warning says when the
    order is reversed. Subclasses implement :meth:`get_lr`.

    Args:
        optimizer: the optimizer whose learning rates are scheduled.
        last_epoch: the index of the last epoch, to resume a schedule; -1 (the default)
            starts one. When resuming, every parameter group must hold ``initial_lr``.

    >>> class Halving(flambeau.optim.lr_scheduler.LRScheduler):
    ...     def get_lr(self):
    ...         return [base_lr * 0.5 ** self.last_epoch for base_lr in self.base_lrs]
    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = Halving(opt)
    >>> for epoch in range(3):
    ...     print(sched.get_last_lr())  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    [1.0]
    [0.5]
    [0.25]
    """

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming an optimizer"
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self.step()

    def get_lr(self) -> list[float]:
        """The learning rate of each parameter group for epoch ``last_epoch``, computed from
        the current rates and the schedule. Subclasses implement it; call
        :meth:`get_last_lr` to read the rates in use."""
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rates the last step() set."""
        return self._last_lr

    def state_dict(self) -> dict:
        """The scheduler's state as a dict: every attribute except the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores the state :meth:`state_dict` returned."""
        self.__dict__.update(state_dict)

    def step(self, epoch=None):
        """Advances the schedule by one epoch and sets every group's ``lr``. Passing
        ``epoch`` (deprecated, with a warning) jumps to that epoch instead, using the
        schedule's closed form when it has one."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(STEP_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


_LRScheduler = LRScheduler  # the name before PyTorch 2.0


def _lambdas(optimizer, lr_lambda, name="lr_lambdas") -> list:
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(f"Expected {len(optimizer.param_groups)} {name}, but got {len(lr_lambda)}")
    return list(lr_lambda)


class _LambdaState:
    """state_dict for schedulers holding functions: only callable objects' state is saved."""

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaState, LRScheduler):
    """lr = initial lr * lr_lambda(epoch).

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = flambeau.optim.lr_scheduler.LambdaLR(opt, lr_lambda=lambda epoch: 1 / (epoch + 1))
    >>> for epoch in range(4):
    ...     print(sched.get_last_lr())  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    [1.0]
    [0.5]
    [0.3333333333333333]
    [0.25]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        _check_optimizer(optimizer)
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """lr *= lr_lambda(epoch) at every step after the first.

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = flambeau.optim.lr_scheduler.MultiplicativeLR(opt, lr_lambda=lambda epoch: 0.5)
    >>> for epoch in range(4):
    ...     print(sched.get_last_lr())  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    [1.0]
    [0.5]
    [0.25]
    [0.125]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        _check_optimizer(optimizer)
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch > 0:
            return [g["lr"] * fn(self.last_epoch) for fn, g in zip(self.lr_lambdas, groups)]
        return [g["lr"] for g in groups]


class StepLR(LRScheduler):
    """lr = initial lr * gamma ** (epoch // step_size).

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = flambeau.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> for epoch in range(5):
    ...     print(sched.get_last_lr())  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    [1.0]
    [1.0]
    [0.5]
    [0.5]
    [0.25]
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr = initial lr * gamma ** (number of milestones reached).

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = flambeau.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> for epoch in range(5):
    ...     print(sched.get_last_lr())  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    [1.0]
    [0.5]
    [0.5]
    [0.25]
    [0.25]
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch not in self.milestones:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma ** self.milestones[self.last_epoch] for g in groups]

    def _get_closed_form_lr(self):
        reached = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma**reached for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr = initial lr * factor until total_iters, then the initial lr.

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = flambeau.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> for epoch in range(4):
    ...     print(sched.get_last_lr())  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    [0.5]
    [0.5]
    [1.0]
    [1.0]
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in groups]
        if self.last_epoch != self.total_iters:
            return [g["lr"] for g in groups]
        return [g["lr"] * (1.0 / self.factor) for g in groups]

    def _get_closed_form_lr(self):
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor on the initial lr goes linearly from start_factor to end_factor over
    total_iters steps.

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = flambeau.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> for epoch in range(5):
    ...     print(sched.get_last_lr())  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    [0.25]
    [0.5]
    [0.75]
    [1.0]
    [1.0]
    """

    def __init__(
        self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1
    ):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or "
                "equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in groups]
        if self.last_epoch > self.total_iters:
            return [g["lr"] for g in groups]
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [g["lr"] * ratio for g in groups]

    def _get_closed_form_lr(self):
        frac = min(self.total_iters, self.last_epoch) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * frac
        return [base * factor for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = initial lr * gamma ** epoch.

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = flambeau.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> for epoch in range(4):
    ...     print(sched.get_last_lr())  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    [1.0]
    [0.5]
    [0.25]
    [0.125]
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = initial lr * (1 - min(epoch, total_iters) / total_iters) ** power.

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = flambeau.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
    >>> for epoch in range(6):
    ...     print(sched.get_last_lr())  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    [1.0]
    [0.5625]
    [0.25]
    [0.0625]
    [0.0]
    [0.0]
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0 or self.last_epoch > self.total_iters:
            return [g["lr"] for g in groups]
        t, n = self.last_epoch, self.total_iters
        decay = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [g["lr"] * decay for g in groups]

    def _get_closed_form_lr(self):
        frac = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (1.0 - frac) ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (initial lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2.

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = flambeau.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
    >>> for epoch in range(5):
    ...     print(round(sched.get_last_lr()[0], 4))  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    1.0
    0.8536
    0.5
    0.1464
    0.0
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):  # noqa: N803
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        t, T, lo = self.last_epoch, self.T_max, self.eta_min
        if t == 0:
            return [g["lr"] for g in groups]
        if self._step_count == 1 and t > 0:
            return [
                lo + (base - lo) * (1 + math.cos(t * math.pi / T)) / 2 for base in self.base_lrs
            ]
        if (t - 1 - T) % (2 * T) == 0:
            return [
                g["lr"] + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                for base, g in zip(self.base_lrs, groups)
            ]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (g["lr"] - lo) + lo for g in groups]

    def _get_closed_form_lr(self):
        t, T, lo = self.last_epoch, self.T_max, self.eta_min
        return [lo + (base - lo) * (1 + math.cos(math.pi * t / T)) / 2 for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every T_i epochs, T_i growing by T_mult (SGDR).

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = flambeau.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> for epoch in range(5):
    ...     print(sched.get_last_lr())  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    [1.0]
    [0.5]
    [1.0]
    [0.5]
    [1.0]
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):  # noqa: N803
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lo = self.eta_min
        c = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [lo + (base - lo) * c for base in self.base_lrs]

    def step(self, epoch=None):
        """Advances the schedule by one epoch and sets every group's ``lr``. Passing
        ``epoch`` (deprecated, with a warning) jumps to that epoch instead, using the
        schedule's closed form when it has one."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(STEP_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


def _momentum_setup(sched, optimizer, cycle_momentum, base_momentum, max_momentum, last_epoch):
    """Shared by CyclicLR and OneCycleLR: cycle 'momentum' (or Adam's beta1) inversely to lr."""
    sched.cycle_momentum = cycle_momentum
    if not cycle_momentum:
        return
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
        )
    sched.use_beta1 = "betas" in optimizer.defaults
    sched.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
    sched.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for m_max, m_base, group in zip(
            sched.max_momentums, sched.base_momentums, optimizer.param_groups
        ):
            _set_momentum(sched, group, m_max)
            group["max_momentum"] = m_max
            group["base_momentum"] = m_base


def _set_momentum(sched, group, momentum):
    if sched.use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


class CyclicLR(LRScheduler):
    """lr cycles between base_lr and max_lr (Smith, 2017): triangular, triangular2,
    exp_range or a custom scale_fn; momentum cycles the other way.

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = flambeau.optim.lr_scheduler.CyclicLR(opt, base_lr=0.25, max_lr=1.0, step_size_up=2)
    >>> for epoch in range(6):
    ...     print(sched.get_last_lr())  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    [0.25]
    [0.625]
    [1.0]
    [0.625]
    [0.25]
    [0.625]
    """

    def __init__(
        self,
        optimizer,
        base_lr,
        max_lr,
        step_size_up=2000,
        step_size_down=None,
        mode="triangular",
        gamma=1.0,
        scale_fn=None,
        scale_mode="cycle",
        cycle_momentum=True,
        base_momentum=0.8,
        max_momentum=0.9,
        last_epoch=-1,
    ):
        _check_optimizer(optimizer)
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        if scale_fn is None:
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        _momentum_setup(self, optimizer, cycle_momentum, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x):
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale = x / self.step_ratio
        else:
            scale = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [
            base + (top - base) * scale * self.scale_fn(at)
            for base, top in zip(self.base_lrs, self.max_lrs)
        ]
        if self.cycle_momentum:
            for group, m_base, m_max in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums
            ):
                _set_momentum(self, group, m_max - (m_max - m_base) * scale * self.scale_fn(at))
        return lrs

    def state_dict(self):
        state = super().state_dict()
        state.pop("_scale_fn_custom", None)  # functions are not saved
        return state


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin, 2017): lr warms up from max_lr / div_factor to
    max_lr, then anneals to max_lr / div_factor / final_div_factor.

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = flambeau.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=6)
    >>> for epoch in range(6):
    ...     print(round(sched.get_last_lr()[0], 4))  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    0.04
    0.9944
    0.8117
    0.4626
    0.1335
    0.0
    """

    def __init__(
        self,
        optimizer,
        max_lr,
        total_steps=None,
        epochs=None,
        steps_per_epoch=None,
        pct_start=0.3,
        anneal_strategy="cos",
        cycle_momentum=True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor=25.0,
        final_div_factor=1e4,
        three_phase=False,
        last_epoch=-1,
    ):
        _check_optimizer(optimizer)
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
                )
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self.anneal_strategy = anneal_strategy
        n = self.total_steps
        if three_phase:
            self._phases = [
                (float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (
                    float(2 * pct_start * n) - 2,
                    "max_lr",
                    "initial_lr",
                    "base_momentum",
                    "max_momentum",
                ),
                (n - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._phases = [
                (float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (n - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        _momentum_setup(self, optimizer, cycle_momentum, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        t = self.last_epoch
        if t > self.total_steps:
            raise ValueError(
                f"Tried to step {t} times. The specified number of total steps is "
                f"{self.total_steps}"
            )
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr_a, lr_b, m_a, m_b) in enumerate(self._phases):
                if t <= end or i == len(self._phases) - 1:
                    pct = (t - start) / (end - start)
                    lrs.append(self._anneal(group[lr_a], group[lr_b], pct))
                    if self.cycle_momentum:
                        _set_momentum(self, group, self._anneal(group[m_a], group[m_b], pct))
                    break
                start = end
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Reduces the lr by factor when a metric has stopped improving for patience epochs.

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = flambeau.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1)
    >>> for val_loss in [1.0, 0.5, 0.6, 0.6, 0.6]:
    ...     opt.step()
    ...     sched.step(val_loss)  # two epochs without improvement: halve the lr
    ...     print(sched.get_last_lr())
    [1.0]
    [1.0]
    [1.0]
    [0.5]
    [0.5]
    """

    def __init__(
        self,
        optimizer,
        mode="min",
        factor=0.1,
        patience=10,
        threshold=1e-4,
        threshold_mode="rel",
        cooldown=0,
        min_lr=0,
        eps=1e-8,
    ):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        _check_optimizer(optimizer)
        self.factor = factor
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(
                    f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}"
                )
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.last_epoch = 0
        self._step_count = 1
        self._last_lr = [group["lr"] for group in optimizer.param_groups]
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def is_better(self, a, best) -> bool:
        if self.mode == "min":
            edge = (
                best * (1.0 - self.threshold)
                if self.threshold_mode == "rel"
                else best - self.threshold
            )
            return a < edge
        edge = (
            best * (self.threshold + 1.0) if self.threshold_mode == "rel" else best + self.threshold
        )
        return a > edge

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def step(self, metrics, epoch=None):
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _reduce_lr(self):
        for i, group in enumerate(self.optimizer.param_groups):
            old = float(group["lr"])
            new = max(old * self.factor, self.min_lrs[i])
            if old - new > self.eps:
                group["lr"] = new

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


def _check_schedulers(kind, schedulers, optimizer):
    if len(schedulers) < 1:
        raise ValueError(f"{kind} expects at least one scheduler, but got no scheduler.")
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{kind} at index {i} should have `optimizer` as its attribute.")
        if s.optimizer is not optimizer:
            raise ValueError(
                f"{kind} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(s).__name__} at index {i} with a different optimizer"
            )


class SequentialLR(LRScheduler):
    """Runs schedulers one after another, switching at the milestones.

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> warmup = flambeau.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> decay = flambeau.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched = flambeau.optim.lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[2])
    >>> for epoch in range(5):
    ...     print(sched.get_last_lr())  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    [0.5]
    [0.5]
    [1.0]
    [0.5]
    [0.25]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        _check_optimizer(optimizer)
        _check_schedulers("SequentialLR", schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to {len(milestones)}"
            )
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Back to the initial lrs, undo the schedulers' own first steps, then take the
        # first scheduler's first step alone.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for s in self._schedulers:
            s.last_epoch -= 1
        self._schedulers[0]._initial_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            with warnings.catch_warnings():  # the restart uses the closed form on purpose
                warnings.simplefilter("ignore", UserWarning)
                scheduler.step(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for s, sd in zip(self._schedulers, saved):
            s.load_state_dict(sd)


class ChainedScheduler(LRScheduler):
    """Steps every scheduler at each step (their chainable forms multiply).

    >>> opt = flambeau.optim.SGD([flambeau.zeros(1, requires_grad=True)], lr=1.0)
    >>> warmup = flambeau.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> decay = flambeau.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched = flambeau.optim.lr_scheduler.ChainedScheduler([warmup, decay])
    >>> for epoch in range(4):
    ...     print(sched.get_last_lr())  # the lr of this epoch
    ...     opt.step()
    ...     sched.step()
    [0.5]
    [0.25]
    [0.25]
    [0.125]
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(
                "ChainedScheduler expects at least one scheduler to be chained, but got no "
                "scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers("ChainedScheduler", schedulers, optimizer)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]

    def step(self):
        for s in self._schedulers:
            s.step()
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]

    state_dict = SequentialLR.state_dict
    load_state_dict = SequentialLR.load_state_dict
