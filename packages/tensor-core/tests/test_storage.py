"""Storages (flambeau/storage.py, python/storage_bindings.cpp) against PyTorch's documented
behaviour, with hand-derived values."""

from __future__ import annotations

import copy
import pickle
import struct
import warnings

import numpy as np
import pytest

import flambeau as F


def test_untyped_storage_is_the_tensors_bytes():
    t = F.arange(4.0)
    s = t.untyped_storage()
    assert isinstance(s, F.UntypedStorage)
    assert s is t.untyped_storage()  # one Python object per storage while it lives
    assert s.nbytes() == 16 and s.size() == 16 and len(s) == 16
    assert s.data_ptr() == t.data_ptr()
    assert s.device == F.device("cpu") and not s.is_cuda and s.element_size() == 1
    assert s.tolist()[4:8] == list(struct.pack("<f", 1.0))
    assert t[1:].untyped_storage().data_ptr() == s.data_ptr()  # views share it
    assert t.view(F.int32).untyped_storage() is s


def test_constructors_and_values():
    assert F.UntypedStorage(5).nbytes() == 5
    s = F.UntypedStorage([1, 2, 255])
    assert s.tolist() == [1, 2, 255] and list(s) == [1, 2, 255]
    assert s[0] == 1 and s[-1] == 255
    s[1] = 9
    assert s.tolist() == [1, 9, 255]
    s.fill_(4)
    assert s.tolist() == [4, 4, 4]
    with pytest.raises(ValueError, match=r"\[0, 255\]"):
        F.UntypedStorage([256])
    with pytest.raises(RuntimeError, match="non-negative"):
        F.UntypedStorage(-1)
    with pytest.raises(TypeError):
        F.UntypedStorage(2.5)
    with pytest.raises(IndexError):
        s[3]


def test_a_slice_is_a_storage_over_the_same_memory():
    t = F.arange(4.0)
    part = t.untyped_storage()[4:8]
    assert isinstance(part, F.UntypedStorage) and part.nbytes() == 4
    part.fill_(0)
    assert t.tolist() == [0.0, 0.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="step"):
        t.untyped_storage()[::2]


def test_copy_clone_resize_and_pickle():
    s = F.UntypedStorage([1, 2, 3])
    c = s.clone()
    assert c.tolist() == [1, 2, 3] and c.data_ptr() != s.data_ptr()
    s.copy_(F.UntypedStorage([7, 8, 9]))
    assert s.tolist() == [7, 8, 9]
    with pytest.raises(RuntimeError, match="size mismatch"):
        s.copy_(F.UntypedStorage(2))
    s.resize_(5)
    assert s.nbytes() == 5 and s.tolist()[:3] == [7, 8, 9]
    s.resize_(2)
    assert s.tolist() == [7, 8]
    assert pickle.loads(pickle.dumps(s)).tolist() == [7, 8]
    assert copy.deepcopy(s).tolist() == [7, 8]
    assert s.float().tolist() == [7.0, 8.0]  # each byte converted, as PyTorch's


def test_resizing_a_tensor_grows_its_storage_in_place():
    t = F.zeros(2)
    s = t.untyped_storage()
    t.resize_(10)
    assert t.untyped_storage() is s and s.nbytes() == 40


def test_typed_storage_and_legacy_classes():
    t = F.arange(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = t.storage()
    assert isinstance(st, F.TypedStorage) and isinstance(st, F.FloatStorage)
    assert not isinstance(st, F.LongStorage)
    assert st.dtype == F.float32 and st.size() == 3 and len(st) == 3 and st.nbytes() == 12
    assert st.tolist() == [0.0, 1.0, 2.0] and st[1] == 1.0
    assert st.untyped() is t.untyped_storage()
    st[0] = 5.0
    assert t.tolist() == [5.0, 1.0, 2.0]
    assert t.storage_type() is F.FloatStorage
    assert st.type() == "torch.FloatStorage" and st.pickle_storage_type() == "FloatStorage"
    assert st.double().dtype == F.float64 and st.double().tolist() == [5.0, 1.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        longs = F.LongStorage([1, 2, 3])
        assert type(longs) is F.TypedStorage and longs.dtype == F.int64
        assert F.FloatStorage(4).size() == 4
        assert F.TypedStorage(2, dtype=F.int32).dtype == F.int32
    assert pickle.loads(pickle.dumps(longs)).tolist() == [1, 2, 3]
    raw = struct.pack(">2f", 1.5, -2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert F.FloatStorage.from_buffer(raw, "big").tolist() == [1.5, -2.0]
    with pytest.raises(RuntimeError, match="slices are only supported"):
        st[0:1]


def test_typed_storage_warns_once_as_pytorch():
    import flambeau.storage as storage_module

    storage_module._warned = False
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        F.zeros(1).storage()


def test_set_from_a_storage():
    t = F.arange(6.0)
    y = F.tensor([])
    y.set_(t.untyped_storage(), 1, (2, 2), (2, 1))
    np.testing.assert_array_equal(y.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    z = F.tensor([]).set_(t.untyped_storage())
    assert z.tolist() == t.tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="Expected a Storage of type"):
            F.tensor([], dtype=F.int64).set_(t.storage())


def test_is_storage():
    t = F.zeros(2)
    assert F.is_storage(t.untyped_storage())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert F.is_storage(t.storage())
    assert not F.is_storage(t) and not F.is_storage([1])


def test_view_checks_its_geometry():
    s = F.UntypedStorage(16)
    assert s._view(F.float32, 1, [3], [1]).shape == (3,)
    with pytest.raises(RuntimeError, match="past the storage"):
        s._view(F.float32, 1, [4], [1])
    with pytest.raises(RuntimeError):
        s._view(F.float32, -1, [1], [1])
    with pytest.raises(RuntimeError):
        s._view(F.float32, 0, [2**62, 2], [2, 2**62])
