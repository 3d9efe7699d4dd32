"""Every hook registration returns flambeau.utils.hooks.RemovableHandle, as in PyTorch
(torch.utils.hooks.RemovableHandle): one class for modules, global module hooks, tensors,
autograd nodes and optimizers."""

import pytest

import flambeau
from flambeau import nn
from flambeau.utils.hooks import BackwardHook, RemovableHandle


def test_module_hooks():
    lin = nn.Linear(2, 2)
    handles = [
        lin.register_forward_pre_hook(lambda m, args: None),
        lin.register_forward_hook(lambda m, args, out: None),
        lin.register_full_backward_hook(lambda m, gin, gout: None),
        lin.register_full_backward_pre_hook(lambda m, gout: None),
        lin.register_state_dict_pre_hook(lambda *a: None),
        lin.register_load_state_dict_post_hook(lambda *a: None),
    ]
    assert all(type(h) is RemovableHandle for h in handles)
    assert nn.modules.module.RemovableHandle is RemovableHandle
    assert nn.modules.module.BackwardHook is BackwardHook


def test_forward_hook_with_always_call_is_removed_from_both_tables():
    lin = nn.Linear(2, 2)
    handle = lin.register_forward_hook(lambda m, args, out: None, always_call=True)
    assert handle.id in lin._forward_hooks and handle.id in lin._forward_hooks_always_called
    handle.remove()
    assert handle.id not in lin._forward_hooks
    assert handle.id not in lin._forward_hooks_always_called


def test_global_module_hooks():
    calls = []
    handle = nn.modules.module.register_module_forward_hook(lambda m, a, o: calls.append(m))
    try:
        assert type(handle) is RemovableHandle
        lin = nn.Linear(2, 2)
        lin(flambeau.ones(1, 2))
    finally:
        handle.remove()
    lin(flambeau.ones(1, 2))
    assert calls == [lin]


def test_full_backward_hook_still_sees_the_gradients():
    lin = nn.Linear(2, 1, bias=False)
    with flambeau.no_grad():
        lin.weight.copy_(flambeau.tensor([[2.0, 3.0]]))
    seen = []
    lin.register_full_backward_hook(
        lambda m, gin, gout: seen.append((gin[0].tolist(), gout[0].tolist()))
    )
    x = flambeau.ones(1, 2, requires_grad=True)
    lin(x).sum().backward()
    assert seen == [([[2.0, 3.0]], [[1.0]])]


def test_optimizer_hooks():
    optim = pytest.importorskip("flambeau.optim")
    opt = optim.SGD([flambeau.ones(1, requires_grad=True)], lr=0.1)
    calls = []
    handle = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    assert type(handle) is RemovableHandle
    assert type(opt.register_step_post_hook(lambda o, args, kwargs: None)) is RemovableHandle
    opt.step()
    handle.remove()
    opt.step()
    assert calls == ["pre"]


def test_full_backward_hooks_without_input_grads_warn_and_return_nothing():
    x = flambeau.ones(1, 2)  # does not require grad
    pre_only = nn.Linear(2, 1)
    seen = []
    pre_only.register_full_backward_pre_hook(lambda m, gout: seen.append(gout[0].tolist()))
    with pytest.warns(UserWarning, match="since no inputs require gradients") as caught:
        pre_only(x).sum().backward()
    assert seen == [[[1.0]]] and caught[0].filename == __file__
    returns_grads = nn.Linear(2, 1)
    returns_grads.register_full_backward_hook(lambda m, gin, gout: (flambeau.ones(1, 2),))
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="Backward hook for "
                      "Modules where no input requires gradient should always return None or "
                      "None for all gradients."):  # fmt: skip
        returns_grads(x).sum().backward()
    returns_nones = nn.Linear(2, 1)
    returns_nones.register_full_backward_hook(lambda m, gin, gout: (None,))
    with pytest.warns(UserWarning):
        returns_nones(x).sum().backward()
    assert returns_nones.weight.grad is not None
