"""The hook-based spectral normalisation (superseded in PyTorch by
parametrizations.spectral_norm): module.<name> = <name>_orig / sigma, where sigma, the
largest singular value, is estimated by power iteration before each forward in training."""

from __future__ import annotations

import flambeau
from flambeau import no_grad

from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..parameter import Parameter, UninitializedParameter

__all__ = [
    "SpectralNorm",
    "SpectralNormLoadStateDictPreHook",
    "SpectralNormStateDictHook",
    "spectral_norm",
    "remove_spectral_norm",
]


class SpectralNorm:
    """The forward pre-hook; u and v (buffers <name>_u, <name>_v) are the singular vectors."""

    # Version 1 stores <name>_v; version None checkpoints stored the normalised weight instead.
    _version: int = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:  # fmt: skip
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """`dim` first, the other dimensions flattened: (weight.shape[dim], -1)."""
        if self.dim != 0:
            rest = [d for d in range(weight.dim()) if d != self.dim]
            weight = weight.permute(self.dim, *rest)
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration: bool):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(flambeau.mv(mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(flambeau.mv(mat, v), dim=0, eps=self.eps))
                # Clones, so that the next in-place update does not alter what backward saved.
                u, v = u.clone(), v.clone()
        sigma = flambeau.dot(u, flambeau.mv(mat, v))
        return weight / sigma

    def remove(self, module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))

    def _solve_v_and_rescale(self, mat, u, target_sigma):
        """The v with u^T mat v = target_sigma nearest to mat's row space (old checkpoints)."""
        v = flambeau.matmul(
            flambeau.matmul(mat.t().matmul(mat).pinverse(), mat.t()), u.unsqueeze(1)
        ).squeeze(1)
        return v.mul_(target_sigma / flambeau.dot(u, flambeau.mv(mat, v)))

    @staticmethod
    def apply(module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `SpectralNorm` can't have uninitialized parameters. Make "
                "sure to run the dummy forward before applying spectral normalization"
            )
        with no_grad():
            height, width = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(flambeau.empty(height, dtype=weight.dtype).normal_(0, 1), dim=0,
                            eps=fn.eps)  # fmt: skip
            v = F.normalize(flambeau.empty(width, dtype=weight.dtype).normal_(0, 1), dim=0,
                            eps=fn.eps)  # fmt: skip
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # A plain attribute until the first forward recomputes it.
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module.register_state_dict_post_hook(SpectralNormStateDictHook(fn))
        module.register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts a checkpoint of the version-None format (normalised <name> stored, no
    <name>_v) by solving for the v that reproduces its sigma."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs) -> None:  # fmt: skip
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if (
            version is None
            and all(key + suffix in state_dict for suffix in ("_orig", "_u", "_v"))
            and key not in state_dict
        ):
            return  # already the current layout, saved without metadata
        missing = [key + suffix for suffix in ("_orig", "", "_u") if key + suffix not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with no_grad():
            weight_orig = state_dict[key + "_orig"]
            weight = state_dict.pop(key)
            sigma = (weight_orig / weight).mean()
            mat = fn.reshape_weight_to_matrix(weight_orig)
            state_dict[key + "_v"] = fn._solve_v_and_rescale(mat, state_dict[key + "_u"], sigma)


class SpectralNormStateDictHook:
    """Records the format version in the state dict's metadata."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        metadata = getattr(state_dict, "_metadata", None)
        if metadata is None:
            return
        entry = metadata.setdefault(prefix[:-1], {}).setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in entry:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        entry[key] = self.fn._version


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None):  # fmt: skip
    """Rescales parameter `name` by its largest singular value (of the matrix with `dim`
    first: 0, or 1 for transposed convolutions), re-estimated before every training forward.

    The parameter moves to <name>_orig; buffers <name>_u and <name>_v hold the singular
    vectors.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> layer = nn.utils.spectral_norm(nn.Linear(4, 3))
    >>> sorted(name for name, _ in layer.named_parameters())
    ['bias', 'weight_orig']
    >>> for _ in range(20):
    ...     _ = layer(flambeau.randn(1, 4))
    >>> round(flambeau.linalg.matrix_norm(layer.weight, ord=2).item(), 2)
    1.0
    """
    if dim is None:
        transposed = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name: str = "weight"):
    """Folds the spectral normalisation of `name` back into one parameter.

    >>> import flambeau.nn as nn
    >>> layer = nn.utils.spectral_norm(nn.Linear(4, 3))
    >>> layer = nn.utils.remove_spectral_norm(layer)
    >>> sorted(name for name, _ in layer.named_parameters())
    ['bias', 'weight']
    """
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for table, kind in (
        (module._state_dict_hooks, SpectralNormStateDictHook),
        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook),
    ):
        for key, hook in table.items():
            if isinstance(hook, kind) and hook.fn.name == name:
                del table[key]
                break
    return module
