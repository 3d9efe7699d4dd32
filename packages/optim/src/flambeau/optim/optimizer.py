"""The Optimizer base class: parameter groups, per-parameter state, hooks, state_dict."""

from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from itertools import chain
from typing import Any

import flambeau
from flambeau.autograd import enable_grad, no_grad
from flambeau.utils.hooks import RemovableHandle


class _RequiredParameter:
    """Marks an option every parameter group must give (no default)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

# Hooks of every optimizer's step (register_optimizer_step_pre_hook/_post_hook): the
# global pre hooks run before an optimizer's own, the global post hooks after.
_global_optimizer_pre_hooks: OrderedDict = OrderedDict()
_global_optimizer_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """Registers hook(optimizer, args, kwargs) to run before every optimizer's step; it
    may return (new_args, new_kwargs). Returns a handle whose remove() unregisters it.

    >>> from flambeau.optim.optimizer import register_optimizer_step_pre_hook
    >>> seen = []
    >>> handle = register_optimizer_step_pre_hook(lambda opt, args, kwargs: seen.append(opt))
    >>> p = flambeau.ones(1, requires_grad=True)
    >>> p.grad = flambeau.ones(1)
    >>> opt = flambeau.optim.SGD([p], lr=0.1)
    >>> opt.step()
    >>> handle.remove()
    >>> seen == [opt]
    True
    """
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """Registers hook(optimizer, args, kwargs) to run after every optimizer's step.
    Returns a handle whose remove() unregisters it.

    >>> from flambeau.optim.optimizer import register_optimizer_step_post_hook
    >>> steps = []
    >>> handle = register_optimizer_step_post_hook(lambda opt, a, k: steps.append(1))
    >>> p = flambeau.ones(1, requires_grad=True)
    >>> p.grad = flambeau.ones(1)
    >>> flambeau.optim.SGD([p], lr=0.1).step()
    >>> handle.remove()
    >>> steps
    [1]
    """
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _with_hooks(step, no_grad_step: bool):
    """Wraps a subclass's step: pre hooks, the step, post hooks. The optimizers of this
    package step without grad recording (their closures turn it back on); a user's
    subclass decides for itself, as in PyTorch."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        # A subclass that never calls Optimizer.__init__ (wrappers such as Lookahead do
        # not) has no hooks of its own: the global ones still run.
        own_pre = getattr(self, "_optimizer_step_pre_hooks", {})
        pre_hooks = chain(_global_optimizer_pre_hooks.values(), own_pre.values())
        for hook in list(pre_hooks):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, new_kwargs), "
                        f"but got {result}."
                    )
                args, kwargs = result
        if no_grad_step:
            with no_grad():
                out = step(self, *args, **kwargs)
        else:
            out = step(self, *args, **kwargs)
        self._opt_called = True
        own_post = getattr(self, "_optimizer_step_post_hooks", {})
        post_hooks = chain(own_post.values(), _global_optimizer_post_hooks.values())
        for hook in list(post_hooks):
            hook(self, args, kwargs)
        return out

    wrapper._hooked = True
    return wrapper


class Optimizer:
    """Base class of all optimizers.

    params: an iterable of tensors, or of dicts defining parameter groups (each
    with a ``params`` entry and any options that override ``defaults``).

    >>> w, b = flambeau.ones(2, requires_grad=True), flambeau.zeros(1, requires_grad=True)
    >>> opt = flambeau.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    >>> isinstance(opt, flambeau.optim.Optimizer), [g["lr"] for g in opt.param_groups]
    (True, [0.1, 0.5])
    >>> opt.zero_grad()
    """

    def __init__(self, params, defaults: dict[str, Any]):
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._opt_called = False
        if isinstance(params, flambeau.Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors "
                f"or dicts, but got {type(params).__name__}"
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _with_hooks(step, cls.__module__.startswith(__package__ + "."))

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._opt_called = False

    def __repr__(self) -> str:
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    # -- parameter groups ---------------------------------------------------------------

    def add_param_group(self, param_group: dict) -> None:
        """Adds a group of parameters with its own options (the rest from defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, flambeau.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. Please use a list "
                "instead."
            )
        else:
            param_group["params"] = list(params)
        seen = set()
        for p in param_group["params"]:
            if not isinstance(p, flambeau.Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is "
                    f"{type(p).__name__}"
                )
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
            if id(p) in seen:
                raise ValueError(
                    "optimizer contains a parameter group with duplicate parameters "
                    f"(a tensor of shape {tuple(p.shape)} is given twice)"
                )
            seen.add(id(p))
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if existing & seen:
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients ------------------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of all optimized tensors (to None, or zero in place)."""
        grads = []
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    grads.append(p.grad)
        if grads:
            with no_grad():
                flambeau._foreach_zero_(grads)

    def step(self, closure=None):
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    # -- hooks ------------------------------------------------------------------------------

    def register_step_pre_hook(self, hook) -> RemovableHandle:
        """hook(optimizer, args, kwargs) -> None or (args, kwargs), run before each step."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook) -> RemovableHandle:
        """hook(optimizer, args, kwargs), run after each step."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    # -- state_dict ----------------------------------------------------------------------

    def state_dict(self) -> dict:
        """{"state": {index: per-parameter state}, "param_groups": [options + indices]}."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {
            index[id(p)]: value
            for p, value in self.state.items()
            if isinstance(p, flambeau.Tensor) and id(p) in index
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Loads a state_dict, also into an optimizer over new parameters of the same shapes;
        floating-point state is cast to its parameter's dtype."""
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, sg in zip(groups, saved_groups):
            if len(g["params"]) != len(sg["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size "
                    "of optimizer's group"
                )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )
        state: defaultdict = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = {k: _cast(param, k, v) for k, v in value.items()}
            else:
                state[key] = _copy(value)
        new_groups = []
        for g, sg in zip(groups, saved_groups):
            new = {k: _copy(v) for k, v in sg.items() if k != "params"}
            new["params"] = g["params"]
            new_groups.append(new)
        self.state = state
        self.param_groups = new_groups

    # -- helpers for subclasses ------------------------------------------------------------

    def _init_state(self, p, make):
        """The state of p, created by make(p) on first use."""
        state = self.state[p]
        if not state:
            state.update(make(p))
        return state


def _copy(value):
    if isinstance(value, flambeau.Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    return value


def _cast(param, key, value):
    """A copy of a state value, floating point tensors cast to the parameter's dtype
    (``step`` keeps its own dtype, as in PyTorch)."""
    if isinstance(value, flambeau.Tensor):
        value = value.detach().clone()
        if key != "step" and value.is_floating_point() and param.is_floating_point():
            value = value.to(param.dtype)
        return value
    if isinstance(value, dict):
        return {k: _cast(param, key, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cast(param, key, v) for v in value]
    return value


def _closure_loss(closure):
    """Runs an optimizer's closure with grad recording on; None without a closure."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _scalar_tensor(value: float):
    """A 0-dim float32 tensor (how PyTorch keeps ``step`` and friends in the state)."""
    return flambeau.tensor(float(value), dtype=flambeau.float32)
