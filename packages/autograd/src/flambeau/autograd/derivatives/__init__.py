"""Derivative formulas, declared once, by operator name.

Each formula maps the gradient of an operator's output(s) ``g`` and its bound
arguments ``a`` (schema names, plus ``result``/``results``) to gradients of its
tensor arguments, as ``{param: grad}`` (a list for Tensor[] params). Formulas
are written with flambeau operators, so with ``create_graph=True`` they are
recorded too and give higher-order gradients. Broadcasting is undone
generically (``sum_to``) after the formula runs.

Formulas live in one module per operator family; importing this package
registers them all.
"""

from . import (  # noqa: F401  (registers formulas)
    complex,
    fft,
    indexing,
    linalg,
    nn,
    nn_attention,
    nn_conv,
    nn_ctc,
    nn_rnn,
    nn_rnn_layer,
    pointwise,
    pointwise_numeric,
    random,
    reduction,
    shape,
    sorting,
    special,
)
from .helpers import sum_to, unreduce
from .registry import (
    COMPOSITES,
    FORMULAS,
    Formula,
    bind_formula,
    composite,
    formula,
    nondifferentiable,
)

__all__ = [
    "COMPOSITES",
    "FORMULAS",
    "Formula",
    "bind_formula",
    "composite",
    "formula",
    "nondifferentiable",
    "sum_to",
    "unreduce",
]
