"""flambeau.utils: helpers beside the tensor API (``deterministic``).

Sibling distributions add subpackages here (flambeau-data's ``flambeau.utils.
data``), so the package path is extended as ``flambeau``'s is.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from flambeau.utils import deterministic  # noqa: E402,F401
