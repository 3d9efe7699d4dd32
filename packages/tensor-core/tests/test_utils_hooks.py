"""flambeau.utils.hooks (torch.utils.hooks): the one RemovableHandle, unserializable_hook,
warn_if_has_hooks (and the warning pickling gives), BackwardHook."""

import gc
import io
import pickle
import warnings
from collections import OrderedDict

import pytest

import flambeau
from flambeau.utils import hooks
from flambeau.utils.hooks import RemovableHandle, unserializable_hook, warn_if_has_hooks


def test_namespace():
    assert hooks.__all__ == [
        "RemovableHandle",
        "unserializable_hook",
        "warn_if_has_hooks",
        "BackwardHook",
    ]
    assert flambeau.utils.hooks is hooks


def test_handle_ids_count_up_and_remove_deletes_the_entry():
    table = OrderedDict()
    first, second = RemovableHandle(table), RemovableHandle(table)
    assert second.id == first.id + 1 and RemovableHandle.next_id == second.id + 1
    table[first.id], table[second.id] = "a", "b"
    first.remove()
    assert list(table.values()) == ["b"]
    first.remove()  # a second remove does nothing
    assert list(table.values()) == ["b"]


def test_extra_dict_is_one_dict_or_a_list_of_them():
    main, extra_a, extra_b = OrderedDict(), OrderedDict(), OrderedDict()
    handle = RemovableHandle(main, extra_dict=[extra_a, extra_b])
    for table in (main, extra_a, extra_b):
        table[handle.id] = True
    handle.remove()
    assert not main and not extra_a and not extra_b
    single = RemovableHandle(main, extra_dict=extra_a)
    main[single.id] = extra_a[single.id] = True
    single.remove()
    assert not main and not extra_a
    ignored = RemovableHandle(main, extra_dict="not a table")
    assert ignored.extra_dict_ref == ()


def test_tables_are_held_weakly():
    table = OrderedDict()
    handle = RemovableHandle(table)
    assert handle.hooks_dict_ref() is table
    del table
    gc.collect()
    assert handle.hooks_dict_ref() is None
    handle.remove()  # nothing left to remove from


def test_context_manager_removes_on_exit():
    table = OrderedDict()
    with RemovableHandle(table) as handle:
        table[handle.id] = True
        assert handle.id in table
    assert not table


def test_pickle_keeps_the_tables_and_moves_next_id_past_the_loaded_id():
    table, extra = OrderedDict(), OrderedDict()
    handle = RemovableHandle(table, extra_dict=extra)
    table[handle.id] = extra[handle.id] = "hook"
    assert handle.__getstate__() == (table, handle.id, (extra,))
    loaded_table, loaded = pickle.loads(pickle.dumps((table, handle)))
    assert loaded.id == handle.id and loaded.hooks_dict_ref() is loaded_table
    loaded.remove()
    assert not loaded_table
    far = RemovableHandle.__new__(RemovableHandle)
    far.__setstate__((None, RemovableHandle.next_id + 100))
    assert RemovableHandle.next_id == far.id + 1
    assert far.hooks_dict_ref() is None  # a table that did not travel: a dead reference
    assert far.extra_dict_ref == ()
    far.remove()


def test_unserializable_hook_marks_and_returns_the_function():
    def hook(grad):
        return grad

    assert unserializable_hook(hook) is hook
    assert hook.__torch_unserializable__ is True


def _warnings_of(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args)
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def test_warn_if_has_hooks_names_each_hook_of_a_leaf_and_of_a_non_leaf():
    pytest.importorskip("flambeau.autograd")

    def keep(grad):
        return grad

    leaf = flambeau.ones(2, requires_grad=True)
    assert _warnings_of(warn_if_has_hooks, leaf) == []
    leaf.register_hook(keep)
    leaf.register_hook(unserializable_hook(lambda grad: grad))
    (message,) = _warnings_of(warn_if_has_hooks, leaf)
    assert message == (
        f"backward hook {keep!r} on tensor will not be serialized.  If this is expected, "
        "you can decorate the function with @flambeau.utils.hooks.unserializable_hook to "
        "suppress this warning"
    )
    out = leaf * 2
    assert _warnings_of(warn_if_has_hooks, out) == []  # the leaf's hooks are its own
    handle = out.register_hook(keep)
    assert len(_warnings_of(warn_if_has_hooks, out)) == 1
    handle.remove()
    assert _warnings_of(warn_if_has_hooks, out) == []
    assert _warnings_of(warn_if_has_hooks, flambeau.ones(2)) == []


def test_pickling_and_saving_a_tensor_with_a_hook_warn():
    pytest.importorskip("flambeau.autograd")
    x = flambeau.ones(2, requires_grad=True)
    x.register_hook(lambda grad: grad)
    assert len(_warnings_of(pickle.dumps, x)) == 1
    assert len(_warnings_of(flambeau.save, x, io.BytesIO())) == 1
    quiet = flambeau.ones(2, requires_grad=True)
    quiet.register_hook(unserializable_hook(lambda grad: grad))
    assert _warnings_of(pickle.dumps, quiet) == []
    restored = pickle.loads(pickle.dumps(quiet))  # the hook is not part of the copy
    restored.sum().backward()
    assert restored.grad.tolist() == [1.0, 1.0]


def test_tensor_and_node_hooks_return_the_one_handle_class():
    autograd = pytest.importorskip("flambeau.autograd")
    x = flambeau.ones(2, requires_grad=True)
    y = x * 2
    handles = [
        x.register_hook(lambda grad: grad),
        x.register_post_accumulate_grad_hook(lambda t: None),
        y.register_hook(lambda grad: grad),
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: None),
        y.grad_fn.register_prehook(lambda grad_outputs: None),
    ]
    assert all(type(h) is RemovableHandle for h in handles)
    assert autograd.graph.RemovableHandle is RemovableHandle


def test_removed_node_hook_does_not_run():
    pytest.importorskip("flambeau.autograd")
    x = flambeau.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    calls = []
    handle = y.grad_fn.register_prehook(lambda grad_outputs: calls.append(1))
    handle.remove()
    y.sum().backward()
    assert calls == [] and x.grad.tolist() == [3.0, 3.0]


def test_backward_hook_reports_grad_input_and_grad_output():
    pytest.importorskip("flambeau.autograd")
    calls = []

    def hook(module, grad_input, grad_output):
        calls.append((module, grad_input, grad_output))

    bw = hooks.BackwardHook("mod", [hook], [])
    x = flambeau.tensor([1.0, 2.0], requires_grad=True)
    inputs = bw.setup_input_hook((x, "not a tensor"))
    assert inputs[1] == "not a tensor"
    out = bw.setup_output_hook(inputs[0] * 3)
    out.sum().backward()
    ((module, grad_input, grad_output),) = calls
    assert module == "mod"
    assert grad_input[0].tolist() == [3.0, 3.0] and grad_input[1] is None
    assert grad_output[0].tolist() == [1.0, 1.0]
    assert x.grad.tolist() == [3.0, 3.0]


def test_backward_pre_hook_replaces_grad_output():
    pytest.importorskip("flambeau.autograd")
    bw = hooks.BackwardHook(None, [], [lambda module, grad_output: (grad_output[0] * 10,)])
    x = flambeau.tensor([1.0, 2.0], requires_grad=True)
    (inp,) = bw.setup_input_hook((x,))
    bw.setup_output_hook(inp * 2).sum().backward()
    assert x.grad.tolist() == [20.0, 20.0]
