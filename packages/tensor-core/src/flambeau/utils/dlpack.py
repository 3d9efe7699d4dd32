"""flambeau.utils.dlpack: DLPack exchange with other libraries (torch.utils.dlpack).

``from_dlpack`` is ``flambeau.from_dlpack``; ``to_dlpack`` is ``flambeau.to_dlpack``, the
legacy export to a capsule.
"""

from flambeau._dlpack import DLDeviceType, from_dlpack, to_dlpack  # noqa: F401

__all__ = ["DLDeviceType", "from_dlpack"]
