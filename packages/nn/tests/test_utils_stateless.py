"""flambeau.nn.utils.stateless.functional_call (torch.nn.utils.stateless): the deprecated
name of flambeau.func.functional_call, warning FutureWarning."""

import pytest

import flambeau
from flambeau import nn
from flambeau.nn.utils import stateless


def _linear():
    lin = nn.Linear(2, 1)
    params = {"weight": flambeau.tensor([[1.0, 2.0]]), "bias": flambeau.tensor([0.5])}
    return lin, params


def test_namespace():
    assert stateless.__all__ == ["functional_call"]
    assert nn.utils.stateless is stateless and "stateless" in nn.utils.__all__


def test_warns_and_calls_with_the_given_tensors():
    lin, params = _linear()
    message = (
        "`flambeau.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will "
        "be removed in a future version of PyTorch. Please use `flambeau.func.functional_call` "
        "instead which is a drop-in replacement."
    )
    with pytest.warns(FutureWarning) as caught:
        out = stateless.functional_call(lin, params, flambeau.tensor([[3.0, 4.0]]))
    assert [str(w.message) for w in caught] == [message]
    assert caught[0].filename == __file__
    assert out.tolist() == [[11.5]]
    assert lin.weight is not params["weight"]  # the module's own are back


def test_keywords_reach_functional_call():
    lin, params = _linear()
    with (
        pytest.warns(FutureWarning),
        pytest.raises(RuntimeError, match=r"Missing key\(s\): 'bias'"),
    ):
        stateless.functional_call(
            lin, {"weight": params["weight"]}, (flambeau.ones(1, 2),), strict=True
        )
    with pytest.warns(FutureWarning):
        out = stateless.functional_call(lin, params, kwargs={"input": flambeau.ones(1, 2)})
    assert out.tolist() == [[3.5]]


def test_tied_weights():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Parameter(flambeau.ones(1))
            self.b = self.a

        def forward(self, x):
            return x + self.a + self.b

    m = Tied()
    with pytest.warns(FutureWarning):
        tied = stateless.functional_call(m, {"a": flambeau.zeros(1)}, flambeau.zeros(1))
    with pytest.warns(FutureWarning):
        untied = stateless.functional_call(
            m, {"a": flambeau.zeros(1)}, flambeau.zeros(1), tie_weights=False
        )
    assert tied.tolist() == [0.0] and untied.tolist() == [1.0]


def test_reparametrize_module_swaps_within_the_context_and_restores_after():
    # PyTorch's private helper, which libraries (zuko's Bayesian layers) call directly.
    lin, params = _linear()
    own = lin.weight
    with stateless._reparametrize_module(lin, params):
        assert lin.weight is params["weight"]
        assert lin(flambeau.tensor([[3.0, 4.0]])).tolist() == [[11.5]]
    assert lin.weight is own
    with pytest.raises(RuntimeError, match="Missing key"):
        with stateless._reparametrize_module(lin, {"weight": params["weight"]}, strict=True):
            pass
    assert lin.weight is own
