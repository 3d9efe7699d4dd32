"""``torch._dynamo.config``: the settings programs commonly set, with PyTorch 2.13's
defaults (and the environment variables PyTorch reads for them).

flambeau has no compiler, so no setting changes what a program computes; they are kept
so that programs which set, read or patch them run unchanged. Reading or writing a name
that is not here is an AttributeError, as in PyTorch, and ``patch`` works as a context
manager and decorator.

>>> import flambeau
>>> config = flambeau._dynamo.config
>>> config.cache_size_limit, config.suppress_errors
(8, False)
>>> with config.patch(cache_size_limit=32):
...     config.recompile_limit
32
"""

from __future__ import annotations

import os
import sys

from flambeau.utils._config_module import Config, install_config_module

_SELF = "flambeau._dynamo.config"
_env = os.environ.get  # read once, at import, as PyTorch's module-level settings are

_SETTINGS = {
    # Printing and errors.
    "verbose": Config(_env("TORCHDYNAMO_VERBOSE", "0") == "1"),
    "suppress_errors": Config(bool(_env("TORCHDYNAMO_SUPPRESS_ERRORS", False))),
    "log_file_name": Config(None),
    "log_compilation_metrics": Config(True),
    "disable": Config(_env("TORCH_COMPILE_DISABLE", "0") == "1"),
    "raise_on_ctx_manager_usage": Config(True),
    "replay_record_enabled": Config(_env("TORCH_COMPILE_REPLAY_RECORD", "0") == "1"),
    "rewrite_assert_with_torch_assert": Config(True),
    "error_on_nested_fx_trace": Config(True),
    # Recompilation limits.
    "recompile_limit": Config(8),
    "accumulated_recompile_limit": Config(256),
    "fail_on_recompile_limit_hit": Config(False),
    "cache_size_limit": Config(alias=f"{_SELF}.recompile_limit"),
    "accumulated_cache_size_limit": Config(alias=f"{_SELF}.accumulated_recompile_limit"),
    "fail_on_cache_limit_hit": Config(alias=f"{_SELF}.fail_on_recompile_limit_hit"),
    "error_on_recompile": Config(False),
    # Dynamic shapes.
    "dynamic_shapes": Config(True),
    "assume_static_by_default": Config(True),
    "automatic_dynamic_shapes": Config(_env("TORCH_DYNAMO_AUTOMATIC_DYNAMIC_SHAPES", "1") == "1"),
    "specialize_int": Config(False),
    "specialize_float": Config(False),
    "force_parameter_static_shapes": Config(True),
    "force_nn_module_property_static_shapes": Config(True),
    "allow_unspec_int_on_nn_module": Config(False),
    "capture_scalar_outputs": Config(_env("TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS") == "1"),
    "capture_dynamic_output_shape_ops": Config(
        _env("TORCHDYNAMO_CAPTURE_DYNAMIC_OUTPUT_SHAPE_OPS", "0") == "1"
    ),
    "prefer_deferred_runtime_asserts_over_guards": Config(False),
    # Guards.
    "guard_nn_modules": Config(True),
    "skip_nnmodule_hook_guards": Config(True),
    "skip_tensor_guards_with_matching_dict_tags": Config(True),
    "enable_cpp_symbolic_shape_guards": Config(False),
    # Tracing.
    "inline_inbuilt_nn_modules": Config(
        True,
        deprecation_message="does not do anything, inline_inbuilt_nn_modules is always True",
    ),
    "trace_numpy": Config(True),
    "use_numpy_random_stream": Config(False),
    "wrap_top_frame": Config(False),
    "reorderable_logging_functions": Config(set()),
    "compiled_autograd": Config(False),
    "enable_invoke_subgraph_regional_compile": Config(False),
    # Distributed.
    "optimize_ddp": Config(True),
    "optimize_ddp_lazy_compile": Config(False),
    "enable_compiler_collectives": Config(_env("TORCH_COMPILER_COLLECTIVES", "0") == "1"),
}

install_config_module(sys.modules[__name__], _SETTINGS)
