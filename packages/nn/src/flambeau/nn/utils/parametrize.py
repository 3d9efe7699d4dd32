"""Parametrizations: a module's tensor computed on access from "original" tensors.

``register_parametrization(module, "weight", P())`` moves ``module.weight`` to
``module.parametrizations.weight.original`` and makes ``module.weight`` a
property returning ``P()(original)``. The module's class is replaced by a
subclass ("ParametrizedLinear") that holds the properties, so other instances
of the original class are unaffected.
"""

from __future__ import annotations

import copy
from contextlib import contextmanager

from flambeau import Tensor, no_grad

from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = [
    "cached",
    "ParametrizationList",
    "register_parametrization",
    "is_parametrized",
    "remove_parametrizations",
    "type_before_parametrizations",
]

_cache_enabled = 0
_cache: dict = {}


@contextmanager
def cached():
    """Within this context each parametrized tensor is computed once and reused.

    >>> import flambeau.nn as nn
    >>> import flambeau.nn.utils.parametrize as P
    >>> class Symmetric(nn.Module):
    ...     def forward(self, X):
    ...         return X.triu() + X.triu(1).T
    >>> layer = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    >>> with P.cached():
    ...     same = layer.weight is layer.weight
    >>> same, layer.weight is layer.weight
    (True, False)
    """
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _set_original(owner: Module, name: str, value) -> None:
    """Sets owner's tensor `name` to `value`: in place when shapes and dtypes agree."""
    current = getattr(owner, name)
    if tuple(current.shape) == tuple(value.shape) and current.dtype == value.dtype:
        with no_grad():
            current.copy_(value)
        return
    if isinstance(current, Parameter):
        setattr(owner, name, Parameter(value, current.requires_grad))
    else:
        owner._buffers[name] = value


def _register_tensor(module: Module, name: str, tensor) -> None:
    if isinstance(tensor, Parameter):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to its original(s).

    >>> import flambeau.nn as nn
    >>> import flambeau.nn.utils.parametrize as P
    >>> class Double(nn.Module):
    ...     def forward(self, X):
    ...         return 2 * X
    >>> layer = P.register_parametrization(nn.Linear(2, 2), "weight", Double())
    >>> plist = layer.parametrizations.weight
    >>> type(plist).__name__, len(plist), plist.original.shape
    ('ParametrizationList', 1, flambeau.Size([2, 2]))
    """

    def __init__(self, modules, original, unsafe: bool = False):
        if not modules:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = tuple(original.shape), original.dtype
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass  # a right_inverse that refuses leaves the value as is
        if not isinstance(new, Tensor) and not isinstance(new, (list, tuple)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\nright_inverse(original).dtype: "
                    f"{new.dtype}"
                )
            with no_grad():
                if tuple(new.shape) == shape:
                    original.copy_(new)
                elif isinstance(original, Parameter):
                    original = Parameter(new, original.requires_grad)
                else:
                    original = new
            _register_tensor(self, "original", original)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError(
                        f"'right_inverse' must return a Tensor or a Sequence of tensors. Got "
                        f"element {i} of type {type(t).__name__}"
                    )
                t = t.detach().clone()
                if isinstance(original, Parameter):
                    t = Parameter(t, original.requires_grad)
                _register_tensor(self, f"original{i}", t)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    f"unless `unsafe` flag is enabled.\nunparametrized dtype: {dtype}\n"
                    f"parametrized dtype: {z.dtype}"
                )
            if tuple(z.shape) != shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    f"unless `unsafe` flag is enabled.\nunparametrized shape: {shape}\n"
                    f"parametrized shape: {tuple(z.shape)}"
                )

    def right_inverse(self, value) -> None:
        """Sets the original(s) so that the parametrized tensor becomes `value`."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                        f"`original` has dtype {self.original.dtype}"
                    )
                _set_original(self, "original", value)
            else:
                if len(value) != self.ntensors:
                    raise ValueError(
                        f"'right_inverse' must return a sequence of tensors of length "
                        f"{self.ntensors}. Got a sequence of length {len(value)}"
                    )
                for i, t in enumerate(value):
                    _set_original(self, f"original{i}", t)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module: Module) -> None:
    cls = module.__class__

    def getstate(self):
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict()."
        )

    def deepcopy(self, memo):
        # The default deepcopy of a module built by an injected class.
        obj = memo.get(id(self))
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        return replica

    attrs = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        attrs["__deepcopy__"] = deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), attrs)


def _inject_property(module: Module, tensor_name: str) -> None:
    def get(self):
        plist = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return plist()
        key = (id(self), tensor_name)
        if key not in _cache:
            _cache[key] = plist()
        return _cache[key]

    def set_(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get, set_))


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has a parametrization (on `tensor_name`, if given).

    >>> import flambeau.nn as nn
    >>> import flambeau.nn.utils.parametrize as P
    >>> class Double(nn.Module):
    ...     def forward(self, X):
    ...         return 2 * X
    >>> layer = P.register_parametrization(nn.Linear(2, 2), "weight", Double())
    >>> P.is_parametrized(layer), P.is_parametrized(layer, "weight")
    (True, True)
    >>> P.is_parametrized(layer, "bias"), P.is_parametrized(nn.Linear(2, 2))
    (False, False)
    """
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:  # fmt: skip
    """Makes module.<tensor_name> the output of `parametrization` on the stored original.

    >>> import flambeau.nn as nn
    >>> import flambeau.nn.utils.parametrize as P
    >>> class Symmetric(nn.Module):
    ...     def forward(self, X):
    ...         return X.triu() + X.triu(1).T
    >>> layer = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    >>> flambeau.equal(layer.weight, layer.weight.T)
    True
    >>> type(layer).__name__
    'ParametrizedLinear'
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            if x.dtype != y.dtype or tuple(x.shape) != tuple(y.shape):
                raise ValueError(
                    "Registering a parametrization may not change the shape or dtype of the "
                    f"tensor, unless `unsafe` flag is enabled.\nunparametrized: "
                    f"{tuple(y.shape)} {y.dtype}\nparametrized: {tuple(x.shape)} {x.dtype}"
                )
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if tensor_name not in module._buffers and tensor_name not in module._parameters:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
            f"with name '{tensor_name}'"
        )
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_new_class(module)
        module.parametrizations = ModuleDict()
    _inject_property(module, tensor_name)
    module.parametrizations[tensor_name] = plist
    return module


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:  # fmt: skip
    """Removes the parametrizations on tensor_name; the tensor keeps its current value
    (leave_parametrized=True) or goes back to the original.

    >>> import flambeau.nn as nn
    >>> import flambeau.nn.utils.parametrize as P
    >>> class Double(nn.Module):
    ...     def forward(self, X):
    ...         return 2 * X
    >>> layer = nn.Linear(2, 2)
    >>> w = layer.weight.detach().clone()
    >>> _ = P.register_parametrization(layer, "weight", Double())
    >>> layer = P.remove_parametrizations(layer, "weight")
    >>> type(layer).__name__, flambeau.equal(layer.weight, 2 * w)
    ('Linear', True)
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            _set_original(plist, "original", value)
            original = plist.original
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
        with no_grad():
            value = getattr(module, tensor_name)
        requires_grad = plist.original0.requires_grad
        original = Parameter(value.detach(), requires_grad) if requires_grad else value.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_tensor(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before parametrizations were registered on it.

    >>> import flambeau.nn as nn
    >>> import flambeau.nn.utils.parametrize as P
    >>> class Double(nn.Module):
    ...     def forward(self, X):
    ...         return 2 * X
    >>> layer = P.register_parametrization(nn.Linear(2, 2), "weight", Double())
    >>> type(layer).__name__, P.type_before_parametrizations(layer).__name__
    ('ParametrizedLinear', 'Linear')
    """
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)
