"""swap_in_optimizer_params_and_state: run an optimizer on other tensors for a while."""

from __future__ import annotations

import contextlib
from collections import defaultdict

import flambeau

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state) -> dict:
    if not isinstance(state, dict):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed "
            f"parameter ids to per-param state dicts, got {type(state).__name__}."
        )
    if any(isinstance(k, flambeau.Tensor) for k in state):
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids."
        )
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(
            f"{_NAME} requires per-parameter optimizer state entries to be dictionaries."
        )
    return state


def _check_group(index: int, live: dict, given) -> list:
    """The packed ids of a swap-in group, after checking it against the live group."""
    if not isinstance(given, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = given.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries "
            "keyed by packed parameter ids."
        )
    if len(ids) != len(live["params"]):
        raise RuntimeError(
            f"swapin_optim_state param group {index} has a different number of params than "
            "the live optimizer param group."
        )
    only_given = [k for k in given if k not in live]
    only_live = [k for k in live if k not in given]
    if only_given or only_live:
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match "
            f"the live optimizer group keys for group {index}. Keys only in swap-in: "
            f"{only_given}. Keys only in live: {only_live}."
        )
    return ids


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters: dict, swapin_optim_state):
    """Inside the block, ``optimizer`` works on other parameters and state; on exit its
    own come back.

    ``swapin_parameters`` gives the stand-in tensors in the order of the optimizer's
    parameters (its values are used, as ``model.named_parameters()`` orders them);
    ``swapin_optim_state`` is shaped like ``optimizer.state_dict()``: its groups'
    options replace the live groups' options, and its per-parameter state (keyed by the
    packed ids) becomes the state of the stand-ins. In-place changes to those state
    tensors show in ``swapin_optim_state``; anything else done to the state is dropped.
    The optimizer must already have state (have stepped once).

    >>> p = flambeau.tensor([1.0], requires_grad=True)
    >>> opt = flambeau.optim.SGD([p], lr=0.1, momentum=0.9)
    >>> p.grad = flambeau.tensor([1.0]); opt.step()
    >>> q = flambeau.tensor([5.0], requires_grad=True); q.grad = flambeau.tensor([1.0])
    >>> with flambeau.optim.swap_in_optimizer_params_and_state(opt, {"q": q}, opt.state_dict()):
    ...     opt.step()  # steps q, with p's momentum
    >>> q, p
    (tensor([4.8100], requires_grad=True), tensor([0.9000], requires_grad=True))
    """
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _check_state(swapin_optim_state.get("state"))
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group "
            f"dicts, got {type(groups).__name__}."
        )
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError(
            "swapin_optim_state has a different number of parameter groups than the live optimizer."
        )
    tensors = list(swapin_parameters.values())
    plan, offset, seen = [], 0, set()
    for index, (live, given) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _check_group(index, live, given)
        seen.update(ids)
        if offset + len(ids) > len(tensors):
            raise RuntimeError(
                f"{_NAME} requires the explicit parameter state to match "
                "optimizer.param_groups ordering."
            )
        plan.append((live, given, tensors[offset : offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed "
            f"parameter ids from param_groups[*]['params']; got extra keys {extra!r}."
        )

    own_state = optimizer.state
    # Shallow copies: on exit each group dict gets its own contents back (the same
    # ``params`` list object included).
    own_groups = [dict(g) for g in optimizer.param_groups]
    try:
        swapped: defaultdict = defaultdict(dict)
        for live, given, params in plan:
            live["params"] = params
            live.update((k, v) for k, v in given.items() if k != "params")
            for p, pid in zip(params, given["params"]):
                # A copy of the dict: its tensors are shared (in-place updates show), new
                # entries stay here.
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, own_groups):
            group.clear()
            group.update(snapshot)
        optimizer.state = own_state
