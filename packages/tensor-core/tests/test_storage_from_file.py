"""UntypedStorage.from_file, as PyTorch's: shared storages map the file (created or grown
to nbytes; writes reach it; .filename names it), private ones read nbytes of it; a short
or missing file is a RuntimeError naming it. Bytes checked against what was written."""

from __future__ import annotations

import os

import pytest

import flambeau


def test_shared_storage_maps_and_creates_the_file(tmp_path):
    path = tmp_path / "mapped.bin"
    s = flambeau.UntypedStorage.from_file(path, True, 8)
    assert os.path.getsize(path) == 8 and s.nbytes() == 8 and s.filename == str(path)
    assert s.tolist() == [0] * 8
    s[0], s[7] = 7, 255
    del s
    assert path.read_bytes() == b"\x07" + b"\x00" * 6 + b"\xff"


def test_shared_storage_grows_a_short_file_and_keeps_its_bytes(tmp_path):
    path = tmp_path / "short.bin"
    path.write_bytes(b"\x01\x02")
    s = flambeau.UntypedStorage.from_file(path, True, 4)
    assert s.tolist() == [1, 2, 0, 0] and os.path.getsize(path) == 4


def test_private_storage_reads_a_copy(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(bytes(range(10)))
    s = flambeau.UntypedStorage.from_file(path, False, 4)
    assert s.tolist() == [0, 1, 2, 3] and s.filename is None
    s[0] = 9
    assert path.read_bytes()[0] == 0
    assert flambeau.UntypedStorage.from_file(path).nbytes() == 10  # nbytes=0: the whole file


def test_short_and_missing_files_are_named(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"abc")
    with pytest.raises(
        RuntimeError, match=r"size <3> is smaller than the required mapping size <8>"
    ):
        flambeau.UntypedStorage.from_file(path, False, 8)
    with pytest.raises(RuntimeError, match=r"unable to open file <.*missing\.bin> in read-only"):
        flambeau.UntypedStorage.from_file(tmp_path / "missing.bin", False, 4)


def test_a_tensor_on_a_mapped_storage_writes_the_file(tmp_path):
    path = tmp_path / "bytes.bin"
    s = flambeau.UntypedStorage.from_file(path, True, 8)
    t = flambeau.tensor([], dtype=flambeau.uint8).set_(s)
    t.fill_(3)
    assert path.read_bytes() == b"\x03" * 8
