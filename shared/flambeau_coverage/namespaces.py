"""The namespaces whose coverage is measured, with their targets (issue 13)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Namespace:
    name: str  # as written after "torch." ("" for torch itself, "Tensor" for the class)
    target: float  # the fraction of torch's names flambeau must have

    @property
    def title(self) -> str:
        return f"torch.{self.name}" if self.name else "torch"

    def resolve(self, root: str):
        """The module (or class) of this namespace under root ("torch" or "flambeau").

        None when it cannot be imported (a sibling package that is not installed).
        """
        try:
            top = importlib.import_module(root)
            if self.name == "Tensor":
                return top.Tensor
            return importlib.import_module(f"{root}.{self.name}") if self.name else top
        except ImportError:
            return None


NAMESPACES = [
    Namespace("", 0.95),
    Namespace("Tensor", 0.95),
    Namespace("nn", 0.95),
    Namespace("nn.functional", 0.95),
    Namespace("nn.init", 0.95),
    Namespace("nn.utils", 0.95),
    Namespace("linalg", 0.95),
    Namespace("fft", 0.95),
    Namespace("special", 0.95),
    Namespace("autograd", 0.95),
    Namespace("autograd.forward_ad", 0.95),
    Namespace("func", 0.95),
    Namespace("optim", 0.95),
    Namespace("optim.lr_scheduler", 0.95),
    Namespace("distributions", 0.95),
    Namespace("testing", 0.95),
    Namespace("random", 0.95),
    Namespace("accelerator", 0.95),
    Namespace("amp", 0.95),
    Namespace("sparse", 0.80),
    Namespace("profiler", 0.90),
    Namespace("autograd.profiler", 0.85),
    Namespace("version", 0.95),
    Namespace("jit", 0.90),
    Namespace("hub", 0.95),
    Namespace("signal.windows", 0.95),
    Namespace("utils.benchmark", 0.50),
    Namespace("utils.hooks", 0.95),
    Namespace("utils.dlpack", 0.95),
    Namespace("types", 0.80),
    Namespace("nn.attention", 0.80),
    Namespace("nn.utils.prune", 0.95),
    Namespace("nn.grad", 0.95),
    Namespace("utils.tensorboard", 0.95),
    Namespace("overrides", 0.80),
    Namespace("backends.cpu", 0.80),
    Namespace("backends.cuda", 0.80),
    Namespace("backends.mkl", 0.80),
    Namespace("backends.openmp", 0.80),
    Namespace("backends.mps", 0.80),
    Namespace("backends.nnpack", 0.80),
    Namespace("utils.checkpoint", 0.50),
    Namespace("utils.data", 0.90),
    Namespace("multiprocessing", 0.90),
    Namespace("distributed", 0.50),
    Namespace("fx", 0.95),
    Namespace("compiler", 0.95),
    Namespace("utils._pytree", 0.95),
]
