"""``Module``: the base class of every layer, with PyTorch's registration and state API."""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict, namedtuple

import flambeau
from flambeau import Tensor, no_grad
from flambeau.utils.hooks import BackwardHook, RemovableHandle

from ..parameter import Buffer, Parameter, is_lazy
from . import _global_hooks as G
from ._global_hooks import *  # noqa: F403  (torch.nn.modules.module's register_module_*)
from ._global_hooks import _has_any_global_hook  # noqa: F401

# The tensors one Module._apply call has converted so far (id -> (old, new)), so that one
# shared by two modules is converted once.
_converting = threading.local()

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _WithoutModule:
    """A load_state_dict pre-hook registered without its module: drops the module argument
    the hooks table is called with."""

    def __init__(self, hook):
        self.hook = hook

    def __call__(self, module, *args):
        return self.hook(*args)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: the keys it missed and the ones it did not use."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _indent(text: str, spaces: int) -> str:
    """Indents every line of `text` but the first."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


_addindent = _indent  # PyTorch's name, which custom __repr__ code imports


def _shape(t) -> str:
    return repr(t.shape)


def _forward_unimplemented(self, *input):
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


def _kind_of(param, value):
    """value as what takes param's place in a module: a Parameter (with param's
    requires_grad) where param is one, else value itself."""
    if not isinstance(param, Parameter):
        return value
    if not isinstance(value, Parameter):
        return Parameter(value, requires_grad=param.requires_grad)
    value.requires_grad_(param.requires_grad)
    return value


class Module:
    """Base class for all neural-network modules.

    Assigning a Parameter, a Buffer or a Module to an attribute registers it;
    ``__call__`` runs forward between the registered hooks.

    >>> import flambeau.nn as nn
    >>> class TwoLayer(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1 = nn.Linear(4, 8)
    ...         self.fc2 = nn.Linear(8, 2)
    ...     def forward(self, x):
    ...         return self.fc2(self.fc1(x).relu())
    >>> net = TwoLayer()
    >>> [name for name, _ in net.named_parameters()]
    ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
    >>> net(flambeau.ones(3, 4)).shape
    flambeau.Size([3, 2])
    """

    dump_patches = False
    _version = 1
    training: bool
    forward = _forward_unimplemented

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected argument: "
                f"{args if args else next(iter(kwargs))!r}"
            )
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_modules", {})
        for table in self._HOOK_TABLES:
            setattr_(table, OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())

    _HOOK_TABLES = (
        "_forward_hooks",
        "_forward_pre_hooks",
        "_backward_hooks",
        "_backward_pre_hooks",
        "_state_dict_hooks",
        "_state_dict_pre_hooks",
        "_load_state_dict_pre_hooks",
        "_load_state_dict_post_hooks",
    )

    # ---- registration -------------------------------------------------------------------

    def _check_new_name(self, kind: str, name, table: dict) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in table:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Adds a buffer: state that is not a parameter (saved in state_dict if persistent)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_new_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(flambeau Tensor or None required)"
            )
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
        tensor = G.run_registration_hooks(G.buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param) -> None:
        """Adds a parameter (a Parameter, or None for an absent one) to the module."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_new_name("parameter", name, self._parameters)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(flambeau.nn.Parameter or None required)"
            )
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        param = G.run_registration_hooks(G.parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def add_module(self, name: str, module) -> None:
        """Adds a child module, reachable as an attribute of this one."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_new_name("module", name, self._modules)
        module = G.run_registration_hooks(G.module_registration_hooks, self, name, module)
        self._modules[name] = module

    def register_module(self, name: str, module) -> None:
        """Alias of add_module."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path `target` ("" is this module)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target`."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target`."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(mod, name)

    def get_extra_state(self):
        """Extra picklable state for state_dict; override together with set_extra_state."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called."
        )

    def set_extra_state(self, state) -> None:
        """Restores what get_extra_state returned."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called."
        )

    def _has_extra_state(self) -> bool:
        return type(self).get_extra_state is not Module.get_extra_state

    # ---- attributes -----------------------------------------------------------------------

    def __getattr__(self, name: str):
        # Only reached when normal lookup fails: the registered tables come next.
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__

        def remove_from(*tables):
            for t in tables:
                if name in t:
                    if isinstance(t, dict):
                        del t[name]
                    else:
                        t.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(flambeau.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = G.run_registration_hooks(G.module_registration_hooks, self, name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(flambeau.nn.Module or None expected)"
                )
            modules[name] = G.run_registration_hooks(G.module_registration_hooks, self, name, value)
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(flambeau.Tensor or None expected)"
                )
            if isinstance(value, Buffer):
                remove_from(d, self._parameters, self._modules)
                self.register_buffer(name, value, value.persistent)
            else:
                value = G.run_registration_hooks(G.buffer_registration_hooks, self, name, value)
                buffers[name] = value
            return
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        keys = (
            dir(type(self))
            + list(self.__dict__)
            + list(self._parameters)
            + list(self._modules)
            + list(self._buffers)
        )
        return sorted({k for k in keys if not k[0].isdigit()})

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        # Modules pickled by older versions may lack newer tables.
        for table in self._HOOK_TABLES + (
            "_forward_hooks_with_kwargs",
            "_forward_hooks_always_called",
            "_forward_pre_hooks_with_kwargs",
        ):
            if table not in self.__dict__:
                super().__setattr__(table, OrderedDict())
        if "_non_persistent_buffers_set" not in self.__dict__:
            super().__setattr__("_non_persistent_buffers_set", set())

    # ---- traversal ------------------------------------------------------------------------

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (module_prefix + ("." if module_prefix else "") + name, value)

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate=True):
        """(name, parameter) pairs, shared parameters once unless remove_duplicate=False."""
        yield from self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def parameters(self, recurse: bool = True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate=True):
        yield from self._named_members(
            lambda m: m._buffers.items(), prefix, recurse, remove_duplicate
        )

    def buffers(self, recurse: bool = True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """(name, module) for this module and every descendant, depth first."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    __hash__ = object.__hash__

    # ---- modes and gradients ---------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the parameters' gradients: to None, or to zeros with set_to_none=False."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
                continue
            if p.grad.grad_fn is not None:
                p.grad = p.grad.detach()
            else:
                p.grad.requires_grad = False
            p.grad.zero_()

    def _replicate_for_data_parallel(self):
        """A shallow copy for parallel.replicate, which fills its tables with device copies."""
        replica = self.__new__(type(self))
        state = self.__dict__.copy()
        state.update(_parameters={}, _buffers=dict(self._buffers), _modules=dict(self._modules),
                     _is_replica=True)  # fmt: skip
        object.__setattr__(replica, "__dict__", state)
        return replica

    def apply(self, fn) -> Module:
        """Calls fn on every submodule (children first), then on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- conversion ------------------------------------------------------------------------

    def _apply(self, fn, recurse: bool = True):
        """Converts every parameter and buffer t by fn(t), keeping shared tensors shared.

        As in PyTorch, a parameter keeps its identity (``param.data = fn(param)``, and its
        gradient likewise), so optimizers made before ``.double()`` or ``.to(...)`` still
        hold the module's parameters; buffers are replaced by fn(buffer). Children are
        called as PyTorch calls them, ``child._apply(fn)`` (libraries override ``_apply``
        with that signature); the tensors converted so far travel beside the call.
        """
        outer = getattr(_converting, "memo", None)
        _converting.memo = memo = {} if outer is None else outer
        try:
            return self._apply_with(fn, recurse, memo)
        finally:
            _converting.memo = outer

    def _apply_with(self, fn, recurse, memo):
        if recurse:
            for module in self.children():
                module._apply(fn)
        swap = flambeau.__future__.get_swap_module_params_on_conversion()
        overwrite = flambeau.__future__.get_overwrite_module_params_on_conversion()
        for key, param in self._parameters.items():
            if param is None:
                continue
            if id(param) in memo:  # shared with a module converted before
                self._parameters[key] = memo[id(param)][1]
                continue
            with no_grad():
                applied = fn(param)
            grad = param.grad
            if swap:
                out = self._swap_converted(key, param, applied, grad, fn)
            elif applied is param:
                out = param
            elif not overwrite:
                param.data = applied
                out = param
            else:  # flambeau.__future__: a new Parameter
                out = Parameter(applied, param.requires_grad)
                self._parameters[key] = out
            memo[id(param)] = (param, out)  # keeps param alive so its id stays unique
            if grad is None or swap:
                continue
            with no_grad():
                applied_grad = fn(grad)
            if applied_grad is grad:
                continue
            if overwrite:
                out.grad = applied_grad.requires_grad_(grad.requires_grad)
            else:
                grad.data = applied_grad
        for key, buf in self._buffers.items():
            if buf is None:
                continue
            if id(buf) not in memo:
                with no_grad():
                    applied = fn(buf)
                if is_lazy(buf) and applied is not buf:
                    applied = _lazy_like(buf, applied)
                memo[id(buf)] = (buf, applied)
            self._buffers[key] = memo[id(buf)][1]
        return self

    def _swap_converted(self, key, param, applied, grad, fn):
        """_apply under set_swap_module_params_on_conversion(True): param (and its grad)
        take the converted tensors' contents, keeping their identities."""
        try:
            if grad is not None:
                param.grad = None  # the gradient must not hold param while they swap
            flambeau.utils.swap_tensors(param, Parameter(applied, param.requires_grad))
        except Exception as e:
            if grad is not None:
                param.grad = grad
            raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}") from e
        if grad is not None:
            with no_grad():
                applied_grad = fn(grad)
            applied_grad.requires_grad_(grad.requires_grad)
            try:
                flambeau.utils.swap_tensors(grad, applied_grad)
            except Exception as e:
                raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}.grad") from e
            param.grad = grad
        return param

    def to(self, *args, **kwargs) -> Module:
        """to(device=None, dtype=None, non_blocking=False), to(dtype), to(tensor).

        Only floating-point and complex parameters and buffers change dtype.
        """
        device, dtype, non_blocking = _parse_to(*args, **kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dtype}"
            )
        if device is not None and flambeau.device(device).type == "cuda":
            _require_cuda("to")

        def convert(t):
            keep = not (t.is_floating_point() or t.is_complex())
            return t.to(device, None if keep else dtype, non_blocking)

        return self._apply(convert)

    def cpu(self) -> Module:
        return self._apply(lambda t: t.cpu())

    def share_memory(self) -> Module:
        """Moves every parameter and buffer (and gradient) to shared memory in place, so
        processes that receive the module (flambeau.multiprocessing) train the same
        tensors, as in Hogwild training."""
        return self._apply(lambda t: t.share_memory_())

    def cuda(self, device=None) -> Module:
        """Moves parameters and buffers to a CUDA device (needs a CUDA backend)."""
        _require_cuda("cuda")
        target = flambeau.device("cuda", device) if isinstance(device, int) else device
        return self._apply(lambda t: t.to(target or "cuda"))

    def type(self, dst_type) -> Module:
        return self._apply(lambda t: t.to(dst_type))

    def _cast_floating(self, dtype) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> Module:
        return self._cast_floating(flambeau.float32)

    def double(self) -> Module:
        return self._cast_floating(flambeau.float64)

    def half(self) -> Module:
        return self._cast_floating(flambeau.float16)

    def bfloat16(self) -> Module:
        return self._cast_floating(flambeau.bfloat16)

    def to_empty(self, *, device=None, recurse: bool = True) -> Module:
        """Moves to `device` without copying data: parameters become uninitialised."""
        return self._apply(lambda t: flambeau.empty_like(t, device=device), recurse)

    # ---- state_dict ------------------------------------------------------------------------

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state():
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *, destination=None, prefix: str = "", keep_vars: bool = False):
        """An OrderedDict of every parameter and persistent buffer, by dotted name."""
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = {"version": self._version}
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, {"version": self._version})
            if result is not None:
                destination = result
        return destination

    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """hook(module, prefix, keep_vars) runs before state_dict collects this module."""
        return self._add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata) runs after; may return a new dict."""
        return self._add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors)."""
        return self._add_hook(self._load_state_dict_pre_hooks, hook)

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        """The older private spelling of register_state_dict_post_hook (still common in
        libraries): hook(module, state_dict, prefix, local_metadata) -> None or a new dict,
        which is respected for the module state_dict was called on."""
        return self._add_hook(self._state_dict_hooks, hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False) -> RemovableHandle:
        """The private form of register_load_state_dict_pre_hook: without with_module the
        hook is called without the module, as hook(state_dict, prefix, local_metadata,
        strict, missing_keys, unexpected_keys, error_msgs)."""
        if not with_module:
            hook = _WithoutModule(hook)
        return self._add_hook(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """hook(module, incompatible_keys) runs after load_state_dict; may edit the key lists."""
        return self._add_hook(self._load_state_dict_post_hooks, hook)

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs,
    ) -> None:  # fmt: skip
        assign = local_metadata.get("assign_to_params_buffers", False)
        for hook in self._load_state_dict_pre_hooks.values():
            hook(
                self, state_dict, prefix, local_metadata, strict, missing_keys,
                unexpected_keys, error_msgs,
            )  # fmt: skip
        persistent = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local = {k: v for k, v in {**self._parameters, **persistent}.items() if v is not None}
        swap = flambeau.__future__.get_swap_module_params_on_conversion()
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected flambeau.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}"
                )
                continue
            # An uninitialized (lazy) entry takes any value; reading an uninitialized
            # value's shape raises, as in PyTorch.
            lazy = is_lazy(param)
            if not lazy and param.dim() == 0 and len(value.shape) == 1 and value.numel() == 1:
                value = value[0]  # checkpoints of old versions stored scalars as 1-element
            if not lazy and tuple(value.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {_shape(value)} from "
                    f"checkpoint, the shape in current model is {_shape(param)}."
                )
                continue
            try:
                if swap:
                    self._swap_loaded(param, value, assign)
                elif assign:
                    self._assign_loaded(name, param, value)
                else:
                    with no_grad():
                        param.copy_(value)
            except Exception as e:  # reported with the key, like every other load error
                action = "swapping" if swap else "copying"
                error_msgs.append(
                    f'While {action} the parameter named "{key}", whose dimensions in the model '
                    f"are {_shape(param)} and whose dimensions in the checkpoint are "
                    f"{_shape(value)}, an exception occurred : {e.args}."
                )
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if self._has_extra_state():
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix) :].split(".", 1)[0]
                    if head not in self._modules and head not in local:
                        unexpected_keys.append(key)

    @staticmethod
    def _swap_loaded(param, value, assign: bool) -> None:
        """load_state_dict under set_swap_module_params_on_conversion(True): param takes
        the contents of ``param.module_load(value)``, keeping its identity."""
        with no_grad():
            new = param.module_load(value, assign=assign)
            if new is value or new is param:
                raise RuntimeError(
                    "module_load returned one of self or other, please .detach() the result if "
                    "returning one of the inputs in module_load"
                )
            flambeau.utils.swap_tensors(param, _kind_of(param, new))

    def _assign_loaded(self, name, param, value) -> None:
        setattr(self, name, _kind_of(param, value))

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copies parameters and buffers from state_dict (or assigns them with assign=True).

        Returns (missing_keys, unexpected_keys); with strict=True any of them, and with
        any strictness a shape mismatch, raises a RuntimeError listing them all.
        """
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:  # as PyTorch hands it over (modules override the 7-argument call)
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(
                local_state, prefix, local_metadata, True, missing, unexpected, errors
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {
                        k: v for k, v in local_state.items() if k.startswith(child_prefix)
                    }
                    load(child, child_state, child_prefix)
            result = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, result)

        load(self, state_dict)
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        return _IncompatibleKeys(missing, unexpected)

    # ---- hooks -----------------------------------------------------------------------------

    def _add_hook(self, table, hook, prepend=False, extra=None) -> RemovableHandle:
        handle = RemovableHandle(table, extra_dict=extra)
        table[handle.id] = hook
        if prepend:
            table.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) -> None or new args; with_kwargs: hook(module, args, kwargs)."""
        handle = self._add_hook(
            self._forward_pre_hooks, hook, prepend, self._forward_pre_hooks_with_kwargs
        )
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) -> None or new output (with_kwargs: args, kwargs, output).

        always_call=True runs the hook even when forward raises.
        """
        handle = self._add_hook(
            self._forward_hooks,
            hook,
            prepend,
            [self._forward_hooks_with_kwargs, self._forward_hooks_always_called],
        )
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """hook(module, grad_output) -> None or new grad_output, before grad_input is computed."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """hook(module, grad_input, grad_output) -> None or new grad_input."""
        return self._add_hook(self._backward_hooks, hook, prepend)

    def _all_forward_hooks(self):
        """(id, hook, with_kwargs, always_call) of the global forward hooks, then this
        module's."""
        hooks = [
            (i, h, i in G.forward_hooks_with_kwargs, i in G.forward_hooks_always_called)
            for i, h in G.forward_hooks.items()
        ]
        hooks += [
            (i, h, i in self._forward_hooks_with_kwargs, i in self._forward_hooks_always_called)
            for i, h in self._forward_hooks.items()
        ]
        return hooks

    def _run_forward_hooks(self, args, kwargs, result, called):
        for hook_id, hook, with_kwargs, always_call in self._all_forward_hooks():
            if always_call:
                called.add(hook_id)
            if with_kwargs:
                out = hook(self, args, kwargs, result)
            else:
                out = hook(self, args, result)
            if out is not None:
                result = out
        return result

    def _run_pre_hooks(self, args, kwargs):
        for hook in list(G.forward_pre_hooks.values()):
            out = hook(self, args)
            if out is not None:
                args = out if isinstance(out, tuple) else (out,)
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                out = hook(self, args, kwargs)
                if out is not None:
                    if not (isinstance(out, tuple) and len(out) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {out}."
                        )
                    args, kwargs = out
            else:
                out = hook(self, args)
                if out is not None:
                    args = out if isinstance(out, tuple) else (out,)
        return args, kwargs

    def _call_impl(self, *args, **kwargs):
        if not (
            self._forward_hooks
            or self._forward_pre_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
            or _has_any_global_hook()
        ):
            return self.forward(*args, **kwargs)
        called, result = set(), None
        try:
            args, kwargs = self._run_pre_hooks(args, kwargs)
            bw_hook = None
            backward_hooks = [*G.backward_hooks.values(), *self._backward_hooks.values()]
            backward_pre_hooks = [
                *G.backward_pre_hooks.values(),
                *self._backward_pre_hooks.values(),
            ]
            if backward_hooks or backward_pre_hooks:
                bw_hook = BackwardHook(self, backward_hooks, backward_pre_hooks)
                args = bw_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            result = self._run_forward_hooks(args, kwargs, result, called)
            if bw_hook is not None:
                result = bw_hook.setup_output_hook(result)
            return result
        except Exception:
            for hook_id, hook, with_kwargs, always_call in self._all_forward_hooks():
                if not always_call or hook_id in called:
                    continue
                try:
                    if with_kwargs:
                        out = hook(self, args, kwargs, result)
                    else:
                        out = hook(self, args, result)
                    if out is not None:
                        result = out
                except Exception as e:
                    warnings.warn(
                        "module forward hook with ``always_call=True`` raised an exception that "
                        f"was silenced as another error was raised in forward: {e}",
                        stacklevel=2,
                    )
            raise

    __call__ = _call_impl

    # ---- repr ------------------------------------------------------------------------------

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module-specific part of repr (constructor arguments); '' by default."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({name}): {_indent(repr(module), 2)}" for name, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"


def _lazy_like(old, applied):
    """An uninitialized tensor like `old` on applied's device and dtype (Module._apply)."""
    if isinstance(old, Parameter):
        return type(old)(old.requires_grad, applied.device, applied.dtype)
    return type(old)(old.requires_grad, applied.device, applied.dtype, persistent=old.persistent)


def _parse_to(*args, **kwargs):
    """(device, dtype, non_blocking) from Module.to's accepted call forms."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("memory_format", None)
    if "tensor" in kwargs:
        args = (kwargs.pop("tensor"), *args)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        t = rest.pop(0)
        device, dtype = t.device, t.dtype
    elif rest and isinstance(rest[0], flambeau.dtype):
        dtype = rest.pop(0)
    elif rest and (rest[0] is None or isinstance(rest[0], (str, int, flambeau.device))):
        device = rest.pop(0)
        if rest and (rest[0] is None or isinstance(rest[0], flambeau.dtype)):
            dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest:
        raise TypeError(f"to() received an invalid combination of arguments: {args!r}")
    if isinstance(device, int) and not isinstance(device, bool):
        device = flambeau.device("cuda", device)
    return device, dtype, non_blocking


def _require_cuda(what: str) -> None:
    if not flambeau.cuda.is_available():
        raise RuntimeError(
            f"Module.{what}(): no CUDA device is available (flambeau.cuda.is_available() is "
            "False); a CUDA backend plugin (flambeau-tensor-cuda) and an NVIDIA GPU are needed"
        )
