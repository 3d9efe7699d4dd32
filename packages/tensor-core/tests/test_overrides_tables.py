"""flambeau.overrides' tables (get_ignored_functions, get_overridable_functions,
get_testing_overrides, get_default_nowrap_functions, resolve_name) and helpers
(wrap_torch_function, redispatch_function): read from flambeau's own operators, and true
to what a Tensor subclass's __torch_function__ really receives."""

import inspect
import threading

import pytest

import flambeau as F
from flambeau import _C
from flambeau.overrides import (
    DisableTorchFunction,
    TorchFunctionMode,
    get_default_nowrap_functions,
    get_ignored_functions,
    get_overridable_functions,
    get_testing_overrides,
    handle_torch_function,
    has_torch_function,
    redispatch_function,
    resolve_name,
    wrap_torch_function,
)

T = F.Tensor


class Recorder(F.Tensor):
    """Records every function its __torch_function__ receives, then runs it."""

    __slots__ = ()
    seen: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func)
        return super().__torch_function__(func, types, args, kwargs)


def _received(call) -> list:
    Recorder.seen = []
    call(F.eye(3).as_subclass(Recorder))
    return Recorder.seen


def _all_overridable() -> list:
    return [f for functions in get_overridable_functions().values() for f in functions]


# ---- get_ignored_functions ------------------------------------------------------------


def test_ignored_functions_as_pytorchs_examples():
    ignored = get_ignored_functions()
    assert T.as_subclass in ignored and F.add not in ignored
    for factory in (F.zeros, F.ones, F.arange, F.eye, F.full, F.randperm, F.hann_window):
        assert factory in ignored  # operators that take no tensor
    for helper in (F.is_tensor, F.get_default_dtype, F.manual_seed, F.no_grad, F.device):
        assert helper in ignored
    assert get_ignored_functions() is ignored  # computed once, as PyTorch's


def test_operators_taking_a_tensor_are_not_ignored_even_where_pytorch_lists_them():
    # PyTorch's list has these, but flambeau's core hands their calls to __torch_function__.
    ignored = get_ignored_functions()
    for op in (F.as_strided, F.rand_like, F.randn_like, F.normal):
        assert op not in ignored
    assert _received(lambda x: F.rand_like(x)) == [F.rand_like]


TENSOR_CALLS = [  # (function, a call of it with a tensor); Tensor methods cannot be hashed
    (T.as_subclass, lambda x: x.as_subclass(F.Tensor)),
    (T.new_zeros, lambda x: x.new_zeros(2)),
    (T.new_ones, lambda x: x.new_ones(2)),
    (T.new_full, lambda x: x.new_full((2,), 1.0)),
    (T.new_empty, lambda x: x.new_empty(2)),
    (T.new_tensor, lambda x: x.new_tensor([1.0])),
    (T.new_empty_strided, lambda x: x.new_empty_strided((2,), (1,))),
    (T.__iter__, lambda x: list(x)),
    (T.__hash__, lambda x: hash(x)),
    (F.is_tensor, lambda x: F.is_tensor(x)),
    (F.is_storage, lambda x: F.is_storage(x)),
    (F.typename, lambda x: F.typename(x)),
    (F.as_tensor, lambda x: F.as_tensor(x)),
    (F.tensor, lambda x: F.tensor(x)),
    (F.asarray, lambda x: F.asarray(x)),
    (F.result_type, lambda x: F.result_type(x, 1)),
]


@pytest.mark.parametrize(
    ("func", "call"), TENSOR_CALLS, ids=[resolve_name(f) for f, _ in TENSOR_CALLS]
)
def test_an_ignored_function_called_with_a_subclass_never_reaches_it(func, call):
    assert func in get_ignored_functions()
    received = _received(call)
    assert not any(f is func for f in received)


def test_no_ignored_function_is_overridable():
    ignored = get_ignored_functions()
    assert not [resolve_name(f) for f in _all_overridable() if f in ignored]


# ---- get_overridable_functions --------------------------------------------------------


def test_overridable_functions_by_namespace():
    functions = get_overridable_functions()
    assert {F, T, F.linalg, F.fft, F.special} <= set(functions)
    assert F.add in functions[F] and F.linalg.inv in functions[F.linalg]
    assert F.fft.fft in functions[F.fft] and F.special.erf in functions[F.special]
    for method in (T.add, T.add_, T.__add__, T.__radd__, T.__getitem__, T.__setitem__):
        assert any(m is method for m in functions[T])
    assert F.zeros not in functions[F]  # it takes no tensor


@pytest.mark.parametrize(
    ("func", "call"),
    [
        (F.add, lambda x: F.add(x, 1)),
        (F.linalg.inv, lambda x: F.linalg.inv(x)),
        (F.fft.fft, lambda x: F.fft.fft(x)),
        (F.special.erf, lambda x: F.special.erf(x)),
        (T.add, lambda x: x.add(1)),
        (T.add_, lambda x: x.add_(1)),
        (T.add, lambda x: x + 1),  # operators hand over their method, as PyTorch's
        (T.add, lambda x: 1 + x),
        (T.__rsub__, lambda x: 1 - x),
        (T.__getitem__, lambda x: x[0]),
    ],
)
def test_an_overridable_function_is_what_the_override_receives(func, call):
    assert any(f is func for f in _all_overridable())
    assert _received(call)[0] is func


def test_every_overridable_function_dispatches_as_itself():
    """The core's operators (the table the bindings are generated from) and the Python
    functions that call handle_torch_function: nothing else is listed."""
    from flambeau._override_tables import _dispatches_itself, _operator_rows

    rows = _operator_rows()
    assert all(f in rows or _dispatches_itself(f) for f in _all_overridable())


def test_nn_functional_lists_what_dispatches_itself():
    functional = pytest.importorskip("flambeau.nn.functional")
    listed = get_overridable_functions()[functional]
    attention = functional.scaled_dot_product_attention
    assert attention in listed
    q = F.ones(1, 3, 4)
    assert _received(lambda x: attention(q, q, q, attn_mask=x))[0] is attention


# ---- get_testing_overrides ------------------------------------------------------------


def test_testing_overrides_cover_every_overridable_function():
    overrides = get_testing_overrides()
    overridable = _all_overridable()
    assert len(overrides) == len({id(f) for f in overridable})
    assert all(f in overrides for f in overridable)
    for func in overridable:
        args, kwargs = _required(overrides[func])
        assert overrides[func](*args, **kwargs) == -1


def _required(stand_in) -> tuple:
    """Arguments for a stand-in's required parameters."""
    params = [p for p in inspect.signature(stand_in).parameters.values() if p.default is p.empty]
    args = [None for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    return args, {p.name: None for p in params if p.kind is p.KEYWORD_ONLY}


def _signature(func) -> str:
    return str(inspect.signature(get_testing_overrides()[func]))


def test_testing_overrides_take_the_schemas_signatures():
    assert _signature(F.add) == "(input, other, *, alpha=1, out=None)"
    assert _signature(T.add) == "(self, other, *, alpha=1)"
    assert _signature(T.add_) == "(self, other, *, alpha=1)"
    assert _signature(T.__add__) == "(self, other)"
    assert _signature(T.__getitem__) == "(self, indices)"
    assert _signature(T.__setitem__) == "(self, indices, value)"
    relu = next(r for r in F.ops_table() if r["name"] == "relu")
    assert relu["schema"] == "relu(Tensor input) -> Tensor"
    assert _signature(F.relu) == "(input)"


def test_testing_overrides_check_their_arguments():
    stand_in = get_testing_overrides()[F.add]
    assert stand_in(1, 2) == -1 and stand_in(1, other=2, alpha=3, out=None) == -1
    with pytest.raises(TypeError):
        stand_in(1)
    with pytest.raises(TypeError):
        stand_in(1, 2, 3)  # alpha is keyword-only


def test_python_functions_keep_their_own_signature():
    functional = pytest.importorskip("flambeau.nn.functional")
    attention = functional.scaled_dot_product_attention
    stand_in = get_testing_overrides()[attention]
    assert inspect.signature(stand_in) == inspect.signature(attention)


def test_testing_overrides_against_pytorchs_where_both_name_a_function():
    torch = pytest.importorskip("torch")
    theirs = torch.overrides.get_testing_overrides()
    # PyTorch's table is written by hand; the required positional parameters agree.
    for name in ("add", "mul", "matmul", "clamp", "cat", "sum", "exp", "transpose", "gather"):
        t_params = [
            p.name
            for p in inspect.signature(theirs[getattr(torch, name)]).parameters.values()
            if p.default is p.empty
        ]
        f_params = [
            p.name
            for p in inspect.signature(
                get_testing_overrides()[getattr(F, name)]
            ).parameters.values()
            if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD
        ]
        assert f_params == t_params, name


# ---- get_default_nowrap_functions -----------------------------------------------------


def test_nowrap_functions_keep_the_stored_tensor():
    nowrap = get_default_nowrap_functions()
    assert T.grad.__get__ in nowrap
    sub = F.ones(2).as_subclass(Recorder)
    sub.grad = F.full((2,), 3.0)
    # Tensor.__torch_function__ returns the stored grad as it is, not re-classed
    got = Recorder.__torch_function__(T.grad.__get__, (Recorder,), (sub,))
    assert got is sub.grad and type(got) is F.Tensor
    # a computed property is re-classed
    assert type(Recorder.__torch_function__(T.__neg__, (Recorder,), (sub,))) is Recorder


# ---- resolve_name ---------------------------------------------------------------------


def test_resolve_name():
    assert resolve_name(F.add) == "flambeau.add"
    assert resolve_name(F.linalg.inv) == "flambeau.linalg.inv"
    assert resolve_name(T.add) == "flambeau.Tensor.add"
    assert resolve_name(T.__add__) == "flambeau.Tensor.__add__"
    assert resolve_name(T.grad.__get__) == "flambeau.Tensor.grad.__get__"
    assert resolve_name(print) is None and resolve_name(lambda: 0) is None


def test_resolve_name_gives_back_the_function():
    for func in _all_overridable():
        assert eval(resolve_name(func), {"flambeau": F}) is func  # noqa: S307


def test_resolve_name_of_custom_operators():
    lib = F.library.Library("override_tables_test", "DEF")
    try:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: x * 2, "CPU")
        packet = F.ops.override_tables_test.twice
        assert resolve_name(packet) == "override_tables_test.twice"
        assert resolve_name(packet.default) == "override_tables_test.twice.default"
    finally:
        lib._destroy()


# ---- wrap_torch_function --------------------------------------------------------------


class Tagged:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("Tagged", func.__name__, args, kwargs)


def test_wrap_torch_function():
    def dispatcher(a, b=None):
        return (a, b)

    @wrap_torch_function(dispatcher)
    def combine(a, b=None):
        """Adds b to a."""
        return a if b is None else a + b

    assert combine.__name__ == "combine" and combine.__doc__ == "Adds b to a."
    assert combine(F.ones(2), 1).tolist() == [2.0, 2.0]
    tag = Tagged()
    assert combine(1, b=tag) == ("Tagged", "combine", (1,), {"b": tag})
    # what the override receives is the wrapped function itself
    assert _received(lambda x: combine(x))[0] is combine


# ---- redispatch_function --------------------------------------------------------------


class Logged(F.Tensor):
    __slots__ = ()
    log: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.log.append(func.__name__)
        return redispatch_function(func, types, args, kwargs)


def scaled_mul(a, b):
    if has_torch_function((a, b)):
        return handle_torch_function(scaled_mul, (a, b), a, b)
    return a * b + 1


@pytest.fixture
def logged():
    Logged.log = []
    depth = _C._torch_function_mode_depth(0)
    x = F.tensor([3.0]).as_subclass(Logged)
    y = F.tensor([4.0]).as_subclass(Logged)
    yield x, y
    assert _C._torch_function_mode_depth(0) == depth  # nothing left behind


def test_redispatch_skips_one_level_for_a_subclass(logged):
    x, y = logged
    result = scaled_mul(x, y)
    # scaled_mul's own check is skipped; a * b is seen and run plainly, so + 1 is not seen
    assert Logged.log == ["scaled_mul", "mul"]
    assert type(result) is F.Tensor and result.tolist() == [13.0]


def test_redispatch_of_an_operator_gives_a_plain_result(logged):
    x, y = logged
    assert type(F.add(x, y)) is F.Tensor and Logged.log == ["add"]
    assert type(redispatch_function(F.mul, (Logged,), (x, y), {})) is F.Tensor
    assert type(redispatch_function(T.add, (Logged,), (x,), {"other": y})) is F.Tensor
    assert Logged.log == ["add"]


def test_redispatch_skips_only_the_first_check(logged):
    x, y = logged

    def two(a, b):
        return a * b, a + b

    product, total = redispatch_function(two, (Logged,), (x, y), None)
    assert Logged.log == ["add"]  # a * b was the skipped check
    assert (product.tolist(), total.tolist()) == ([12.0], [7.0])


def test_redispatch_of_plain_calls(logged):
    assert redispatch_function(F.add, (), (F.ones(1), 1), None).tolist() == [2.0]
    with DisableTorchFunction():
        assert redispatch_function(lambda: 5, (), (), None) == 5


def test_redispatch_of_a_function_that_makes_no_check(logged):
    x, _ = logged
    with pytest.raises(RuntimeError, match="doesn't use has_torch_function"):
        redispatch_function(lambda a: 5, (Logged,), (x,), None)
    assert type(x + 1) is F.Tensor and Logged.log == ["add"]  # checks work again


def test_redispatch_cleans_up_after_an_error(logged):
    def fails():
        raise KeyError("before any check")

    with pytest.raises(KeyError):
        redispatch_function(fails, (), (), None)
    one = F.ones(1)
    with pytest.raises(RuntimeError, match="cannot skip two levels"):
        redispatch_function(lambda: redispatch_function(F.add, (), (one, 1), None), (), (), None)
    # the first check uses the skip up, whichever function makes it (here F.ones)
    assert redispatch_function(
        lambda: redispatch_function(F.add, (), (F.ones(1), 1), None), (), (), None
    ).tolist() == [2.0]
    assert not has_torch_function((F.ones(1),))


def test_redispatch_is_per_thread(logged):
    x, y = logged
    done = []

    def other():
        done.append(type(F.add(x, 1)))

    def starts_a_thread(a):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        return a.neg()

    redispatch_function(starts_a_thread, (Logged,), (x,), None)
    assert done == [F.Tensor] and Logged.log == ["add"]  # the thread's add was seen


class LoggingMode(TorchFunctionMode):
    def __init__(self, reenter: bool):
        super().__init__()
        self.reenter, self.log = reenter, []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.log.append(func.__name__)
        if self.reenter:
            with self:
                return redispatch_function(func, types, args, kwargs)
        return redispatch_function(func, types, args, kwargs)


def test_redispatch_in_a_mode():
    a, b = F.tensor([3.0]), F.tensor([4.0])
    with LoggingMode(reenter=True) as mode:
        result = scaled_mul(a, b)
    assert mode.log == ["scaled_mul", "mul", "add"] and result.tolist() == [13.0]
    with LoggingMode(reenter=False) as mode:
        scaled_mul(a, b)
    assert mode.log == ["scaled_mul"]


def test_redispatch_against_pytorch():
    torch = pytest.importorskip("torch")
    from torch.overrides import handle_torch_function as t_handle
    from torch.overrides import has_torch_function as t_has
    from torch.overrides import redispatch_function as t_redispatch

    log = []

    class TLogged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(func.__name__)
            return t_redispatch(func, types, args, kwargs)

    def t_scaled_mul(a, b):
        if t_has((a, b)):
            return t_handle(t_scaled_mul, (a, b), a, b)
        return a * b + 1

    def two(a, b):
        return a * b, a + b

    x, y = TLogged(torch.tensor([3.0])), TLogged(torch.tensor([4.0]))
    result = t_scaled_mul(x, y)
    assert log == ["t_scaled_mul", "mul"] and type(result) is torch.Tensor
    log.clear()
    t_redispatch(two, (TLogged,), (x, y), None)
    assert log == ["add"]  # as flambeau's
    with pytest.raises(RuntimeError):
        t_redispatch(lambda a: 5, (TLogged,), (x,), None)
