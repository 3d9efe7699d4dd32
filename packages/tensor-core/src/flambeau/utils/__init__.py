"""flambeau.utils: helpers outside the tensor API proper (``deterministic``)."""

from flambeau.utils import deterministic  # noqa: F401
