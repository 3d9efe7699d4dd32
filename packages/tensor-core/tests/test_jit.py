"""flambeau.jit: PyTorch's torch.jit as it behaves with the JIT disabled (PYTORCH_JIT=0).

Scripted and traced programs run eagerly; the decorators leave functions as written;
TorchScript archives raise clear errors. The last test runs one program under torch
(with PYTORCH_JIT=0) and under flambeau and compares what they print.
"""

# ruff: noqa: UP006, UP007, UP045  (typing's List, Optional...: what TorchScript code spells)
import io
import os
import subprocess
import sys
import textwrap
import warnings
import zipfile
from typing import Dict, List, Optional, Tuple, Union  # noqa: UP035

import pytest

import flambeau
import flambeau.jit as jit


def _nn():
    return pytest.importorskip("flambeau.nn")


@pytest.fixture(autouse=True)
def _quiet_deprecations():
    # Every TorchScript entry point warns that it is deprecated, as PyTorch's do.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def test_flambeau_jit_and_hub_load_on_first_access():
    program = "import flambeau; print(flambeau.jit.is_scripting(), callable(flambeau.hub.load))"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.stdout.splitlines()[-1:] == ["False True"], done.stderr
    assert flambeau.jit is jit


def test_script_returns_its_argument():
    def f(x):
        return x + 1

    class Point:
        pass

    table = {"a": 1}
    assert jit.script(f) is f
    assert jit.script(Point) is Point
    assert jit.script(table) is table
    assert jit.script(f, optimize=None, example_inputs=[(flambeau.ones(1),)]) is f
    assert jit.script_method(f) is f
    assert jit.is_scripting() is False and jit.is_tracing() is False


def test_script_and_trace_warn_deprecated():
    with pytest.warns(DeprecationWarning, match="flambeau.jit.script"):
        jit.script(abs)
    with pytest.warns(DeprecationWarning, match="flambeau.jit.trace"):
        jit.trace(abs, (flambeau.ones(1),))


def test_trace_runs_the_function_once_and_returns_it():
    calls = []

    def f(x, y):
        calls.append((x.shape, y.shape))
        return x + y

    assert jit.trace(f, (flambeau.ones(2), flambeau.ones(2))) is f
    assert len(calls) == 1
    g = jit.trace(lambda x: x * 2, flambeau.ones(3))  # a single tensor is wrapped
    assert flambeau.equal(g(flambeau.ones(3)), flambeau.full((3,), 2.0))
    assert jit.trace(lambda x=0, y=0: calls.append(y), example_kwarg_inputs={"y": 5})
    assert calls[-1] == 5
    with pytest.raises(RuntimeError, match="shape|size"):
        jit.trace(f, (flambeau.ones(2), flambeau.ones(3)))  # inputs that do not fit fail here
    with pytest.raises(TypeError):
        jit.trace(f)  # no example inputs, as in PyTorch
    with pytest.raises(RuntimeError, match="example_kwarg_inputs should be a dict"):
        jit.trace(f, example_kwarg_inputs=[1])
    with pytest.warns(FutureWarning, match="optimize"):
        jit.trace(lambda x: x, flambeau.ones(1), optimize=True)


def test_trace_of_a_module_runs_forward_through_call():
    nn = _nn()
    hooks = []
    model = nn.Linear(3, 2)
    model.register_forward_hook(lambda m, i, o: hooks.append(o.shape))
    assert jit.trace(model, flambeau.ones(4, 3)) is model
    assert hooks == [flambeau.Size([4, 2])]
    assert jit.trace(model.forward, flambeau.ones(3)) == model.forward
    assert len(hooks) == 2
    assert jit.trace(model, example_kwarg_inputs={"input": flambeau.ones(3)}) is model
    with pytest.raises(NameError, match="'x' is not in forward"):
        jit.trace(model, example_kwarg_inputs={"x": flambeau.ones(3)})
    with pytest.raises(RuntimeError, match="example_kwarg_inputs should be a dict"):
        jit.trace(model)
    with pytest.raises(AttributeError, match="use trace_module"):
        jit.trace(model.extra_repr, ())


def test_trace_module_runs_each_method():
    nn = _nn()

    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.seen = []

        def forward(self, x):
            self.seen.append("forward")
            return x

        def score(self, x, scale=1.0):
            self.seen.append(("score", scale))
            return x * scale

    m = TwoHeads()
    inputs = {"forward": flambeau.ones(1), "score": (flambeau.ones(1), 2.0)}
    assert jit.trace_module(m, inputs) is m
    assert m.seen == ["forward", ("score", 2.0)]
    jit.trace_module(
        m, {"score": {"x": flambeau.ones(1), "scale": 3.0}}, example_inputs_is_kwarg=True
    )
    assert m.seen[-1] == ("score", 3.0)
    with pytest.raises(AttributeError, match="expected flambeau.nn.Module"):
        jit.trace_module(lambda x: x, {"forward": flambeau.ones(1)})
    with pytest.raises(AttributeError, match="dictionary of"):
        jit.trace_module(m, flambeau.ones(1))


def test_tracing_a_script_module_is_a_no_op_with_a_warning():
    _nn()

    class Calls(jit.ScriptModule):
        def forward(self, x):
            raise AssertionError("not run")

    m = Calls()
    with pytest.warns(UserWarning, match="already a ScriptModule"):
        assert jit.trace(m, flambeau.ones(1)) is m


def test_script_if_tracing_wraps_and_calls():
    def f(x):
        return x + 1

    wrapped = jit.script_if_tracing(f)
    assert wrapped is not f and wrapped.__wrapped__ is f and wrapped.__name__ == "f"
    assert flambeau.equal(wrapped(flambeau.zeros(1)), flambeau.ones(1))
    assert jit._script_if_tracing is jit.script_if_tracing


class _Model:
    """Built in a function: the module classes need flambeau-nn."""

    @staticmethod
    def make():
        nn = _nn()

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)
                self.debug_calls = 0

            def forward(self, x):
                if jit.is_scripting():
                    raise AssertionError("the scripted branch never runs eagerly")
                y = self.fc(x)
                self.record(y)
                return self.unscriptable(y) if not jit.is_tracing() else y

            @jit.ignore
            def record(self, y):
                self.debug_calls += 1

            @jit.unused
            def unscriptable(self, y):
                return y * 2

            @jit.export
            def half(self, x):
                return self.forward(x) / 2

            @jit.unused
            @property
            def size(self):
                return 2

        return Model


def test_scripted_module_runs_eagerly_with_decorated_methods():
    model = _Model.make()()
    scripted = jit.script(model)
    assert scripted is model
    x = flambeau.ones(3, 2)
    out = scripted(x)
    expected = model.fc(x) * 2
    assert flambeau.allclose(out, expected) and model.debug_calls == 1
    assert flambeau.allclose(scripted.half(x), expected / 2)
    assert scripted.size == 2
    state = {k: v.clone() for k, v in scripted.state_dict().items()}
    assert set(state) == {"fc.weight", "fc.bias"}
    frozen = jit.optimize_for_inference(jit.freeze(scripted.eval()))
    assert frozen is model and not frozen.training


def test_decorators_mark_functions_as_torch_does():
    def f():
        return 1

    assert jit.export(f) is f and "export" in f._torchscript_modifier
    assert jit.unused(f) is f and "unused" in f._torchscript_modifier
    assert jit.ignore(f) is f and "ignore" in f._torchscript_modifier
    assert jit.ignore(drop=False)(f) is f and "ignore" in f._torchscript_modifier
    with pytest.warns(FutureWarning, match="ignore\\(True\\) has been deprecated"):
        decorator = jit.ignore(True)
    assert "unused" in decorator(f)._torchscript_modifier
    with pytest.warns(FutureWarning, match="drop_on_export"):
        jit.ignore(drop_on_export=True)
    with pytest.raises(RuntimeError, match="must be a bool or a function but got 3"):
        jit.ignore(3)
    prop = property(lambda self: 1, lambda self, v: None)
    assert jit.unused(prop) is prop and "unused" in prop.fset._torchscript_modifier
    assert jit._drop(f) is f and jit._overload(f) is f and jit._overload_method(f) is f


def test_script_module_subclasses_are_plain_modules():
    nn = _nn()

    class Counter(jit.ScriptModule):
        __constants__ = ["limit"]
        limit: jit.Final[int]

        def __init__(self):
            super().__init__()
            self.limit = 3
            self.names = jit.Attribute({}, Dict[str, int])
            self.scale = nn.Parameter(flambeau.ones(2))

        @jit.script_method
        def forward(self, x):
            self.names["calls"] = self.names.get("calls", 0) + 1
            return x * self.scale

    m = Counter()
    assert isinstance(m, nn.Module) and isinstance(m, jit.ScriptModule)
    assert not isinstance(m, jit.RecursiveScriptModule)
    assert issubclass(jit.RecursiveScriptModule, jit.ScriptModule)
    assert issubclass(jit.TopLevelTracedModule, jit.TracedModule)
    out = m(flambeau.full((2,), 3.0))
    assert flambeau.equal(out.detach(), flambeau.full((2,), 3.0)) and m.names == {"calls": 1}
    assert [n for n, _ in m.named_parameters()] == ["scale"]
    assert jit.ScriptModule(arg=object()) is not None
    with pytest.raises(RuntimeError, match="does not trace"):
        jit.TracedModule(nn.Linear(1, 1))
    with pytest.raises(RuntimeError, match="no tracer"):
        jit.ONNXTracedModule(nn.Linear(1, 1))(flambeau.ones(1))
    assert "ScriptModule" in dir(jit)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        jit.nope  # noqa: B018


def test_annotations_pass_values_through():
    value = []
    assert jit.annotate(List[int], value) is value
    assert jit.Attribute(0.5, float) == 0.5
    assert jit.Final is __import__("typing").Final
    assert jit._unwrap_optional(3) == 3
    with pytest.raises(AssertionError, match="Unwrapping null optional"):
        jit._unwrap_optional(None)


def test_isinstance_refines_containers():
    t = flambeau.ones(1)
    assert jit.isinstance([t, t], List[flambeau.Tensor])
    assert not jit.isinstance([t, 1], List[flambeau.Tensor])
    assert jit.isinstance({"a": [1, 2]}, Dict[str, List[int]])
    assert not jit.isinstance({"a": [1, "b"]}, Dict[str, List[int]])
    assert jit.isinstance((1, "a"), Tuple[int, str])
    assert not jit.isinstance((1, "a", 2), Tuple[int, str])
    assert jit.isinstance(None, Optional[List[int]])
    assert jit.isinstance([1], Optional[List[int]])
    assert jit.isinstance(1, (str, int)) and not jit.isinstance(1.0, (str, int))
    assert jit.isinstance("a", Union[List[int], str])  # PyTorch's eager check says False
    assert jit.isinstance([1], list[int]) and jit.isinstance(2, int | None)
    assert not jit.isinstance([1], Dict[str, int])
    for bare in (List, Dict, Tuple, Optional, list, dict, tuple):
        with pytest.raises(RuntimeError, match="without (a )?contained type"):
            jit.isinstance([1], bare)
    with pytest.raises(RuntimeError, match="must be a type or a tuple of types"):
        jit.isinstance([1], [int])
    with pytest.warns(UserWarning, match="inner type of a container is lost"):
        assert jit.isinstance([], List[float])


def test_fork_runs_now_and_wait_returns_its_value():
    order = []
    fut = jit.fork(lambda a, b=0: order.append("ran") or a + b, 1, b=2)
    assert order == ["ran"] and fut.done() and isinstance(fut, jit.Future)
    assert jit.wait(fut) == 3 and jit._wait(jit._fork(len, "ab")) == 2
    with pytest.raises(ZeroDivisionError):
        jit.fork(lambda: 1 / 0)  # raised by fork itself, as outside TorchScript in PyTorch
    with pytest.raises(TypeError, match="expected a flambeau.jit.Future"):
        jit.wait(3)


def test_optimization_settings_keep_their_values():
    assert jit.onednn_fusion_enabled() is False
    jit.enable_onednn_fusion(True)
    try:
        assert jit.onednn_fusion_enabled() is True
        with jit.fuser("fuser1"):
            assert jit.onednn_fusion_enabled() is False
        assert jit.onednn_fusion_enabled() is True
    finally:
        jit.enable_onednn_fusion(False)
    with jit.fuser("fuser3"):
        assert jit.onednn_fusion_enabled()
    with pytest.raises(Exception, match="unrecognized fuser option \\(name: fuser9\\)"):
        with jit.fuser("fuser9"):
            pass
    old = jit.set_fusion_strategy([("DYNAMIC", 3)])
    assert old == [("STATIC", 2), ("DYNAMIC", 10)]
    assert jit._set_fusion_strategy(old) == [("DYNAMIC", 3)]
    with pytest.raises(ValueError, match="only supported 'STATIC' or 'DYNAMIC', got: FOO"):
        jit.set_fusion_strategy([("FOO", 1)])
    with pytest.raises(TypeError):
        jit.set_fusion_strategy([("STATIC", "2")])
    with jit.optimized_execution(False):
        pass
    assert jit.last_executed_optimized_graph() is None
    with pytest.warns(UserWarning, match="Only works in script mode"):
        with jit.strict_fusion():
            pass


def test_freeze_checks_what_torch_checks():
    nn = _nn()
    model = nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        jit.freeze(model)
    assert jit.freeze(model.eval(), preserved_attrs=["weight"]) is model
    assert jit.run_frozen_optimizations(model) is None
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
        jit.freeze(lambda x: x)
    with pytest.raises(RuntimeError, match="optimize_for_inference expects a ScriptModule"):
        jit.optimize_for_inference(lambda x: x)
    model.train()
    assert jit.optimize_for_inference(model) is model and not model.training


def test_script_types():
    with pytest.raises(TypeError, match="No constructor defined"):
        jit.ScriptFunction()
    assert issubclass(jit.Error, Exception) and jit.Error.__module__ == "flambeau.jit"
    assert issubclass(jit.TracerWarning, Warning) and issubclass(jit.ScriptWarning, Warning)
    message = str(jit.TracingCheckError("graph a\ngraph b", "values", "extra"))
    assert message == (
        "Tracing failed sanity checks!\nextra\nERROR: Graphs differed across invocations!\n"
        "\tgraph a\n\tgraph b\nERROR: Tensor-valued Constant nodes differed in value across "
        "invocations. This often indicates that the tracer has encountered untraceable code."
        "\n\tvalues\n"
    )
    assert str(jit.TracingCheckError(None, None)) == "Tracing failed sanity checks!\n"
    with warnings.catch_warnings():
        jit.TracerWarning.ignore_lib_warnings()


def test_compilation_unit_runs_torchscript_source_as_python():
    offset = 10  # noqa: F841 - the source uses it: names resolve in the caller's scope
    cu = jit.CompilationUnit(
        textwrap.dedent(
            """
            def add(x, y: int):
                return torch.add(x, y) + offset

            def twice(x: List[int]) -> List[int]:
                return x + x
            """
        )
    )
    assert flambeau.equal(cu.add(flambeau.zeros(1), 1), flambeau.full((1,), 11.0))
    assert cu.twice([1]) == [1, 1]
    cu.define("def thrice(x):\n    return add(x, 0) * 3\n")
    assert flambeau.equal(cu.thrice(flambeau.zeros(1)), flambeau.full((1,), 30.0))
    assert cu.find_function("missing") is None
    assert sorted(f.__name__ for f in cu.get_functions()) == ["add", "thrice", "twice"]
    with pytest.raises(AttributeError, match="'CompilationUnit' has no attribute 'nope'"):
        cu.nope  # noqa: B018


def test_save_raises_attribute_error_pointing_to_state_dict():
    nn = _nn()
    model = jit.script(nn.Linear(2, 2))
    for call in (
        lambda: jit.save(model, io.BytesIO()),
        lambda: jit.save(model, "model.pt"),
        lambda: jit.save_jit_module_to_flatbuffer(model, "model.ff"),
    ):
        with pytest.raises(AttributeError, match="not a TorchScript module.*state_dict"):
            call()
    with pytest.raises(AttributeError, match="not a TorchScript module"):
        jit.export_opnames(model)


def test_load_says_what_the_file_is(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        jit.load(str(tmp_path / "missing.pt"))
    with pytest.raises(ValueError, match="is a directory"):
        jit.load(tmp_path)
    archive = tmp_path / "scripted.pt"
    with zipfile.ZipFile(archive, "w") as zf:  # the layout torch.jit.save writes
        zf.writestr("scripted/constants.pkl", b"")
        zf.writestr("scripted/data.pkl", b"")
    with pytest.raises(RuntimeError, match="a TorchScript archive .*flambeau.load"):
        jit.load(archive)
    with pytest.raises(RuntimeError, match="TorchScript archive"):
        jit.load(io.BytesIO(archive.read_bytes()), map_location="cpu")
    checkpoint = tmp_path / "weights.pt"
    flambeau.save({"w": flambeau.ones(1)}, checkpoint)
    with pytest.raises(RuntimeError, match="not a TorchScript archive .*loads with flambeau.load"):
        jit.load(str(checkpoint))
    with pytest.raises(ValueError, match="map_location should be either None, string"):
        jit.load(str(checkpoint), map_location=3)
    with pytest.raises(RuntimeError, match="cannot load TorchScript modules"):
        jit.jit_module_from_flatbuffer(str(checkpoint))


def test_interface_checks_the_class():
    nn = _nn()

    class Plain:
        def run(self, x):
            pass

    class ModuleInterface(nn.Module):
        def forward(self, x):
            pass

    class Derived(Plain):
        pass

    assert jit.interface(Plain) is Plain
    assert jit.interface(ModuleInterface) is ModuleInterface
    with pytest.raises(RuntimeError, match="interface must be applied to a class"):
        jit.interface(lambda: 0)
    with pytest.raises(RuntimeError, match="does not support inheritance"):
        jit.interface(Derived)


def test_public_names_cover_torch_jit():
    """Every public name of torch.jit that is API (the coverage tool's rule) exists."""
    wanted = {
        "Attribute", "CompilationUnit", "Error", "Final", "Future", "ONNXTracedModule",
        "RecursiveScriptClass", "RecursiveScriptModule", "ScriptFunction", "ScriptModule",
        "ScriptWarning", "TopLevelTracedModule", "TracedModule", "TracerWarning",
        "TracingCheckError", "annotate", "enable_onednn_fusion", "export", "export_opnames",
        "fork", "freeze", "fuser", "ignore", "interface", "is_scripting", "is_tracing",
        "isinstance", "jit_module_from_flatbuffer", "last_executed_optimized_graph", "load",
        "onednn_fusion_enabled", "optimize_for_inference", "optimized_execution",
        "run_frozen_optimizations", "save", "save_jit_module_to_flatbuffer", "script",
        "script_if_tracing", "script_method", "set_fusion_strategy", "strict_fusion",
        "trace", "trace_module", "unused", "wait",
    }  # fmt: skip
    _nn()
    assert not sorted(n for n in wanted if not hasattr(jit, n))
    assert set(jit.__all__) <= set(dir(jit))


_PORTED_PROGRAM = """
import warnings
warnings.simplefilter("ignore")
import {module} as torch
from typing import Dict, List

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 2)

    def forward(self, x):
        if torch.jit.is_scripting() or torch.jit.is_tracing():
            return x
        return self.helper(self.fc(x))

    @torch.jit.unused
    def helper(self, y):
        return y.relu()

    @torch.jit.export
    def total(self, x):
        return self.forward(x).sum()

class Legacy(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.d = torch.jit.Attribute({{}}, Dict[str, int])

    @torch.jit.script_method
    def forward(self, x):
        return x + 1

torch.manual_seed(0)
net = Net()
x = torch.ones(1, 2)
print(torch.jit.script(net) is net, torch.jit.trace(net, x) is net)
print(type(torch.jit.script_if_tracing(len)).__name__, torch.jit.script_if_tracing(len)("ab"))
print(torch.jit.isinstance([x], List[torch.Tensor]))
print(torch.jit.isinstance({{"a": 1}}, Dict[str, str]))
print(torch.jit.wait(torch.jit.fork(lambda a: a * 2, 21)), torch.jit.annotate(int, 3))
print(isinstance(Legacy(), torch.nn.Module), Legacy().d, Legacy()(torch.zeros(1)).tolist())
print(torch.jit.onednn_fusion_enabled(), torch.jit.set_fusion_strategy([("STATIC", 1)]))
print(torch.jit.last_executed_optimized_graph(), issubclass(torch.jit.Error, Exception))
try:
    torch.jit.save(net, "unused.pt")
except AttributeError:
    print("save: AttributeError")
try:
    torch.jit.load("missing.pt")
except ValueError:
    print("load: ValueError")
"""


def test_a_program_ports_with_the_same_output_as_torch_without_jit():
    pytest.importorskip("torch")
    env = {**os.environ, "PYTORCH_JIT": "0"}
    outputs = []
    for module in ("torch", "flambeau"):
        program = _PORTED_PROGRAM.format(module=module)
        done = subprocess.run(
            [sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
