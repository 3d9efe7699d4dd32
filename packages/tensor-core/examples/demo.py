"""A short tour of flambeau's tensors (run with `nox -s demo`).

flambeau mirrors PyTorch: every line here reads the same with `import torch`.
"""

import numpy as np

import flambeau


def section(title: str) -> None:
    print(f"\n=== {title} ===")


def show(expression: str, value) -> None:
    """Print like an interactive session: the expression, then its value's repr."""
    print(f">>> {expression}\n{value!r}")


section("Creating tensors")
a = flambeau.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
show("a = flambeau.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])", a)
show("a.shape, a.dtype, a.device", (a.shape, a.dtype, a.device))
show("flambeau.zeros(2, 3)", flambeau.zeros(2, 3))
show("flambeau.arange(6).reshape(2, 3)", flambeau.arange(6).reshape(2, 3))
flambeau.manual_seed(0)
show("flambeau.rand(2, 2)", flambeau.rand(2, 2))

section("Broadcasting arithmetic")
row = flambeau.tensor([10.0, 20.0, 30.0])  # shape (3,): repeated for each row
col = flambeau.tensor([[1.0], [-1.0]])  # shape (2, 1): repeated for each column
show("a + row", a + row)
show("a * col", a * col)
show("flambeau.exp(a) - 1", flambeau.exp(a) - 1)

section("Views share storage")
t = flambeau.arange(12, dtype=flambeau.float32).reshape(3, 4)
middle = t[1]  # a view: no copy
middle.mul_(100)  # in place, through the view
show("t  (after t[1].mul_(100))", t)
show("t.t().stride(), t.t().is_contiguous()", (t.t().stride(), t.t().is_contiguous()))
show("t[:, ::2]", t[:, ::2])

section("Reductions")
show("t.sum()", t.sum())
show("t.sum(dim=0)", t.sum(dim=0))
show("t.mean(dim=1)", t.mean(dim=1))
show("t.argmax(dim=1)", t.argmax(dim=1))

section("Type promotion (PyTorch's rules)")
ints = flambeau.tensor([1, 2, 3])
floats = flambeau.tensor([0.5, 0.5, 0.5])
show("(ints + floats).dtype", (ints + floats).dtype)
show("(ints * 2).dtype", (ints * 2).dtype)
show("(ints / 2).dtype", (ints / 2).dtype)
show("(ints + 1.5).dtype", (ints + 1.5).dtype)
show("(floats + floats.double()).dtype", (floats + floats.double()).dtype)

section("NumPy bridge (zero-copy both ways)")
array = np.arange(6, dtype=np.float32).reshape(2, 3)
shared = flambeau.from_numpy(array)
array[0, 0] = 42.0  # NumPy writes, flambeau sees it
show("flambeau.from_numpy(array)  (after array[0, 0] = 42)", shared)
show("np.shares_memory(array, shared.numpy())", np.shares_memory(array, shared.numpy()))

section("Printing")
show(
    "flambeau.linspace(0, 1, 5, dtype=flambeau.float64)",
    flambeau.linspace(0, 1, 5, dtype=flambeau.float64),
)
show("flambeau.arange(10000)  (long tensors are summarised)", flambeau.arange(10000))
