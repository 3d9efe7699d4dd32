"""LazyModuleMixin: modules whose parameter shapes come from their first input."""

from __future__ import annotations

import flambeau

from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixin for modules that create their parameters on the first forward call.

    Until then the module holds UninitializedParameter / UninitializedBuffer entries. The
    first call runs ``initialize_parameters(*args, **kwargs)``, which materializes them
    from the input's shape; the module then becomes ``cls_to_become`` (when set), e.g. a
    LazyLinear becomes a Linear. Convert dtype and device before that first call, and make
    the optimizer after it: the new parameters are new objects.
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(
            _infer_parameters_hook, with_kwargs=True
        )

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        # Uninitialized entries are saved as themselves (they cannot be detached).
        for name, param in self._parameters.items():
            if param is not None:
                keep = keep_vars or is_lazy(param)
                destination[prefix + name] = param if keep else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                keep = keep_vars or is_lazy(buf)
                destination[prefix + name] = buf if keep else buf.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:  # fmt: skip
        # An initialized entry in the checkpoint gives its shape to an uninitialized one.
        entries = list(self._parameters.items()) + list(self._buffers.items())
        for name, tensor in entries:
            key = prefix + name
            if tensor is not None and key in state_dict and is_lazy(tensor):
                incoming = state_dict[key]
                if isinstance(incoming, flambeau.Tensor) and not is_lazy(incoming):
                    with flambeau.no_grad():
                        tensor.materialize(incoming.shape)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
            error_msgs,
        )  # fmt: skip

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materializes the parameters from the first forward's arguments (subclasses)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}"
        )

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer is still uninitialized."""
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(is_lazy(t) for t in tensors)

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        # By identity rather than by the handle, which a saved and loaded module may hold
        # with tables that are copies.
        for key, hook in list(module._forward_pre_hooks.items()):
            if hook is _infer_parameters_hook:
                del module._forward_pre_hooks[key]
                module._forward_pre_hooks_with_kwargs.pop(key, None)
        delattr(module, "_initialize_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. Run a "
            "dummy forward pass to correctly initialize the modules"
        )


def _infer_parameters_hook(module, args, kwargs):
    """The forward pre-hook of a lazy module (a plain function, so the module pickles and
    saves with it)."""
    if isinstance(module, LazyModuleMixin):
        module._infer_parameters(module, args, kwargs)
