"""Named tuples returned by operators with several results (``max(dim=...)``, ...).

The C++ core creates each type on first use with ``__module__`` set to this
module and publishes it here, so ``flambeau.return_types.max`` is importable
and results pickle.
"""
