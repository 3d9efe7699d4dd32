"""Pruning: zeroing parts of a module's tensor through a mask, as ``torch.nn.utils.prune``.

Pruning ``module.weight`` moves the parameter to ``module.weight_orig``, stores the
mask as the buffer ``module.weight_mask`` and makes ``module.weight`` the plain
tensor ``weight_orig * weight_mask``, recomputed by a forward pre-hook (the pruning
method itself) before every call, so gradients reach ``weight_orig``. Pruning the
same tensor again combines the masks in a :class:`PruningContainer`; :func:`remove`
makes the pruning permanent.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

import flambeau

from ._prune_checks import (
    _compute_norm,
    _compute_nparams_toprune,
    _validate_pruning_amount,
    _validate_pruning_amount_init,
    _validate_pruning_dim,
    _validate_structured_pruning,
)
from .convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod",
    "PruningContainer",
    "Identity",
    "RandomUnstructured",
    "L1Unstructured",
    "RandomStructured",
    "LnStructured",
    "CustomFromMask",
    "identity",
    "random_unstructured",
    "l1_unstructured",
    "random_structured",
    "ln_structured",
    "global_unstructured",
    "custom_from_mask",
    "remove",
    "is_pruned",
]


def _drop_forward_pre_hook(module, key) -> None:
    del module._forward_pre_hooks[key]
    module._forward_pre_hooks_with_kwargs.pop(key, None)


def _pruning_hooks(module, name: str) -> list:
    """(key, method) of the pruning methods acting on ``module.<name>``."""
    return [
        (key, hook)
        for key, hook in module._forward_pre_hooks.items()
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name
    ]


def _units_to_prune(amount, units: int) -> int:
    """How many of `units` entries or channels `amount` prunes, checked."""
    count = _compute_nparams_toprune(amount, units)
    _validate_pruning_amount(count, units)
    return count


def _channel_mask(t, dim: int, channels):
    """A mask shaped like `t`: ones on the `channels` (indices or a boolean mask) along
    `dim`, zeros elsewhere."""
    mask = flambeau.zeros_like(t)
    index = [slice(None)] * t.dim()
    index[dim] = channels
    mask[tuple(index)] = 1
    return mask


class BasePruningMethod(ABC):
    """Base class of the pruning methods: a subclass defines :meth:`compute_mask`.

    Applied to a module, the method is also the forward pre-hook that recomputes the
    pruned tensor from ``<name>_orig`` and ``<name>_mask``.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils import prune
    >>> class NegativeUnstructured(prune.BasePruningMethod):
    ...     PRUNING_TYPE = "unstructured"
    ...     def compute_mask(self, t, default_mask):
    ...         return default_mask * (t >= 0).to(default_mask.dtype)
    >>> layer = nn.Linear(3, 1)
    >>> with flambeau.no_grad():
    ...     _ = layer.weight.copy_(flambeau.tensor([[1.0, -2.0, 3.0]]))
    >>> _ = NegativeUnstructured.apply(layer, "weight")
    >>> layer.weight_mask
    tensor([[1., 0., 1.]])
    """

    _tensor_name: str

    def __call__(self, module, inputs):
        """The forward pre-hook: sets ``module.<name>`` to the masked original."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for `t` (the importance scores), on top of `default_mask`
        (the mask of the earlier pruning, ones at first); same shape as `t`."""

    def apply_mask(self, module):
        """``module.<name>_orig`` times ``module.<name>_mask``: the pruned tensor.

        >>> import flambeau.nn as nn
        >>> from flambeau.nn.utils import prune
        >>> layer = nn.Linear(2, 1)
        >>> method = prune.CustomFromMask.apply(layer, "bias", flambeau.tensor([0.0]))
        >>> method.apply_mask(layer)
        tensor([0.], grad_fn=<MulBackward0>)
        """
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prunes ``module.<name>`` with ``cls(*args, **kwargs)`` and returns the
        method now hooked on the module: that one, or a :class:`PruningContainer`
        combining it with the earlier pruning of the same tensor.

        `importance_scores` (shaped like the tensor) decide what is pruned; the
        tensor itself by default.

        >>> import flambeau.nn as nn
        >>> from flambeau.nn.utils import prune
        >>> layer = nn.Linear(4, 2)
        >>> prune.L1Unstructured.apply(layer, "weight", amount=2)  # doctest: +ELLIPSIS
        <flambeau.nn.utils.prune.L1Unstructured object at ...>
        >>> int((layer.weight_mask == 0).sum())
        2
        """
        new_method = cls(*args, **kwargs)
        new_method._tensor_name = name
        method = _combine_with_earlier_pruning(module, name, new_method)

        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif importance_scores.shape != orig.shape:
            raise AssertionError(
                f"importance_scores should have the same shape as parameter {name} of "
                f"{module}, got {importance_scores.shape} vs {orig.shape}"
            )

        first_pruning = not isinstance(method, PruningContainer)
        if first_pruning:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = flambeau.ones_like(orig)
        else:
            default_mask = (
                getattr(module, name + "_mask")
                .detach()
                .clone(memory_format=flambeau.contiguous_format)
            )

        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            # Put the parameter back where it was (a later pruning only lost its mask).
            if first_pruning:
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """`t` times the mask :meth:`compute_mask` gives for `importance_scores`
        (`t` by default) on top of `default_mask` (ones by default).

        >>> from flambeau.nn.utils import prune
        >>> prune.L1Unstructured(amount=1).prune(flambeau.tensor([3.0, -1.0, 2.0]))
        tensor([3., -0., 2.])
        """
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError(
                "importance_scores should have the same shape as tensor t, "
                f"got {importance_scores.shape} vs {t.shape}"
            )
        if default_mask is None:
            default_mask = flambeau.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module) -> None:
        """Makes the pruning permanent: ``module.<name>`` becomes a parameter again,
        holding the pruned values; ``<name>_orig`` and ``<name>_mask`` go.

        The module keeps this method as a hook: use :func:`remove` to drop both.

        >>> import flambeau.nn as nn
        >>> from flambeau.nn.utils import prune
        >>> layer = nn.Linear(2, 3)
        >>> method = prune.Identity.apply(layer, "bias")
        >>> method.remove(layer)
        >>> sorted(name for name, _ in layer.named_parameters())
        ['bias', 'weight']
        """
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        name = self._tensor_name
        pruned = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = pruned.data
        delattr(module, name + "_orig")
        delattr(module, name + "_mask")
        setattr(module, name, orig)


def _combine_with_earlier_pruning(module, name, method):
    """Unhooks the pruning already acting on ``module.<name>``, if any, and returns
    `method` alone or a container that applies it after that earlier pruning."""
    earlier = _pruning_hooks(module, name)
    if len(earlier) > 1:
        raise AssertionError(
            f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
            f"{module}. Use a PruningContainer."
        )
    if not earlier:
        return method
    key, old_method = earlier[0]
    _drop_forward_pre_hook(module, key)
    if isinstance(old_method, PruningContainer):
        old_method.add_pruning_method(method)
        return old_method
    container = PruningContainer(old_method)
    container.add_pruning_method(method)
    return container


class PruningContainer(BasePruningMethod):
    """The successive pruning methods of one tensor (iterative pruning).

    Its mask is the last method's, computed on what the earlier masks left: the
    entries still unpruned (``PRUNING_TYPE`` "unstructured"), the channels not
    pruned entirely ("structured") or everything ("global").

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils import prune
    >>> layer = nn.Linear(5, 2)
    >>> _ = prune.L1Unstructured.apply(layer, "weight", amount=3)
    >>> container = prune.RandomUnstructured.apply(layer, "weight", amount=3)
    >>> [type(method).__name__ for method in container]
    ['L1Unstructured', 'RandomUnstructured']
    >>> int((layer.weight_mask == 0).sum())
    6
    """

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        """Appends `method`, which must prune the container's tensor.

        >>> from flambeau.nn.utils import prune
        >>> first = prune.L1Unstructured(amount=1)
        >>> first._tensor_name = "weight"
        >>> container = prune.PruningContainer(first)
        >>> second = prune.Identity()
        >>> second._tensor_name = "weight"
        >>> container.add_pruning_method(second)
        >>> len(container)
        2
        """
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. "
                f"Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """`default_mask` with the last method's mask applied to the part of `t` its
        ``PRUNING_TYPE`` lets it prune."""
        method = self._pruning_methods[-1]
        region = _prunable_region(method, t, default_mask)
        new_mask = default_mask.to(dtype=t.dtype)
        partial_mask = method.compute_mask(t[region], default_mask=default_mask[region])
        new_mask[region] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


def _prunable_region(method, t, mask):
    """The index of the part of `t` that `method` may still prune, given `mask`."""
    kind = method.PRUNING_TYPE
    if kind == "unstructured":
        return mask == 1
    if kind == "global":
        return (slice(None),) * t.dim()
    if kind != "structured":
        raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
    if not hasattr(method, "dim"):
        raise AttributeError(
            'Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` defined.'
        )
    dim = method.dim + t.dim() if method.dim < 0 else method.dim
    if dim < 0:
        raise IndexError(f"Index is out of bounds for tensor with dimensions {t.dim()}")
    # The channels with anything left unpruned.
    live_channels = mask.sum(dim=[d for d in range(t.dim()) if d != dim]) != 0
    region = [slice(None)] * t.dim()
    region[dim] = live_channels
    return tuple(region)


class Identity(BasePruningMethod):
    """Prunes nothing: sets up the pruning reparametrization with a mask of ones.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils import prune
    >>> layer = nn.Linear(2, 3)
    >>> _ = prune.Identity.apply(layer, "bias")
    >>> layer.bias_mask
    tensor([1., 1., 1.])
    """

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        """`default_mask` unchanged."""
        return default_mask

    @classmethod
    def apply(cls, module, name):
        """Sets up pruning of ``module.<name>`` without pruning anything."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` of the unpruned entries, chosen at random: a count if an int,
    a fraction of the entries if a float in [0, 1].

    >>> from flambeau.nn.utils import prune
    >>> pruned = prune.RandomUnstructured(amount=0.5).prune(flambeau.ones(10))
    >>> int((pruned == 0).sum())
    5
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        """`default_mask` with `amount` random entries of `t` set to zero."""
        count = _units_to_prune(self.amount, t.nelement())
        mask = default_mask.clone(memory_format=flambeau.contiguous_format)
        if count != 0:
            draws = flambeau.rand_like(t).reshape(-1)
            mask.view(-1)[flambeau.topk(draws, k=count).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        """Prunes `amount` random entries of ``module.<name>``."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes `amount` of the unpruned entries, those of smallest absolute value: a
    count if an int, a fraction of the entries if a float in [0, 1].

    >>> from flambeau.nn.utils import prune
    >>> prune.L1Unstructured(amount=2).prune(flambeau.tensor([0.5, -3.0, 0.1, 2.0]))
    tensor([ 0., -3.,  0.,  2.])
    """

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        """`default_mask` with the `amount` entries of smallest ``|t|`` set to zero."""
        count = _units_to_prune(self.amount, t.nelement())
        mask = default_mask.clone(memory_format=flambeau.contiguous_format)
        if count != 0:
            magnitudes = flambeau.abs(t.detach()).reshape(-1)
            smallest = flambeau.topk(magnitudes, k=count, largest=False).indices
            mask.view(-1)[smallest] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        """Prunes the `amount` entries of ``module.<name>`` (or of
        `importance_scores`) of smallest absolute value."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` whole channels along `dim`, chosen at random: a count if an
    int, a fraction of the channels if a float in [0, 1].

    >>> from flambeau.nn.utils import prune
    >>> pruned = prune.RandomStructured(amount=2, dim=0).prune(flambeau.ones(4, 3))
    >>> (pruned.sum(dim=1) == 0).tolist().count(True)
    2
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """`default_mask` times a mask zeroing `amount` random channels of `t` along
        ``dim``; raises IndexError if `t` has no such dimension."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        channels = t.shape[self.dim]
        count = _units_to_prune(self.amount, channels)
        if count == 0:
            return default_mask
        draws = flambeau.rand(channels, device=t.device)
        # The channels drawing the `count` lowest numbers go.
        threshold = flambeau.kthvalue(draws, k=count).values
        mask = _channel_mask(t, self.dim, draws > threshold)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        """Prunes `amount` random channels of ``module.<name>`` along `dim`."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    r"""Prunes `amount` whole channels along `dim`, those of smallest L\ `n` norm: a
    count if an int, a fraction of the channels if a float in [0, 1]. `n` is any
    ``p`` of :func:`flambeau.norm` (an int, a float, ``inf``, ``-inf``, ``'fro'``).

    >>> from flambeau.nn.utils import prune
    >>> w = flambeau.tensor([[1.0, 2.0], [0.1, 0.2], [3.0, -4.0]])
    >>> prune.LnStructured(amount=1, n=2, dim=0).prune(w)
    tensor([[ 1.,  2.],
            [ 0.,  0.],
            [ 3., -4.]])
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """`default_mask` times a mask zeroing the `amount` channels of `t` along
        ``dim`` of smallest L\\ ``n`` norm; raises IndexError if `t` has no such
        dimension."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        channels = t.shape[self.dim]
        count = _units_to_prune(self.amount, channels)
        norms = _compute_norm(t.detach(), self.n, self.dim)
        kept = flambeau.topk(norms, k=channels - count, largest=True).indices
        if count == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, kept)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        """Prunes the `amount` channels of ``module.<name>`` (or of
        `importance_scores`) along `dim` of smallest L\\ `n` norm."""
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Prunes where a given `mask` is zero.

    >>> from flambeau.nn.utils import prune
    >>> prune.CustomFromMask(flambeau.tensor([1, 0, 1])).prune(flambeau.tensor([4.0, 5.0, 6.0]))
    tensor([4., 0., 6.])
    """

    PRUNING_TYPE = "global"

    def __init__(self, mask) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        """`default_mask` times the given mask."""
        if default_mask.shape != self.mask.shape:
            raise AssertionError(
                f"default_mask shape {default_mask.shape} must match "
                f"self.mask shape {self.mask.shape}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        """Prunes ``module.<name>`` where `mask` is zero."""
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Sets up the pruning of ``module.<name>`` (``<name>_orig``, ``<name>_mask``, the
    hook) with a mask of ones, pruning nothing; returns `module`.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils import prune
    >>> m = prune.identity(nn.Linear(2, 3), "bias")
    >>> m.bias_mask
    tensor([1., 1., 1.])
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prunes `amount` random unpruned entries of ``module.<name>`` (a count if an int,
    a fraction if a float); returns `module`.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils import prune
    >>> m = prune.random_unstructured(nn.Linear(2, 3), "weight", amount=1)
    >>> flambeau.sum(m.weight_mask == 0)
    tensor(1)
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prunes the `amount` unpruned entries of ``module.<name>`` of smallest absolute
    value (or of smallest `importance_scores`); returns `module`.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils import prune
    >>> m = prune.l1_unstructured(nn.Linear(2, 3), "weight", amount=0.2)
    >>> list(m.state_dict().keys())
    ['bias', 'weight_orig', 'weight_mask']
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prunes `amount` random unpruned channels of ``module.<name>`` along `dim`;
    returns `module`.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils import prune
    >>> m = prune.random_structured(nn.Linear(5, 3), "weight", amount=3, dim=1)
    >>> int(sum(flambeau.sum(m.weight, dim=0) == 0))
    3
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    r"""Prunes the `amount` unpruned channels of ``module.<name>`` along `dim` of
    smallest L\ `n` norm (or of smallest `importance_scores` norm); returns `module`.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils import prune
    >>> m = prune.ln_structured(nn.Conv2d(5, 3, 2), "weight", amount=0.3, dim=1, n=float("-inf"))
    >>> int((m.weight_mask.sum(dim=(0, 2, 3)) == 0).sum())
    2
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prunes the ``(module, name)`` tensors of `parameters` together: `pruning_method`
    (an "unstructured" method class, built with `kwargs` such as ``amount``) picks
    the entries across all of them. `importance_scores` maps ``(module, name)`` to
    the scores to use instead of that tensor.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils import prune
    >>> net = nn.Sequential(nn.Linear(10, 4), nn.Linear(4, 1))
    >>> prune.global_unstructured(
    ...     [(net[0], "weight"), (net[1], "weight")],
    ...     pruning_method=prune.L1Unstructured,
    ...     amount=10,
    ... )
    >>> print(sum(nn.utils.parameters_to_vector(net.buffers()) == 0))
    tensor(10)
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)  # walked three times: a generator would run dry
    if importance_scores is None:
        importance_scores = {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")

    # Every tensor flattened into one, so the method chooses across all of them.
    all_scores = parameters_to_vector(
        [
            importance_scores.get((module, name), getattr(module, name))
            for module, name in parameters
        ]
    )
    all_masks = parameters_to_vector(
        [
            getattr(module, name + "_mask", flambeau.ones_like(getattr(module, name)))
            for module, name in parameters
        ]
    )
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found '
            f"method {pruning_method} of type {method.PRUNING_TYPE}"
        )
    container = PruningContainer(method)
    final_mask = container.compute_mask(all_scores, all_masks)

    start = 0
    for module, name in parameters:
        tensor = getattr(module, name)
        stop = start + tensor.numel()
        custom_from_mask(module, name, mask=final_mask[start:stop].view_as(tensor))
        start = stop


def custom_from_mask(module, name, mask):
    """Prunes ``module.<name>`` where `mask` is zero; returns `module`.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils import prune
    >>> m = prune.custom_from_mask(nn.Linear(5, 3), name="bias", mask=flambeau.tensor([0, 1, 0]))
    >>> m.bias_mask
    tensor([0., 1., 0.])
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Makes the pruning of ``module.<name>`` permanent: it becomes a parameter holding
    the pruned values, and ``<name>_orig``, ``<name>_mask`` and the hook go. Returns
    `module`; raises ValueError if ``module.<name>`` is not pruned.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils import prune
    >>> m = prune.random_unstructured(nn.Linear(5, 7), name="weight", amount=0.2)
    >>> m = prune.remove(m, name="weight")
    >>> sorted(m.state_dict().keys()), prune.is_pruned(m)
    (['bias', 'weight'], False)
    """
    for key, method in _pruning_hooks(module, name):
        method.remove(module)
        _drop_forward_pre_hook(module, key)
        return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module) -> bool:
    """Whether `module` or one of its submodules has a pruning hook.

    >>> import flambeau.nn as nn
    >>> from flambeau.nn.utils import prune
    >>> m = nn.Sequential(nn.Linear(5, 7))
    >>> prune.is_pruned(m)
    False
    >>> _ = prune.random_unstructured(m[0], name="weight", amount=0.2)
    >>> prune.is_pruned(m)
    True
    """
    return any(
        isinstance(hook, BasePruningMethod)
        for _, submodule in module.named_modules()
        for hook in submodule._forward_pre_hooks.values()
    )
