"""The __torch_function__ protocol: Tensor subclasses take over the operators called on them."""

import threading

import numpy as np
import pytest

import flambeau as F
from flambeau.overrides import (
    BaseTorchFunctionMode,
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    TorchFunctionMode,
    _disabled_torch_function_impl,
    _get_current_function_mode,
    _get_current_function_mode_stack,
    handle_torch_function,
    has_torch_function,
)


class Tagged(F.Tensor):
    """Adds nothing: Tensor's own __torch_function__ keeps results in the subclass."""

    __slots__ = ()


class Logged(F.Tensor):
    __slots__ = ()
    calls: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func.__name__)
        return super().__torch_function__(func, types, args, kwargs)


class Answer(F.Tensor):
    """Answers 42 to everything."""

    __slots__ = ()

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return 42


class Declines(F.Tensor):
    __slots__ = ()

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


class OptedOut(F.Tensor):
    __slots__ = ()
    __torch_function__ = _disabled_torch_function_impl


def _t(cls, values=(1.0, 2.0, 3.0)):
    return F.tensor(list(values)).as_subclass(cls)


@pytest.mark.parametrize(
    "op",
    [
        lambda x: x + 1,
        lambda x: 2 * x,
        lambda x: -x,
        lambda x: F.exp(x),
        lambda x: x.exp(),
        lambda x: F.add(x, F.ones(3)),
        lambda x: F.ones(3) - x,
        lambda x: x.reshape(3, 1),
        lambda x: F.cat([F.ones(3), x]),
        lambda x: F.where(x > 1, x, F.zeros(3)),
    ],
)
def test_results_keep_the_subclass_and_the_values(op):
    x = _t(Tagged)
    out = op(x)
    assert type(out) is Tagged
    np.testing.assert_allclose(out.numpy(), op(x.as_subclass(F.Tensor)).numpy())


def test_the_override_sees_functions_methods_operators_and_inplace_methods():
    Logged.calls.clear()
    x = _t(Logged)
    F.mm(x.reshape(3, 1), F.ones(1, 2))
    x.add_(1)
    _ = F.ones(3) * x
    assert Logged.calls == ["reshape", "mm", "add_", "mul"]  # x * y hands over Tensor.mul
    np.testing.assert_allclose(x.numpy(), [2.0, 3.0, 4.0])


def test_the_function_object_is_the_public_one():
    seen = []

    class Spy(F.Tensor):
        __slots__ = ()

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append((func, types, args, kwargs))
            return super().__torch_function__(func, types, args, kwargs)

    x = _t(Spy)
    F.sum(x, dim=0)
    func, types, args, kwargs = seen[0]
    assert func is F.sum and types == (Spy,) and args == (x,) and kwargs == {"dim": 0}
    seen.clear()
    x.sum()
    assert seen[0][0] is F.Tensor.sum


def test_an_override_replaces_the_operator():
    x = _t(Answer)
    assert x + 1 == 42 and F.exp(x) == 42 and x.sum() == 42 and F.cat([x]) == 42


def test_every_override_declining_is_a_type_error():
    with pytest.raises(TypeError, match="no implementation found"):
        F.exp(_t(Declines))


def test_subclasses_are_asked_before_their_bases():
    order = []

    class Base(F.Tensor):
        __slots__ = ()

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            order.append("Base")
            return NotImplemented

    class Derived(Base):
        __slots__ = ()

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            order.append("Derived")
            return NotImplemented

    with pytest.raises(TypeError):
        F.add(_t(Base), _t(Derived))
    assert order == ["Derived", "Base"]


def test_opting_out_gives_plain_tensors():
    x = _t(OptedOut)
    assert type(x + 1) is F.Tensor
    assert not has_torch_function((x,))


def test_disable_torch_function_subclass():
    x = _t(Answer)
    with DisableTorchFunctionSubclass():
        out = x + 1
    assert type(out) is F.Tensor
    np.testing.assert_allclose(out.as_subclass(F.Tensor).numpy(), [2.0, 3.0, 4.0])


def test_operators_may_answer_not_implemented():
    x = _t(Tagged)
    assert (x == None) is False  # noqa: E711 - Python falls back to identity
    assert x != "a"


def test_plain_tensors_take_no_part():
    assert not has_torch_function((F.ones(1), 2.0))
    assert has_torch_function((F.ones(1), _t(Logged)))


def test_handle_torch_function_for_python_functions():
    def scaled(x, factor=2.0):
        if has_torch_function((x,)):
            return handle_torch_function(scaled, (x,), x, factor=factor)
        return x * factor

    assert scaled(_t(Answer)) == 42
    np.testing.assert_allclose(scaled(F.ones(2)).numpy(), [2.0, 2.0])


def test_gradients_flow_through_a_subclass():
    base = F.tensor([1.0, 2.0], requires_grad=True)
    x = base.as_subclass(Tagged)
    (x * x).sum().backward()
    np.testing.assert_allclose(base.grad.numpy(), [2.0, 4.0])


def test_indexing_dispatches_too():
    Logged.calls.clear()
    x = _t(Logged)
    y = x[1:]
    x[0] = 5.0
    assert Logged.calls[:2] == ["__getitem__", "__setitem__"]
    assert type(y) is Logged
    np.testing.assert_allclose(x.as_subclass(F.Tensor).numpy(), [5.0, 2.0, 3.0])
    assert F.arange(3.0)[_t(Answer, [0])] == 42


def test_save_and_load_a_subclass(tmp_path):
    x = _t(Tagged)
    F.save({"x": x}, tmp_path / "a.pt")
    back = F.load(tmp_path / "a.pt", weights_only=False)["x"]
    assert type(back) is Tagged
    np.testing.assert_allclose(back.as_subclass(F.Tensor).numpy(), [1.0, 2.0, 3.0])


# ---- TorchFunctionMode ---------------------------------------------------------------


class Recording(TorchFunctionMode):
    def __init__(self, tag="", log=None):
        super().__init__()
        self.tag = tag
        self.log = [] if log is None else log

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.log.append(self.tag + func.__name__)
        return func(*args, **(kwargs or {}))


def test_mode_sees_factories_functions_methods_operators_and_indexing():
    x = F.ones(2, 2)
    with Recording() as mode:
        F.zeros(3)
        F.add(x, 1)
        x.sum()
        _ = x @ x
        _ = x[0]
        x[1] = 5.0
    assert mode.log == ["zeros", "add", "sum", "matmul", "__getitem__", "__setitem__"]
    assert x.tolist() == [[1.0, 1.0], [5.0, 5.0]]
    # Results are what the functions return.
    with BaseTorchFunctionMode():
        assert (F.ones(2) * 3).tolist() == [3.0, 3.0]


def test_modes_nest_innermost_first_and_are_off_inside_their_handler():
    log = []
    with Recording("outer:", log), Recording("inner:", log):
        F.ones(1)
    # inner handles the call; its func(...) goes to outer; outer's runs it.
    assert log == ["inner:ones", "outer:ones"]
    assert _get_current_function_mode() is None
    assert _get_current_function_mode_stack() == []


def test_mode_stack_is_popped_on_error_and_is_per_thread():
    with pytest.raises(ValueError):
        with Recording():
            raise ValueError
    assert _get_current_function_mode() is None
    seen = []
    with Recording() as mode:
        t = threading.Thread(target=lambda: seen.append(F.ones(1)))
        t.start()
        t.join()
        assert _get_current_function_mode() is mode
    assert mode.log == [] and len(seen) == 1


def test_mode_declining_raises_type_error():
    class Declines(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    with Declines(), pytest.raises(TypeError, match="no implementation found"):
        F.ones(1)


def test_mode_runs_before_subclasses_and_disabling():
    class Sub(F.Tensor):
        __slots__ = ()

    s = F.ones(2).as_subclass(Sub)
    log = []

    class Types(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append(types)
            return func(*args, **(kwargs or {}))

    with Types():
        out = s + 1
        assert has_torch_function((F.ones(1),))
    assert log == [(Sub,), ()] and type(out) is Sub  # (): ones() has no subclass argument
    with Recording() as mode:
        with DisableTorchFunctionSubclass():
            F.ones(1)  # modes still run
        with DisableTorchFunction():
            F.ones(1)  # nothing runs
            assert type(s + 1) is F.Tensor
    assert mode.log == ["ones"]


def test_abstract_mode_and_push():
    with pytest.raises(NotImplementedError, match="must define __torch_function__"):
        with TorchFunctionMode():
            F.ones(1)
    with pytest.warns(UserWarning, match="no longer necessary"):
        mode = Recording.push()
    assert isinstance(mode, Recording)


def test_tensor_methods_are_hashable_as_in_pytorch():
    # __torch_function__ tables and torchvision key dicts and sets on Tensor methods.
    handled = {F.Tensor.add: "add", F.Tensor.__getitem__: "getitem", F.Tensor.clone: "clone"}
    assert handled[F.Tensor.add] == "add" and F.Tensor.sub not in handled
    assert F.Tensor.add is F.Tensor.add and hash(F.Tensor.add) == hash(F.Tensor.add)
    assert F.Tensor.add.__doc__ and F.Tensor.add.__name__ == "add"
    x = F.ones(2)
    assert F.Tensor.add(x, 1).tolist() == [2.0, 2.0] and x.add(2).tolist() == [3.0, 3.0]
    methods = {getattr(F.Tensor, n) for n in dir(F.Tensor) if callable(getattr(F.Tensor, n))}
    assert F.Tensor.mul in methods


class Scalarish:
    """PyTorch's "tensor-like" from its extending guide: not a Tensor, yet flambeau's
    functions and methods called with it go to its __torch_function__."""

    def __init__(self, n, value):
        self.n, self.value = n, value

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.mean:
            return args[0].value
        if func.__name__ in ("add", "cat"):
            return ("handled", func.__name__, types)
        return NotImplemented


def test_a_tensor_like_of_another_type_takes_the_call():
    s = Scalarish(5, 2.0)
    assert F.mean(s) == 2.0
    assert F.add(F.ones(2), s) == ("handled", "add", (Scalarish,))
    assert F.ones(2).add(s)[:2] == ("handled", "add")  # as a method's argument
    assert F.cat([F.ones(1), s])[:2] == ("handled", "cat")  # inside a list argument
    assert F.add(F.ones(2), other=s)[0] == "handled"  # as a keyword


def test_a_tensor_like_that_declines_gets_a_type_error():
    with pytest.raises(TypeError, match="no implementation found"):
        F.sin(Scalarish(1, 0.0))


def test_plain_objects_and_disabled_protocol_still_raise_the_argument_error():
    with pytest.raises(TypeError, match="must be Tensor"):
        F.sin(object())
    with DisableTorchFunction(), pytest.raises(TypeError, match="must be Tensor"):
        F.mean(Scalarish(5, 2.0))


class Named:
    """A tensor-like that answers with the name of what it was handed."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return func.__name__


def test_a_tensor_like_on_the_right_of_an_operator_gets_pytorchs_method():
    # PyTorch hands over the operator's method (x + y: Tensor.add), and the operator itself
    # where no method commutes (1 - x: __rsub__).
    t, s = F.ones(2), Named()
    assert (t + s, t * s, t @ s, t < s, t == s) == ("add", "mul", "matmul", "lt", "eq")
    x = F.ones(2)
    x += s
    assert x == "add_"
    assert (t.__rsub__(s), t.__radd__(s), t.__rand__(s)) == ("__rsub__", "add", "bitwise_and")
    assert t.__rtruediv__(s) == "__rdiv__"  # PyTorch's older name, a Tensor method too
    np.testing.assert_allclose(F.tensor([2.0]).__rdiv__(1).numpy(), [0.5])


def test_operators_decline_what_does_not_fit_so_python_tries_the_other_side():
    class Other:
        def __radd__(self, other):
            return "reflected"

    assert F.ones(2) + Other() == "reflected"
    with pytest.raises(TypeError):
        F.ones(2) + object()
