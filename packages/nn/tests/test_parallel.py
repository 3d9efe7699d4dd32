"""flambeau.nn.parallel: DataParallel on a machine without an accelerator (it runs the
module, as PyTorch's does), the scatter / replicate / parallel_apply / gather pieces on CPU
devices, and DistributedDataParallel's stand-in while flambeau-distributed is absent."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
from _helpers import np_of, randn64

import flambeau
from flambeau import nn
from flambeau.nn import parallel

needs_no_cuda = pytest.mark.skipif(
    flambeau.cuda.is_available(), reason="checks the behaviour without an accelerator"
)


@needs_no_cuda
def test_data_parallel_module_runs_the_module_without_an_accelerator():
    m = nn.Linear(3, 2)
    dp = nn.DataParallel(m, device_ids=[0, 1], output_device=1)
    assert dp.module is m and dp.device_ids == []
    assert not hasattr(dp, "output_device")  # PyTorch sets only device_ids here
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    assert repr(dp).startswith("DataParallel(\n  (module): Linear(")
    x = flambeau.randn(4, 3)
    np.testing.assert_array_equal(np_of(dp(x)), np_of(m(x)))
    assert nn.DataParallel is parallel.DataParallel
    out = nn.DataParallel(nn.Bilinear(2, 2, 1))(flambeau.ones(1, 2), input2=flambeau.ones(1, 2))
    assert out.shape == (1, 1)


@needs_no_cuda
def test_functional_data_parallel_needs_an_accelerator():
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        parallel.data_parallel(nn.Linear(3, 2), flambeau.randn(4, 3))


def test_scatter_splits_tensors_and_containers():
    cpu = [flambeau.device("cpu")] * 3
    x = flambeau.arange(10.0).reshape(5, 2)
    parts = parallel.scatter(x, cpu)
    assert [tuple(p.shape) for p in parts] == [(2, 2), (2, 2), (1, 2)]
    np.testing.assert_array_equal(np_of(flambeau.cat(parts)), np_of(x))
    Pair = namedtuple("Pair", "a b")
    split = parallel.scatter((x, {"k": x, "n": 7}, Pair(x, "s")), cpu, dim=0)
    assert len(split) == 3
    first = split[0]
    assert first[1]["n"] == 7 and first[1]["k"].shape == (2, 2)
    assert isinstance(first[2], Pair) and first[2].b == "s"
    along_1 = parallel.scatter(x, cpu[:2], dim=1)
    assert [tuple(p.shape) for p in along_1] == [(5, 1), (5, 1)]
    args, kwargs = parallel.scatter_gather.scatter_kwargs((x,), {"flag": True}, cpu[:2])
    assert len(args) == len(kwargs) == 2 and kwargs[1] == {"flag": True}


def test_gather_concatenates_and_recurses():
    a, b = flambeau.ones(2, 3), flambeau.zeros(1, 3)
    out = parallel.gather([a, b], "cpu")
    np.testing.assert_array_equal(np_of(out), np.vstack([np.ones((2, 3)), np.zeros((1, 3))]))
    out = parallel.gather([{"x": a, "y": None}, {"x": b, "y": None}], -1)
    assert out["y"] is None and out["x"].shape == (3, 3)
    with pytest.warns(UserWarning, match="all input tensors were scalars"):
        scalars = parallel.gather([flambeau.tensor(1.0), flambeau.tensor(2.0)], "cpu")
    np.testing.assert_array_equal(np_of(scalars), [1.0, 2.0])


def test_replicate_shares_gradients_with_the_original():
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    replicas = parallel.replicate(m, ["cpu", "cpu"])
    assert len(replicas) == 2 and all(type(r) is nn.Sequential for r in replicas)
    assert replicas[0][0] is not m[0] and replicas[0][0]._is_replica
    x = randn64(6, 3, requires_grad=False)
    chunks = parallel.scatter(x, ["cpu", "cpu"])
    outputs = parallel.parallel_apply(replicas, [(c,) for c in chunks])
    total = parallel.gather(outputs, "cpu").sum()
    total.backward()
    reference = m[0].weight.grad.clone()
    m.zero_grad()
    m(x).sum().backward()
    np.testing.assert_allclose(np_of(reference), np_of(m[0].weight.grad), rtol=1e-12)
    detached = parallel.replicate(m, ["cpu"], detach=True)[0]
    assert not detached[0].weight.requires_grad


def test_parallel_apply_arguments_and_errors():
    double = nn.Identity()
    outs = parallel.parallel_apply([double, double], [flambeau.ones(1), (flambeau.zeros(1),)])
    assert [float(o) for o in outs] == [1.0, 0.0]
    with pytest.raises(AssertionError, match="number of modules 2 is not equal to the number of "
                                             "inputs 1"):  # fmt: skip
        parallel.parallel_apply([double, double], [flambeau.ones(1)])
    with pytest.raises(RuntimeError):
        parallel.parallel_apply([nn.Linear(2, 2)], [flambeau.ones(3)])
    lazy = nn.LazyLinear(2)
    with pytest.raises(RuntimeError, match="uninitialized parameters can't be used"):
        parallel.replicate(lazy, ["cpu"])


def test_distributed_data_parallel_stand_in_without_the_package():
    ddp = parallel.DistributedDataParallel
    from flambeau.nn.parallel import DistributedDataParallel
    from flambeau.nn.parallel.distributed import DistributedDataParallel as same

    assert ddp is DistributedDataParallel is same
    try:
        import flambeau.distributed  # noqa: F401
    except ImportError:
        assert not isinstance(nn.Linear(1, 1), ddp)
        with pytest.raises(ImportError, match="flambeau-distributed"):
            ddp(nn.Linear(1, 1))
    with pytest.raises(AttributeError):
        parallel.NoSuchThing  # noqa: B018
    with pytest.raises(ModuleNotFoundError):
        import flambeau.nn.parallel.no_such_module  # noqa: F401
