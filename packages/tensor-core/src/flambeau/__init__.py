"""flambeau: PyTorch-style tensors on a C++ core.

This package (distribution ``flambeau-tensor-core``) owns the ``flambeau``
namespace; sibling distributions (flambeau-autograd, flambeau-nn, ...) add
subpackages to it.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from flambeau import _openblas  # noqa: E402

_openblas.preload()

from flambeau import _C  # noqa: E402
from flambeau._C import *  # noqa: E402,F401,F403
from flambeau._C import Tensor, dtype, device, Generator  # noqa: E402,F401
from flambeau._size import Size  # noqa: E402,F401
from flambeau import _grad, _siblings  # noqa: E402

__version__ = "0.1.0"

_grad.install()
_siblings.install()
