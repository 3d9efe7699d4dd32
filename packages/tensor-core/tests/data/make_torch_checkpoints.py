"""Writes the PyTorch checkpoints that test_serialization_torch.py reads, and their values.

Run with a Python that has torch and safetensors (the tests themselves never import torch):

    /work/torchvenv/bin/python packages/tensor-core/tests/data/make_torch_checkpoints.py

Writes, beside this script:

* ``torch_state_dict.pt``: a small model's ``state_dict()`` (Conv2d and Linear
  parameters, BatchNorm2d buffers after one training step);
* ``torch_nested.pt``: nested containers, views sharing one storage, parameters,
  sizes, devices, dtypes, plain values, conjugated and negated views, a tensor
  with a Python attribute;
* ``torch_dtypes.pt``: one tensor of each dtype flambeau has;
* ``torch_legacy.pt``: the nested object in the legacy format
  (``_use_new_zipfile_serialization=False``);
* ``torch_model.safetensors``: the state dict and every dtype safetensors holds,
  written by ``safetensors.torch.save_file``;
* ``torch_expected.npz``: the expected values, by name (bfloat16 as float32).
"""

from __future__ import annotations

import os
from collections import OrderedDict

import numpy as np
import safetensors.torch
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 3, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(3)
        self.fc = torch.nn.Linear(12, 4)

    def forward(self, x):
        return self.fc(self.bn(self.conv(x)).flatten(1))


def state_dict():
    model = Small()
    model(torch.randn(5, 2, 2, 2))  # training mode: running statistics move
    return model.state_dict()


def nested():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6) / 4
    with_attr = torch.tensor([1.0, -1.0])
    with_attr.note = "kept"
    obj = {
        "base": base,
        "row": base[2],
        "col": base[:, 1],
        "t": base.t(),
        "tail": base.view(-1)[5:17].view(3, 4),
        "pair": (base[0], [base[1, ::2], {"deep": base[3, 1:4]}]),
        "param": torch.nn.Parameter(torch.linspace(-1, 1, 5)),
        "frozen": torch.nn.Parameter(torch.ones(2), requires_grad=False),
        "leaf": torch.tensor([1.0, 2.0], requires_grad=True),
        "size": torch.Size([2, 3]),
        "device": torch.device("cpu"),
        "dtype": torch.float16,
        "plain": [1, -(2**40), 2.5, float("inf"), None, True, "text", b"\x00\xff", {3, 4}, 1 - 2j],
        "bytearray": bytearray(b"ba"),
        "ordered": OrderedDict([("z", 1), ("a", torch.zeros(2, dtype=torch.int64))]),
        "scalar": torch.tensor(7.5),
        "empty": torch.empty(0, 3),
        "conj": torch.tensor([1 + 2j, 3 - 4j]).conj(),
        "neg": torch._neg_view(torch.tensor([1.5, -2.0])),
        "with_attr": with_attr,
    }
    obj["base_again"] = base  # the same tensor twice: one object after loading
    return obj


def dtypes():
    values = [0, 1, -1, 100, -128, 127, 3]
    out = {name: torch.tensor(values).to(getattr(torch, name)) for name in ("int8", "int16")}
    out["bool"] = torch.tensor([True, False, True])
    out["uint8"] = torch.tensor([0, 1, 255, 128], dtype=torch.uint8)
    out["int32"] = torch.tensor([-(2**31), 2**31 - 1, 0], dtype=torch.int32)
    out["int64"] = torch.tensor([-(2**63), 2**63 - 1, 5], dtype=torch.int64)
    special = [0.0, -0.0, 1.5, -2.25, float("inf"), float("-inf"), 65504.0]
    for name in ("float16", "bfloat16", "float32", "float64"):
        out[name] = torch.tensor(special).to(getattr(torch, name))
    out["float64"][0] = 1e-300
    out["complex64"] = torch.tensor([1 + 2j, -0.5j], dtype=torch.complex64)
    out["complex128"] = torch.tensor([1e200 - 3j, 0j], dtype=torch.complex128)
    return out


def expected(prefix: str, obj, out: dict) -> None:
    """Each tensor's values under its path (bfloat16 widened to float32, bits resolved)."""
    if isinstance(obj, torch.Tensor):
        t = obj.detach().resolve_conj().resolve_neg()
        out[prefix] = (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    elif isinstance(obj, dict):
        for k, v in obj.items():
            expected(f"{prefix}.{k}", v, out)
    elif isinstance(obj, (list, tuple)) and not isinstance(obj, torch.Size):
        for i, v in enumerate(obj):
            expected(f"{prefix}.{i}", v, out)


def main():
    torch.manual_seed(0)
    values: dict[str, np.ndarray] = {}
    objects = {"state_dict": state_dict(), "nested": nested(), "dtypes": dtypes()}
    for name, obj in objects.items():
        torch.save(obj, os.path.join(HERE, f"torch_{name}.pt"))
        expected(name, obj, values)
    torch.save(
        objects["nested"],
        os.path.join(HERE, "torch_legacy.pt"),
        _use_new_zipfile_serialization=False,
    )
    flat = {k: v.clone() for k, v in objects["dtypes"].items() if v.dtype != torch.complex128}
    flat.update({f"state.{k}": v for k, v in objects["state_dict"].items()})
    path = os.path.join(HERE, "torch_model.safetensors")
    safetensors.torch.save_file(flat, path, metadata={"format": "pt"})
    np.savez_compressed(os.path.join(HERE, "torch_expected.npz"), **values)
    print(f"wrote with torch {torch.__version__}, safetensors {safetensors.__version__}")


if __name__ == "__main__":
    main()
