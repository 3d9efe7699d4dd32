"""Downloading a URL to a file, with an optional SHA-256 check and a progress bar."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import sys
import tempfile
import uuid
from urllib.request import Request, urlopen

READ_DATA_CHUNK = 128 * 1024


class _Progress:
    """A minimal progress bar on stderr, for when tqdm is not installed (as torch.hub)."""

    def __init__(self, total, disable):
        self.total, self.disable, self.n = total, disable, 0

    def update(self, n: int) -> None:
        if self.disable:
            return
        self.n += n
        if self.total is None:
            sys.stderr.write(f"\r{self.n:.1f} bytes")
        else:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
        sys.stderr.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if not self.disable:
            sys.stderr.write("\n")


def _progress_bar(total, disable: bool):
    try:
        from tqdm import tqdm
    except ImportError:
        return _Progress(total, disable)
    return tqdm(total=total, disable=disable, unit="B", unit_scale=True, unit_divisor=1024)


def _open_partial(dst: str):
    """A new file next to ``dst``; the download goes there and is moved onto ``dst``
    once complete, so that an interrupted download never leaves a broken ``dst``."""
    for _ in range(tempfile.TMP_MAX):
        partial = f"{dst}.{uuid.uuid4().hex}.partial"
        try:
            return partial, open(partial, "xb")  # noqa: SIM115 - closed by the caller
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "No usable temporary file name found")


def download_url_to_file(url: str, dst: str, hash_prefix=None, progress: bool = True) -> None:
    """Downloads ``url`` to the path ``dst``.

    With ``hash_prefix``, the SHA-256 of the content must start with it (else
    RuntimeError, and ``dst`` is not written). ``progress`` shows a progress bar on
    stderr. Any URL urllib opens works, ``file://`` included.

    >>> import os, pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     src = pathlib.Path(d, "weights.bin")
    ...     _ = src.write_bytes(b"flambeau")
    ...     dst = os.path.join(d, "copy.bin")
    ...     flambeau.hub.download_url_to_file(src.as_uri(), dst, progress=False)
    ...     print(open(dst, "rb").read())
    b'flambeau'
    """
    dst = os.path.expanduser(dst)
    partial, f = _open_partial(dst)
    try:
        with f:
            request = Request(url, headers={"User-Agent": "flambeau.hub"})
            with urlopen(request) as response:
                length = response.info().get("Content-Length")
                sha256 = hashlib.sha256() if hash_prefix is not None else None
                with _progress_bar(int(length) if length else None, not progress) as bar:
                    while chunk := response.read(READ_DATA_CHUNK):
                        f.write(chunk)
                        if sha256 is not None:
                            sha256.update(chunk)
                        bar.update(len(chunk))
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[: len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(partial, dst)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
