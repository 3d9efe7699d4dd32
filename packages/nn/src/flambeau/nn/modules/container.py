"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping

import flambeau
from flambeau import Tensor

from ..parameter import Parameter
from .module import Module, _addindent, _indent  # noqa: F401  (_addindent: PyTorch's path)


def _abs_index(idx, length: int) -> int:
    idx = operator.index(idx)
    if not -length <= idx < length:
        raise IndexError(f"index {idx} is out of range")
    return idx + length if idx < 0 else idx


class _IndexedModules(Module):
    """Shared by Sequential and ModuleList: children named "0", "1", ... in order."""

    def _renumber(self) -> None:
        self.__dict__["_modules"] = {str(i): m for i, m in enumerate(self._modules.values())}

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)._from_list(list(self._modules.values())[idx])
        return list(self._modules.values())[_abs_index(idx, len(self))]

    def __setitem__(self, idx, module) -> None:
        setattr(self, str(_abs_index(idx, len(self))), module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        if isinstance(idx, slice):
            for key in keys[idx]:
                del self._modules[key]
        else:
            del self._modules[keys[_abs_index(idx, len(self))]]
        self._renumber()

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        if not isinstance(modules, Iterable):
            raise TypeError(
                f"{type(self).__name__}.extend should be called with an iterable, but got "
                f"{type(modules).__name__}"
            )
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module) -> None:
        n = len(self)
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        index = operator.index(index)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index = index + n if index < 0 else index
        items = list(self._modules.values())
        items.insert(index, module)
        self.__dict__["_modules"] = {str(i): m for i, m in enumerate(items)}

    def pop(self, key=-1):
        module = self[key]
        del self[key]
        return module

    def __add__(self, other):
        if not isinstance(other, type(self)):
            raise ValueError(
                f"add operator supports only objects of {type(self).__name__} class, but "
                f"{type(other)} is given."
            )
        return type(self)._from_list(list(self) + list(other))

    def __iadd__(self, other):
        return self.extend(other)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]


class Sequential(_IndexedModules):
    """Runs its modules in order, each on the previous one's output.

    ``Sequential(m1, m2, ...)`` or ``Sequential(OrderedDict(name=module, ...))``.

    >>> import flambeau.nn as nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> model
    Sequential(
      (0): Linear(in_features=4, out_features=8, bias=True)
      (1): ReLU()
      (2): Linear(in_features=8, out_features=2, bias=True)
    )
    >>> model(flambeau.ones(3, 4)).shape
    flambeau.Size([3, 2])
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    @classmethod
    def _from_list(cls, modules):
        return cls(*modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return super().__getitem__(idx)

    def __setitem__(self, idx, module) -> None:
        key = list(self._modules)[_abs_index(idx, len(self))]
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        targets = keys[idx] if isinstance(idx, slice) else [keys[_abs_index(idx, len(self))]]
        for key in targets:
            del self._modules[key]
        self._renumber()

    def __mul__(self, other: int):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return Sequential(*(list(self) * other))

    __rmul__ = __mul__

    def __imul__(self, other: int):
        combined = self * other
        self.__dict__["_modules"] = dict(combined._modules)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(_IndexedModules):
    """A list of modules, registered as children "0", "1", ...

    >>> import flambeau.nn as nn
    >>> layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
    >>> x = flambeau.ones(2, 4)
    >>> for layer in layers:
    ...     x = layer(x)
    >>> len(layers), x.shape
    (3, flambeau.Size([2, 4]))
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @classmethod
    def _from_list(cls, modules):
        return cls(modules)

    def __repr__(self) -> str:
        # Runs of identical modules print once: "(0-2): 3 x Linear(...)".
        reprs = [repr(m) for m in self]
        if not reprs:
            return "ModuleList()"
        lines, start = [], 0
        for i in range(1, len(reprs) + 1):
            if i < len(reprs) and reprs[i] == reprs[start]:
                continue
            body = _indent(reprs[start], 2)
            if i - start == 1:
                lines.append(f"({start}): {body}")
            else:
                lines.append(f"({start}-{i - 1}): {i - start} x {body}")
            start = i
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """An ordered dict of modules, registered as children under their keys.

    >>> import flambeau.nn as nn
    >>> acts = nn.ModuleDict({"relu": nn.ReLU(), "tanh": nn.Tanh()})
    >>> list(acts.keys())
    ['relu', 'tanh']
    >>> acts["relu"](flambeau.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        value = self[key]
        del self[key]
        return value

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        for key, module in _pairs(type(self).__name__, modules):
            self[key] = module


def _pairs(owner: str, source, sort_plain_mappings: bool = False):
    """Key/value pairs from a mapping or an iterable of pairs, checked as PyTorch does.

    ParameterDict (as PyTorch's) takes a mapping that is not an OrderedDict in sorted order.
    """
    if isinstance(source, (ModuleDict, ParameterDict, OrderedDict)):
        yield from list(source.items())
        return
    if not isinstance(source, Iterable):
        raise TypeError(
            f"{owner}.update should be called with an iterable of key/value pairs, but got "
            f"{type(source).__name__}"
        )
    if isinstance(source, Mapping):
        items = list(source.items())
        yield from sorted(items) if sort_plain_mappings else items
        return
    for j, pair in enumerate(source):
        if not isinstance(pair, Iterable):
            raise TypeError(
                f"{owner} update sequence element #{j} should be Iterable; is {type(pair).__name__}"
            )
        pair = tuple(pair)
        if len(pair) != 2:
            raise ValueError(
                f"{owner} update sequence element #{j} has length {len(pair)}; 2 is required"
            )
        yield pair


def _describe(value, *, legacy_type_name: bool = False) -> str:
    """One entry of ParameterList's and ParameterDict's repr, as PyTorch writes them:
    ParameterList names a tensor's dtype (``flambeau.float32``), ParameterDict its legacy
    type name (``torch.FloatTensor``, the spelling flambeau.typename keeps)."""
    if isinstance(value, Tensor):
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        size = "x".join(str(s) for s in value.shape)
        device = f" ({value.device})" if value.device.type != "cpu" else ""
        what = flambeau.typename(value) if legacy_type_name else value.dtype
        return f"{kind} containing: [{what} of size {size}{device}]"
    return f"Object of type: {type(value).__name__}"


class ParameterList(Module):
    """A list of parameters (plain tensors are wrapped in Parameter).

    >>> import flambeau.nn as nn
    >>> params = nn.ParameterList([flambeau.ones(2), flambeau.zeros(3)])
    >>> len(params), type(params[0]).__name__, params[1].shape
    (2, 'Parameter', flambeau.Size([3]))
    """

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_abs_index(idx, len(self))))

    def __setitem__(self, idx, param) -> None:
        idx = _abs_index(idx, len(self))
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __iadd__(self, values):
        return self.extend(values)

    def append(self, value):
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                f"{type(values).__name__}"
            )
        for value in values:
            self.append(value)
        return self

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def extra_repr(self) -> str:
        return "\n".join(f"  ({i}): {_describe(p)}" for i, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (plain tensors are wrapped in Parameter).

    >>> import flambeau.nn as nn
    >>> params = nn.ParameterDict({"scale": flambeau.ones(2), "shift": flambeau.zeros(2)})
    >>> list(params.keys()), params["scale"].requires_grad
    (['scale', 'shift'], True)
    """

    def __init__(self, parameters=None):
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, but got {type(key).__name__}")
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, key, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str):
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        for key, value in _pairs("ParameterDict", parameters, sort_plain_mappings=True):
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_describe(p, legacy_type_name=True)}" for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other: ParameterDict):
        self.update(other)
        return self


class Container(Module):
    """A Module made from keyword arguments name=module (deprecated: subclass Module).

    >>> import warnings
    >>> import flambeau.nn as nn
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     c = nn.Container(fc=nn.Linear(2, 3), act=nn.ReLU())
    >>> c
    Container(
      (fc): Linear(in_features=2, out_features=3, bias=True)
      (act): ReLU()
    )
    """

    def __init__(self, **kwargs):
        warnings.warn(
            "`nn.Container` is deprecated. All of its functionality is now implemented in "
            "`nn.Module`. Subclass that instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
