"""flambeau.autograd.graph.allow_mutation_on_saved_tensors: saved tensors may be modified
in place inside it, backward sees their values from when they were saved."""

import pytest

import flambeau as F
from flambeau.autograd.graph import allow_mutation_on_saved_tensors


def test_backward_uses_the_values_saved_before_the_mutation():
    with allow_mutation_on_saved_tensors() as ctx:
        a = F.ones(2, 3, requires_grad=True)
        b = a.clone()
        out = (b**2).sum()
        b.sin_()  # b was saved for the backward of b**2
        c = F.tensor([1.0, 2.0], requires_grad=True)
        d = c * 3
        e = (d * d).sum()
        d.zero_()
        (out + e).backward()
    assert ctx is not None
    assert a.grad.tolist() == [[2.0] * 3] * 2  # 2 b with b = 1, not sin(1)
    assert c.grad.tolist() == [18.0, 36.0]  # 2 (3 c) 3
    assert b.grad_fn is not None and abs(b[0, 0].item() - 0.8414709568) < 1e-6


def test_without_it_the_mutation_is_refused():
    a = F.ones(2, requires_grad=True)
    b = a.clone()
    out = (b**2).sum()
    b.sin_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_contexts_do_not_nest_and_backward_must_be_inside():
    with allow_mutation_on_saved_tensors():
        with pytest.raises(RuntimeError, match="cannot be nested"):
            with allow_mutation_on_saved_tensors():
                pass
        a = F.ones(2, requires_grad=True)
        out = (a.clone() ** 2).sum()
    with pytest.raises(AssertionError, match="Trying to backward outside"):
        out.backward()
    with allow_mutation_on_saved_tensors():  # usable again once left
        b = F.ones(1, requires_grad=True)
        (b * b).sum().backward()
    assert b.grad.tolist() == [2.0]
