"""``load_state_dict_from_url``: download a checkpoint once into ``<hub_dir>/checkpoints``
and load it with ``flambeau.load`` (which reads torch.save files and flambeau's own)."""

from __future__ import annotations

import os
import re
import sys
import warnings
import zipfile
from urllib.parse import urlparse

from flambeau.hub._zipfiles import safe_extract

# The hash in a checkpoint's name: bfd8deac in resnet18-bfd8deac.pth.
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")


def _is_legacy_zip_format(filename: str) -> bool:
    """A ZIP holding one file: a checkpoint (torch.save < 1.6) zipped by hand, which
    torch.hub unzips. A torch.save or flambeau.save archive has several entries."""
    if not zipfile.is_zipfile(filename):
        return False
    with zipfile.ZipFile(filename) as zf:
        entries = zf.infolist()
    return len(entries) == 1 and not entries[0].is_dir()


def _legacy_zip_load(filename: str, model_dir: str, map_location, weights_only: bool):
    import flambeau

    warnings.warn(
        "Falling back to the old format < 1.6. This support will be deprecated in favor of "
        "default zipfile format introduced in 1.6. Please redo torch.save() to save it in "
        "the new zipfile format.",
        FutureWarning,
        stacklevel=3,
    )
    with zipfile.ZipFile(filename) as zf:
        entries = zf.infolist()
        if len(entries) != 1:
            raise RuntimeError("Only one file(not dir) is allowed in the zipfile")
        safe_extract(zf, model_dir)
        extracted = os.path.join(model_dir, entries[0].filename)
    return flambeau.load(extracted, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(
    url: str,
    model_dir=None,
    map_location=None,
    progress: bool = True,
    check_hash: bool = False,
    file_name=None,
    weights_only: bool = False,
):
    """Loads the checkpoint at ``url``, downloading it first unless it is cached.

    The file is kept in ``model_dir`` (default ``<hub_dir>/checkpoints``, see
    :func:`get_dir`) under ``file_name`` or the URL's file name; a later call loads
    that file without downloading. With ``check_hash``, the name must read
    ``name-<sha256 prefix>.ext`` and the download must match the prefix. A ZIP holding
    a single file is unzipped first (the legacy format). ``map_location`` and
    ``weights_only`` go to :func:`flambeau.load`.

    >>> import os, pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     src = pathlib.Path(d, "tiny.pt")
    ...     flambeau.save({"w": flambeau.ones(2)}, src)
    ...     cache = os.path.join(d, "cache")
    ...     state = flambeau.hub.load_state_dict_from_url(
    ...         src.as_uri(), model_dir=cache, progress=False
    ...     )  # doctest: +ELLIPSIS
    Downloading: "file://.../tiny.pt" to .../cache/tiny.pt
    >>> state
    {'w': tensor([1., 1.])}
    """
    import flambeau
    from flambeau import hub  # through the package, so that patching hub's names works

    if model_dir is None:
        model_dir = os.path.join(hub.get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = os.path.basename(urlparse(url).path)
    if file_name is not None:
        filename = file_name
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            match = HASH_REGEX.search(filename)
            hash_prefix = match.group(1) if match else None
        hub.download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return flambeau.load(cached_file, map_location=map_location, weights_only=weights_only)
