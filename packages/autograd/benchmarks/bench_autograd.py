"""Autograd overheads beside PyTorch: recording one op, and a chain of 100 small ops.

The chain rows, per op (time / 100): forward+backward (build the graph, then backward),
and backward only: each timed call runs backward of a fresh graph that `measure`'s
setup built outside the clock.
"""

from __future__ import annotations

from flambeau_bench import compare, library, report

CHAIN = 100
LIBS = ("flambeau", "torch")


def record_add(lib):
    a = library(lib).ones(1, requires_grad=True)
    b = library(lib).ones(1, requires_grad=True)
    return lambda: a + b


def add_no_grad_inputs(lib):
    a, b = library(lib).ones(1), library(lib).ones(1)
    return lambda: a + b


def chain(lib):
    """A function building a fresh chain of CHAIN muls from one leaf; returns its output."""
    x = library(lib).ones(1, requires_grad=True)

    def build():
        y = x
        for _ in range(CHAIN):
            y = y * 1.0001
        return y

    return build


def chain_forward_backward(lib):
    build = chain(lib)
    return lambda: build().backward()


def chain_backward(lib):
    return (lambda y: y.backward()), chain(lib)  # (timed, setup)


def per_op(row):
    name, *times = row
    return (name, *(t and type(t)(t.best / CHAIN, t.median / CHAIN) for t in times))


def main() -> None:
    rows = [
        compare("record c = a + b (requires grad)", record_add, libs=LIBS, number=20_000),
        compare("c = a + b, no input requires grad", add_no_grad_inputs, libs=LIBS, number=50_000),
        per_op(
            compare(
                f"chain of {CHAIN} muls: forward+backward per op",
                chain_forward_backward,
                libs=LIBS,
                number=20,
            )
        ),
        per_op(
            compare(
                f"chain of {CHAIN} muls: backward only per op (graph built in setup)",
                chain_backward,
                libs=LIBS,
                number=20,
            )
        ),
    ]
    report("autograd overheads (1-element float32 tensors)", rows)


if __name__ == "__main__":
    main()
