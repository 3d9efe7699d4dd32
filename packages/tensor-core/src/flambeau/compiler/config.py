"""``torch.compiler.config``: the compiler's user-facing settings, PyTorch 2.13's names and
defaults. Several are aliases of ``flambeau._dynamo.config``'s (setting one sets the
other). flambeau has no compiler, so none changes what a program computes.

>>> import flambeau
>>> flambeau.compiler.config.recompile_limit
8
>>> with flambeau.compiler.config.patch(recompile_limit=16):
...     flambeau._dynamo.config.recompile_limit
16
"""

# ruff: noqa: F822  (the settings in __all__ live in the config module's table)
from __future__ import annotations

import sys

from flambeau.utils._config_module import Config, install_config_module

_DYNAMO = "flambeau._dynamo.config"

__all__ = [
    "job_id",
    "dynamic_shapes",
    "assume_static_by_default",
    "automatic_dynamic_shapes",
    "recompile_limit",
    "accumulated_recompile_limit",
    "verbose",
    "capture_scalar_outputs",
    "capture_dynamic_output_shape_ops",
    "log_file_name",
    "fail_on_recompile_limit_hit",
    "allow_unspec_int_on_nn_module",
    "skip_tensor_guards_with_matching_dict_tags",
    "enable_cpp_symbolic_shape_guards",
    "wrap_top_frame",
    "reorderable_logging_functions",
    "force_disable_caches",
]

# Every setting but these two aliases flambeau._dynamo.config's setting of that name.
_ALIASED = tuple(n for n in __all__ if n not in ("job_id", "force_disable_caches"))

_SETTINGS = {
    "job_id": Config(None, env_default=("TORCH_COMPILE_JOB_ID", "TORCH_COMPILE_STICKY_PGO_KEY")),
    "pgo_extra_read_key": Config(None, env_default=("TORCH_COMPILE_STICKY_PGO_READ",)),
    "pgo_extra_write_key": Config(None, env_default=("TORCH_COMPILE_STICKY_PGO_WRITE",)),
    "cache_key_tag": Config("", env_default=("TORCH_COMPILE_CACHE_KEY_TAG",)),
    "force_disable_caches": Config(
        False,
        env_force=("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "TORCH_COMPILE_FORCE_DISABLE_CACHES"),
    ),
    "dynamic_sources": Config("", env_default=("TORCH_COMPILE_DYNAMIC_SOURCES",)),
    "dynamic_values": Config("", env_default=("TORCH_COMPILE_DYNAMIC_VALUES",)),
    "unbacked_sources": Config("", env_default=("TORCH_COMPILE_UNBACKED_SOURCES",)),
    "force_cudagraph_gc": Config(False, env_default=("TORCH_CUDAGRAPH_GC",)),
    **{name: Config(alias=f"{_DYNAMO}.{name}") for name in _ALIASED},
}

install_config_module(sys.modules[__name__], _SETTINGS)
