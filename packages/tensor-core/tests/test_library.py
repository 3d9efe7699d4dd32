"""flambeau.library: custom operators defined, dispatched, differentiated and listed,
with Python kernels (C++ kernels: packages/cpp-extension/tests)."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

import flambeau
from flambeau import library

_names = itertools.count()


@pytest.fixture
def lib():
    """A fresh namespace per test; its operators are removed afterwards."""
    lib = library.Library(f"testlib{next(_names)}", "DEF")
    yield lib
    lib._destroy()


def op(lib, name):
    return getattr(getattr(flambeau.ops, lib.ns), name)


def myadd(x, y, alpha=1.0):
    return flambeau.add(x, y, alpha=alpha)


def test_define_impl_and_call(lib):
    assert lib.define("myadd(Tensor x, Tensor y, float alpha=1.0) -> Tensor") == "myadd"
    lib.impl("myadd", myadd, "CPU")
    a, b = np.array([1.0, 2.0]), np.array([0.5, -4.0])
    out = op(lib, "myadd")(flambeau.tensor(a), flambeau.tensor(b), alpha=2.0)
    np.testing.assert_allclose(out.numpy(), a + 2.0 * b)
    np.testing.assert_allclose(
        op(lib, "myadd").default(flambeau.tensor(a), flambeau.tensor(b)).numpy(), a + b
    )


def test_arguments_are_bound_and_checked_against_the_schema(lib):
    lib.define("scale(Tensor x, *, float factor=2.0, int[] dims=[0]) -> Tensor")
    seen = {}

    def kernel(x, *, factor, dims):
        seen.update(factor=factor, dims=dims)
        return x * factor

    lib.impl("scale", kernel, "cpu")
    scale = op(lib, "scale")
    assert scale(flambeau.ones(2)).tolist() == [2.0, 2.0]
    assert seen == {"factor": 2.0, "dims": [0]}
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        scale(flambeau.ones(2), 3.0)  # factor is keyword-only
    with pytest.raises(TypeError, match="argument 'x' must be Tensor, not list"):
        scale([1.0])
    with pytest.raises(TypeError, match="missing required argument 'x'"):
        scale(factor=1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        scale(flambeau.ones(1), bogus=1)


def test_dispatch_by_device_and_missing_kernel_error(lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x + 1, "CUDA")
    with pytest.raises(
        NotImplementedError, match=rf"'{lib.ns}::f' with arguments from the 'cpu' backend"
    ):
        op(lib, "f")(flambeau.zeros(1))
    lib.impl("f", lambda x: x - 1, "CompositeExplicitAutograd")  # every other device
    assert op(lib, "f")(flambeau.zeros(1)).tolist() == [-1.0]
    lib.impl("f", lambda x: x * 0 + 7, "cpu")  # a device's own kernel comes first
    assert op(lib, "f")(flambeau.zeros(1)).tolist() == [7.0]


def test_registration_errors(lib):
    with pytest.raises(ValueError, match="Unsupported kind"):
        library.Library("whatever", "BOGUS")
    with pytest.raises(ValueError, match="reserved namespace"):
        library.Library("aten", "DEF")
    with pytest.raises(RuntimeError, match="Only a single"):
        library.Library(lib.ns, "DEF")
    lib.define("g(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="same name and overload name"):
        lib.define("g(Tensor y) -> Tensor")
    lib.impl("g", lambda x: x, "cpu")
    with pytest.raises(RuntimeError, match="already a kernel registered"):
        lib.impl("g", lambda x: x, "cpu")
    with pytest.raises(RuntimeError, match="Cannot define an operator inside"):
        library.Library(lib.ns, "IMPL").define("h(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="not defined"):
        lib.impl("nonexistent", lambda x: x, "cpu")
    with pytest.raises(RuntimeError, match="Schema parsing failed"):
        lib.define("broken(Tensor x")
    with pytest.raises(RuntimeError, match="cannot parse the argument"):
        lib.define("broken(Tensr x) -> Tensor")
    fragment = library.Library(lib.ns, "FRAGMENT")  # more operators in the namespace
    fragment.define("h(Tensor x) -> Tensor")
    fragment._destroy()


def test_overloads(lib):
    lib.define("pick(Tensor x) -> Tensor")
    lib.define("pick.int(Tensor x, int n) -> Tensor")
    lib.impl("pick", lambda x: x, "cpu")
    lib.impl("pick.int", lambda x, n: x * n, "cpu")
    pick = op(lib, "pick")
    assert sorted(pick.overloads()) == ["default", "int"]
    assert pick(flambeau.ones(1)).tolist() == [1.0]
    assert pick(flambeau.ones(1), 3).tolist() == [3.0]
    assert pick.int(flambeau.ones(1), n=2).tolist() == [2.0]


def _cube_op(lib):
    lib.define("cube(Tensor x, float scale=1.0) -> Tensor")
    calls = []

    def kernel(x, scale):
        calls.append(flambeau.is_grad_enabled())
        return flambeau.tensor(scale * x.detach().numpy() ** 3, dtype=x.dtype)  # opaque

    def setup_context(ctx, inputs, output):
        x, scale = inputs
        ctx.save_for_backward(x)
        ctx.scale = scale

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * ctx.scale * x * x, None

    lib.impl("cube", kernel, "cpu")
    library.register_autograd(f"{lib.ns}::cube", backward, setup_context=setup_context, lib=lib)
    return op(lib, "cube"), calls


def test_registered_derivative_passes_gradcheck(lib):
    autograd = pytest.importorskip("flambeau.autograd")
    cube, calls = _cube_op(lib)
    x = flambeau.tensor([0.5, -1.25, 2.0], dtype=flambeau.float64, requires_grad=True)
    assert autograd.gradcheck(lambda t: cube(t, 1.5), (x,))
    y = cube(x, 2.0)
    assert y.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6.0 * x.detach().numpy() ** 2)
    assert calls and not any(calls)  # the kernel runs below autograd


def test_no_grad_skips_recording(lib):
    pytest.importorskip("flambeau.autograd")
    cube, _ = _cube_op(lib)
    x = flambeau.ones(2, requires_grad=True)
    with flambeau.no_grad():
        y = cube(x)
    assert not y.requires_grad and y.grad_fn is None


def test_backward_without_a_derivative_says_what_to_register(lib):
    pytest.importorskip("flambeau.autograd")
    lib.define("opaque(Tensor x) -> Tensor")
    lib.impl("opaque", lambda x: x.detach() * 2, "cpu")
    y = op(lib, "opaque")(flambeau.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError, match="register_autograd"):
        y.sum().backward()


def test_composite_implicit_kernel_differentiates_through_its_operators(lib):
    pytest.importorskip("flambeau.autograd")
    lib.define("sq(Tensor x) -> Tensor")
    lib.impl("sq", lambda x: x * x)  # no key: CompositeImplicitAutograd
    x = flambeau.tensor([3.0], requires_grad=True)
    op(lib, "sq")(x).backward()
    assert x.grad.tolist() == [6.0]


def test_custom_op_infers_the_schema(lib):
    ns = lib.ns + "_co"

    @library.custom_op(f"{ns}::mix", mutates_args=())
    def mix(x: flambeau.Tensor, y: flambeau.Tensor | None, w: float = 0.5) -> flambeau.Tensor:
        return x * w if y is None else x * w + y * (1 - w)

    try:
        row = next(r for r in flambeau.ops_table() if r["name"] == f"{ns}::mix")
        assert row["schema"] == f"{ns}::mix(Tensor x, Tensor? y, float w=0.5) -> Tensor"
        assert flambeau.ops.__getattr__(ns).mix(flambeau.ones(1), None).tolist() == [0.5]
        assert mix(flambeau.ones(1), flambeau.zeros(1), w=0.25).tolist() == [0.25]

        @mix.register_fake
        def _(x, y, w=0.5):
            return flambeau.empty_like(x)

        assert mix._opoverload.fake is _
    finally:
        mix._destroy()
    assert f"{ns}::mix" not in {r["name"] for r in flambeau.ops_table()}


def test_ops_table_lists_custom_operators_until_destroyed():
    lib = library.Library(f"testlib{next(_names)}", "DEF")
    lib.define("tabled(Tensor x, *, int k=3) -> Tensor")
    rows = [r for r in flambeau.ops_table() if r["name"] == f"{lib.ns}::tabled"]
    assert len(rows) == 1 and rows[0]["category"] == "custom"
    assert rows[0]["params"] == [
        {"name": "x", "type": "Tensor", "default": None, "kwonly": False},
        {"name": "k", "type": "int", "default": "3", "kwonly": True},
    ]
    assert len(flambeau.ops_table()) > 1  # the built-in operators are still there
    lib._destroy()
    assert not any(r["name"] == f"{lib.ns}::tabled" for r in flambeau.ops_table())
    with pytest.raises(AttributeError):
        op(lib, "tabled")


def test_aten_namespace_is_the_builtin_operators():
    assert flambeau.ops.aten.add is flambeau.add
    with pytest.raises(NotImplementedError, match="built-in operator"):
        library.Library("aten", "IMPL").impl("add", lambda *a: None, "cpu")


def test_import_flambeau_does_not_load_the_library():
    code = (
        "import sys, flambeau; "
        "print('flambeau.library' in sys.modules, 'flambeau._custom_ops' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
