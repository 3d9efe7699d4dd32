"""flambeau.compiler and flambeau._dynamo: torch.compiler's and torch._dynamo's names for a
framework that runs eagerly (flambeau.compile returns the model).

Decorators return the function they are given, markers record their mark as PyTorch
does, ``is_compiling()`` is False, the config modules hold PyTorch 2.13's settings and
defaults with its errors and ``patch``. The last test runs one program under torch and
under flambeau and compares what they print.
"""

from __future__ import annotations

import operator
import pickle
import subprocess
import sys
import threading
import unittest
import warnings

import pytest

import flambeau
from flambeau_testing.ported import assert_ports_unchanged


def test_reachable_as_torch_compiler_and_torch_dynamo():
    torch = flambeau
    assert torch.compiler.is_compiling() is False
    assert torch._dynamo.is_compiling() is False
    import flambeau._dynamo.config as dynamo_config
    import flambeau.compiler as compiler

    assert compiler is flambeau.compiler and dynamo_config is flambeau._dynamo.config
    assert flambeau.compiler.config is sys.modules["flambeau.compiler.config"]
    for module in (flambeau.compiler, flambeau._dynamo):
        for name in module.__all__:
            assert hasattr(module, name), name
    from flambeau._dynamo.external_utils import is_compiling

    assert is_compiling() is False


def test_torch_compilers_public_names_are_there():
    names = {
        "compile", "config", "assume_constant_result", "reset", "allow_in_graph",
        "substitute_in_graph", "list_backends", "disable", "set_default_backend",
        "get_default_backend", "set_stance", "set_enable_guard_collectives",
        "cudagraph_mark_step_begin", "wrap_numpy", "is_compiling", "is_dynamo_compiling",
        "is_exporting", "save_cache_artifacts", "load_cache_artifacts",
        "keep_portable_guards_unsafe", "skip_guard_on_inbuilt_nn_modules_unsafe",
        "skip_guard_on_all_nn_modules_unsafe", "keep_tensor_guards_unsafe",
        "skip_guard_on_globals_unsafe", "skip_all_guards_unsafe", "nested_compile_region",
        "load_compiled_function",
    }  # fmt: skip
    assert names == set(flambeau.compiler.__all__)


def test_compiling_predicates_are_false():
    c = flambeau.compiler
    assert (c.is_compiling(), c.is_dynamo_compiling(), c.is_exporting()) == (False,) * 3
    assert flambeau._dynamo.is_dynamo_supported() is False
    assert flambeau._dynamo.is_inductor_supported() is False


def f(x):
    return x + 1


@pytest.mark.parametrize(
    "decorate",
    [
        flambeau.compiler.disable,
        flambeau.compiler.disable(),
        flambeau.compiler.disable(recursive=False),
        lambda fn: flambeau.compiler.disable(fn, recursive=False, reason="logging"),
        flambeau._dynamo.disable,
        flambeau._dynamo.disable(),
        flambeau._dynamo.run,
        flambeau._dynamo.run(),
        flambeau._dynamo.optimize("inductor"),
        flambeau._dynamo.optimize(backend="eager", nopython=True, dynamic=False),
        flambeau._dynamo.dont_skip_tracing,
        flambeau._dynamo.dont_skip_tracing(),
        flambeau._dynamo.nonstrict_trace,
        flambeau.compiler.allow_in_graph,
        flambeau._dynamo.allow_in_graph,
        flambeau._dynamo.disallow_in_graph,
        flambeau.compiler.assume_constant_result,
        flambeau.compiler.nested_compile_region,
        flambeau.compiler.nested_compile_region(max_reuse_entries=2),
        flambeau.compile,
        flambeau.compiler.compile,
    ],
)
def test_decorators_return_the_function(decorate):
    assert decorate(f) is f
    assert f(flambeau.zeros(1)).tolist() == [1.0]


def test_decorators_check_their_argument():
    with pytest.raises(AssertionError, match="fn must be callable"):
        flambeau.compiler.disable(3)
    with pytest.raises(AssertionError, match="allow_in_graph expects a callable"):
        flambeau.compiler.allow_in_graph(3)
    assert flambeau.compiler.allow_in_graph((f, len)) == [f, len]
    assert flambeau._dynamo.disallow_in_graph([f]) == [f]
    with pytest.raises(AssertionError, match="forbid_in_graph applies only to callables"):
        flambeau._dynamo.forbid_in_graph(3)


def test_marks_pytorch_sets_on_functions():
    def g():
        return 1

    assert flambeau.compiler.assume_constant_result(g)._dynamo_marked_constant is True
    assert flambeau._dynamo.forbid_in_graph(g)._dynamo_forbidden is True
    assert flambeau.compiler.set_stance._dynamo_forbidden is True


def test_disable_and_optimize_work_as_context_managers():
    with flambeau._dynamo.disable():
        pass
    with flambeau._dynamo.run():
        pass


def test_graph_break_reset_and_step_begin_do_nothing():
    assert flambeau._dynamo.graph_break() is None
    assert flambeau._dynamo.graph_break("why") is None
    assert flambeau._dynamo.reset() is None
    assert flambeau.compiler.reset() is None
    assert flambeau.compiler.cudagraph_mark_step_begin() is None


def test_substitute_in_graph_runs_the_original_eagerly():
    @flambeau.compiler.substitute_in_graph(operator.countOf)
    def count_of(a, b, /):
        return -1  # the stand-in for the compiler; never run eagerly

    assert count_of([1, 2, 1], 1) == 2
    assert count_of.__name__ == "count_of"
    assert count_of.__torch_dynamo_original__ is operator.countOf
    assert count_of.__torch_dynamo_polyfill__.__name__ == "count_of"
    with pytest.raises(ValueError, match="Duplicate polyfilled object"):
        flambeau.compiler.substitute_in_graph(operator.countOf)(count_of.__wrapped__)
    with pytest.raises(TypeError, match="substitute_in_graph expects a function"):
        flambeau.compiler.substitute_in_graph(3)
    with pytest.raises(TypeError, match="Signature mismatch"):

        @flambeau.compiler.substitute_in_graph(operator.is_not)
        def is_not(a, /):
            return True

    def original(x, y=2):
        return x * y

    @flambeau._dynamo.substitute_in_graph(original)
    def replacement(*args, **kwargs):  # a wildcard signature always matches
        return None

    assert replacement(3) == 6


# --------------------------------------------------------------------------- markers


def test_mark_dynamic_records_pytorchs_attributes():
    x = flambeau.zeros(2, 3, 4)
    flambeau._dynamo.mark_dynamic(x, 0, min=2, max=16)
    flambeau._dynamo.mark_dynamic(x, [1, 2])
    assert x._dynamo_dynamic_indices == {0, 1, 2}
    assert {(r.dim, r.min, r.max) for r in x._dynamo_dynamic_range} == {
        (0, 2, 16),
        (1, None, None),
        (2, None, None),
    }
    assert x._has_dynamo_dim_marking is True
    assert x._specialize_on == {0: [], 1: [], 2: []}
    with pytest.raises(AssertionError, match="Expected index to be int, list, or tuple"):
        flambeau._dynamo.mark_dynamic(x, "0")
    assert (x + 1).shape == (2, 3, 4)  # nothing else changes


def test_maybe_mark_dynamic_mark_static_and_static_address():
    x = flambeau.zeros(2, 3)
    flambeau._dynamo.maybe_mark_dynamic(x, (0, 1))
    assert x._dynamo_weak_dynamic_indices == {0, 1}
    flambeau._dynamo.mark_static(x, 1)
    assert x._dynamo_static_indices == {1}
    y = flambeau.zeros(2, 3, 4)
    flambeau._dynamo.mark_static(y)
    assert y._dynamo_static_indices == {0, 1, 2}
    with pytest.raises(TypeError, match="mark_static expects a tensor/nn.Module class"):
        flambeau._dynamo.mark_static([1])

    class Block:
        pass

    assert flambeau._dynamo.mark_static(Block) is Block and Block._dynamo_marked_static
    flambeau._dynamo.mark_static_address(x)
    assert x._dynamo_static_input_type == "unguarded"
    flambeau._dynamo.mark_static_address(x, guard=True)
    assert x._dynamo_static_input_type == "guarded"
    with pytest.raises(TypeError, match="mark_static_address expects a tensor"):
        flambeau._dynamo.mark_static_address(3)
    assert pickle.loads(pickle.dumps(x)).tolist() == x.tolist()


# --------------------------------------------------------------------------- stance, backends


def _stance():
    return flambeau._dynamo.eval_frame._stance.stance


def test_set_stance_as_call_context_manager_and_decorator():
    assert _stance() == "default"
    with flambeau.compiler.set_stance("force_eager"):
        assert _stance() == "force_eager"
    assert _stance() == "default"

    flambeau.compiler.set_stance("eager_on_recompile")
    try:
        assert _stance() == "eager_on_recompile"
    finally:
        flambeau.compiler.set_stance("default")
    assert _stance() == "default"

    @flambeau.compiler.set_stance("fail_on_recompile")
    def run():
        return _stance()

    assert _stance() == "default"  # the decorator applies while the function runs
    assert run() == "fail_on_recompile"
    assert run._dynamo_forbidden is True
    assert _stance() == "default"

    with flambeau.compiler.set_stance(force_backend="eager"):
        assert flambeau._dynamo.eval_frame._stance.backend == "eager"
    with pytest.raises(RuntimeError, match="non-default stance cannot have force_backend set"):
        flambeau.compiler.set_stance("force_eager", force_backend="eager")
    assert _stance() == "default"


def test_list_backends_and_register_backend():
    default = flambeau.compiler.list_backends()
    assert default == ["cudagraphs", "inductor", "openxla", "tvm"]
    everything = flambeau.compiler.list_backends(exclude_tags=())
    assert {"eager", "aot_eager", "inductor"} <= set(everything)
    assert everything == sorted(everything)
    assert flambeau._dynamo.list_backends(None) == everything

    def my_backend(gm, example_inputs):
        return gm.forward

    assert flambeau._dynamo.register_backend(my_backend, tags=("debug",)) is my_backend
    assert my_backend._tags == ("debug",)
    assert "my_backend" in flambeau.compiler.list_backends(exclude_tags=())
    assert "my_backend" not in flambeau.compiler.list_backends()
    with pytest.raises(AssertionError, match="duplicate name: my_backend"):
        flambeau._dynamo.register_backend(my_backend)

    @flambeau._dynamo.register_backend(name="named_backend")
    def whatever(gm, example_inputs):
        return gm.forward

    assert "named_backend" in flambeau.compiler.list_backends()
    with pytest.raises(AssertionError, match="compiler_fn must be callable"):
        flambeau._dynamo.register_backend(3)
    # flambeau.compile accepts every listed name, and runs eagerly
    for name in everything:
        assert flambeau.compile(f, backend=name) is f


def test_default_backend():
    c = flambeau.compiler
    assert c.get_default_backend() == "inductor"
    c.set_default_backend("eager")
    try:
        assert c.get_default_backend() == "eager"
        c.set_default_backend(f)
        assert c.get_default_backend() is f
        with pytest.raises(TypeError, match="backend must be a string or callable"):
            c.set_default_backend(3)
    finally:
        c.set_default_backend(None)
    assert c.get_default_backend() == "inductor"


def test_guard_collectives_and_caches():
    c = flambeau.compiler
    assert c.set_enable_guard_collectives(True) is False
    assert c.set_enable_guard_collectives(False) is True
    assert c.save_cache_artifacts() is None
    assert c.load_cache_artifacts(b"anything") is None


def test_guard_filters_on_pytorchs_entries():
    class Entry:
        def __init__(self, guard_type, is_global=False, value=None):
            self.guard_type, self.is_global, self.value = guard_type, is_global, value

    entries = [
        Entry("TENSOR_MATCH"),
        Entry("TENSOR_MATCH", is_global=True),
        Entry("SHAPE_ENV"),
        Entry("ID_MATCH", is_global=True),
    ]
    c = flambeau.compiler
    assert c.keep_portable_guards_unsafe(entries) == [True, False, True, False]
    assert c.keep_tensor_guards_unsafe(entries) == [True, True, False, False]
    assert c.skip_guard_on_globals_unsafe(entries) == [True, False, True, False]
    assert c.skip_all_guards_unsafe(entries) == [False] * 4


def test_wrap_numpy_converts_tensors_and_arrays():
    np = pytest.importorskip("numpy")

    @flambeau.compiler.wrap_numpy
    def fn(a, scale=1.0, *, bias):
        assert isinstance(a, np.ndarray) and isinstance(bias, np.ndarray)
        return {"out": a * scale + bias, "n": a.size}

    out = fn(flambeau.tensor([1.0, 2.0]), 2.0, bias=flambeau.tensor([0.5, 0.5]))
    assert isinstance(out["out"], flambeau.Tensor) and out["out"].tolist() == [2.5, 4.5]
    assert out["n"] == 2
    assert fn.__name__ == "fn"


def test_nested_compile_region_options_need_the_experimental_flag():
    with pytest.raises(RuntimeError, match="experimental feature for testing only"):
        flambeau.compiler.nested_compile_region(f, options=object())


def test_optimized_module_is_never_made():
    from flambeau._dynamo.eval_frame import OptimizedModule, innermost_fn

    assert flambeau._dynamo.OptimizedModule is OptimizedModule
    assert not isinstance(flambeau.compile(f), OptimizedModule)
    with pytest.raises(RuntimeError, match="no OptimizedModule is ever made"):
        OptimizedModule(f)
    assert innermost_fn(f) is f


# --------------------------------------------------------------------------- config


def test_dynamo_config_defaults_are_pytorchs():
    config = flambeau._dynamo.config
    expected = {
        "suppress_errors": False,
        "verbose": False,
        "recompile_limit": 8,
        "cache_size_limit": 8,
        "accumulated_recompile_limit": 256,
        "accumulated_cache_size_limit": 256,
        "capture_scalar_outputs": False,
        "capture_dynamic_output_shape_ops": False,
        "optimize_ddp": True,
        "automatic_dynamic_shapes": True,
        "assume_static_by_default": True,
        "dynamic_shapes": True,
        "specialize_int": False,
        "specialize_float": False,
        "disable": False,
        "log_file_name": None,
        "reorderable_logging_functions": set(),
    }
    for name, value in expected.items():
        assert getattr(config, name) == value, name


def test_config_aliases_share_one_value():
    config = flambeau._dynamo.config
    config.cache_size_limit = 64
    try:
        assert config.recompile_limit == 64
        assert flambeau.compiler.config.recompile_limit == 64
        flambeau.compiler.config.recompile_limit = 3
        assert config.cache_size_limit == 3
    finally:
        config.recompile_limit = 8
    assert config.cache_size_limit == 8


def test_config_deleted_setting_reads_as_absent_until_set():
    config = flambeau._dynamo.config
    del config.error_on_recompile
    try:
        assert not hasattr(config, "error_on_recompile")
    finally:
        config.error_on_recompile = False
    assert config.error_on_recompile is False


def test_config_unknown_names_are_attribute_errors():
    config = flambeau._dynamo.config
    with pytest.raises(
        AttributeError, match=r"flambeau._dynamo.config.no_such_flag does not exist"
    ):
        _ = config.no_such_flag
    with pytest.raises(AttributeError, match="does not exist"):
        config.no_such_flag = True
    assert not hasattr(config, "no_such_flag")
    assert "cache_size_limit" in dir(config)


def test_config_patch_forms():
    config = flambeau._dynamo.config
    with config.patch("suppress_errors", True):
        assert config.suppress_errors is True
    with config.patch({"verbose": True, "recompile_limit": 2}):
        assert (config.verbose, config.recompile_limit) == (True, 2)
    with config.patch(capture_scalar_outputs=True):
        assert config.capture_scalar_outputs is True
        with config.patch(capture_scalar_outputs=False):
            assert config.capture_scalar_outputs is False
        assert config.capture_scalar_outputs is True
    assert (config.suppress_errors, config.verbose, config.capture_scalar_outputs) == (
        False,
        False,
        False,
    )

    @config.patch(optimize_ddp=False)
    def read():
        return config.optimize_ddp

    assert read() is False and config.optimize_ddp is True
    with pytest.raises(AttributeError):
        with config.patch(no_such_flag=1):
            pass
    with pytest.raises(AssertionError, match="first argument must be a string"):
        config.patch(1, 2)
    with pytest.raises(AssertionError, match="first argument must be a dict"):
        config.patch("verbose")
    with pytest.raises(AssertionError, match="cannot pass both positional and keyword"):
        config.patch({"verbose": True}, verbose=True)


def test_config_patch_decorates_test_cases():
    config = flambeau._dynamo.config

    @config.patch(recompile_limit=5)
    class Case(unittest.TestCase):
        def test_limit(self):
            assert config.recompile_limit == 5

    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(Case).run(result)
    assert result.wasSuccessful() and result.testsRun == 1
    assert Case.__name__ == "Case" and config.recompile_limit == 8


def test_config_copy_save_and_load():
    config = flambeau._dynamo.config
    copy = config.get_config_copy()
    assert copy["recompile_limit"] == 8 and "cache_size_limit" not in copy
    saved = config.save_config()
    config.recompile_limit = 99
    try:
        config.load_config(saved)
        assert config.recompile_limit == 8
        config.load_config({"recompile_limit": 7})
        assert config.recompile_limit == 7
        with pytest.warns(UserWarning, match="not understood by this config"):
            config.load_config({"no_such_flag": 1})
        with pytest.warns(FutureWarning, match="to_dict"):
            assert config.to_dict()["recompile_limit"] == 7
    finally:
        config.recompile_limit = 8


def test_config_mutable_defaults_are_copied():
    config = flambeau._dynamo.config
    with config.patch(reorderable_logging_functions={len}):
        config.reorderable_logging_functions.add(print)
        assert config.reorderable_logging_functions == {len, print}
    config.reorderable_logging_functions.add(print)  # edits the copy read, not the default
    try:
        assert config._config["reorderable_logging_functions"].default == set()
    finally:
        config.reorderable_logging_functions = set()


def test_config_settings_belong_to_the_thread_that_sets_them():
    config = flambeau._dynamo.config
    seen = []
    with config.patch(recompile_limit=50):
        thread = threading.Thread(target=lambda: seen.append(config.recompile_limit))
        thread.start()
        thread.join()
    assert seen == [8]


def test_deprecated_setting_warns():
    config = flambeau._dynamo.config
    config._config["inline_inbuilt_nn_modules"]._warned = False
    with pytest.warns(FutureWarning, match="inline_inbuilt_nn_modules is deprecated"):
        assert config.inline_inbuilt_nn_modules is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert config.inline_inbuilt_nn_modules is True  # once


def test_compiler_config():
    config = flambeau.compiler.config
    assert (config.job_id, config.cache_key_tag, config.force_disable_caches) == (None, "", False)
    assert config.dynamic_sources == ""
    assert config.automatic_dynamic_shapes is True
    with pytest.raises(AttributeError, match="flambeau.compiler.config.cache_size_limit"):
        _ = config.cache_size_limit


def test_config_reads_pytorchs_environment_variables():
    code = (
        "import flambeau; c = flambeau._dynamo.config; cc = flambeau.compiler.config; "
        "print(c.suppress_errors, c.verbose, c.automatic_dynamic_shapes, cc.job_id, "
        "cc.force_disable_caches, cc.cache_key_tag)"
    )
    env = {
        "TORCHDYNAMO_SUPPRESS_ERRORS": "1",
        "TORCHDYNAMO_VERBOSE": "1",
        "TORCH_DYNAMO_AUTOMATIC_DYNAMIC_SHAPES": "0",
        "TORCH_COMPILE_JOB_ID": "run7",
        "TORCH_COMPILE_FORCE_DISABLE_CACHES": "1",
        "TORCH_COMPILE_CACHE_KEY_TAG": "tag",
    }
    import os

    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=True,
        timeout=120,
    ).stdout.split()
    assert out == ["True", "True", "False", "run7", "True", "tag"]


# --------------------------------------------------------------------------- against torch

_PORTED_PROGRAM = """
import {module} as torch
import {module}._dynamo
import {module}._dynamo.config

def f(x):
    return x + 1

print(torch.compiler.is_compiling(), torch.compiler.is_dynamo_compiling(),
      torch.compiler.is_exporting(), torch._dynamo.is_compiling())
print(torch.compiler.list_backends())
print(all(b in torch.compiler.list_backends(exclude_tags=()) for b in ("eager", "aot_eager")))
print(torch.compiler.disable(f)(torch.ones(2)).tolist())
print(torch._dynamo.disable(recursive=False)(f)(torch.zeros(1)).tolist())
print(torch.compiler.allow_in_graph(f) is f, torch.compiler.assume_constant_result(f) is f)
x = torch.zeros(2, 3)
torch._dynamo.mark_dynamic(x, 0)
torch._dynamo.maybe_mark_dynamic(x, 1)
torch._dynamo.mark_static(x, 1)
torch._dynamo.mark_static_address(x)
print(x._dynamo_dynamic_indices, x._dynamo_weak_dynamic_indices)
print(x._dynamo_static_indices, x._dynamo_static_input_type)
c = torch._dynamo.config
print(c.cache_size_limit, c.accumulated_cache_size_limit, c.suppress_errors,
      c.capture_scalar_outputs, c.capture_dynamic_output_shape_ops, c.optimize_ddp, c.verbose,
      c.automatic_dynamic_shapes,
      c.assume_static_by_default, c.specialize_int, c.dynamic_shapes, c.guard_nn_modules)
with c.patch(cache_size_limit=3):
    print(c.recompile_limit, torch.compiler.config.recompile_limit)
try:
    c.no_such_flag = 1
except AttributeError as e:
    print("AttributeError", str(e).replace("{module}", "M"))
with torch.compiler.set_stance("force_eager"):
    print(f(torch.ones(1)).tolist())
try:
    torch.compiler.set_stance("force_eager", force_backend="eager")
except RuntimeError as e:
    print("RuntimeError", e)
print(torch.compiler.get_default_backend(), torch.compiler.save_cache_artifacts())
"""


def test_a_program_ports_with_the_same_output_as_torch():
    pytest.importorskip("torch")
    assert_ports_unchanged(_PORTED_PROGRAM, timeout=300)
