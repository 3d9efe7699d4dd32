"""The rest of flambeau.backends' PyTorch names, with PyTorch's behaviour on a build
without CUDA, MKL, MPS and NNPACK: cuda's preferred libraries, workspace sizes and cuFFT
plan caches (and a CUDA plugin's answers when it has them), mkl.verbose, mps.get_name and
get_core_count, nnpack's switch. PyTorch, when installed, is asked the same questions."""

import os
import subprocess
import sys
import types
import warnings

import pytest

import flambeau as F
from flambeau import backends
from flambeau.backends import _cuda_libraries, _cuda_plugin, cuda, mkl, mps, nnpack
from flambeau.backends.cuda import _BlasBackend, _LinalgBackend, _ROCmFABackend


@pytest.fixture(autouse=True)
def restore_settings():
    preferred = dict(_cuda_libraries._preferred)
    warned = set(_cuda_libraries._warned_experimental)
    nnpack_state = dict(nnpack._state)
    yield
    _cuda_libraries._preferred.update(preferred)
    _cuda_libraries._warned_experimental.clear()
    _cuda_libraries._warned_experimental.update(warned)
    nnpack._state.update(nnpack_state)


@pytest.fixture
def plugin(monkeypatch):
    """A stand-in CUDA plugin: the test sets the functions it provides."""
    module = types.SimpleNamespace()
    monkeypatch.setattr(_cuda_plugin, "plugin", lambda: module)
    return module


# ---- the enums --------------------------------------------------------------------------


def test_enums_as_pytorchs():
    assert [(m.name, int(m)) for m in _BlasBackend] == [
        ("Default", 0), ("Cublas", 1), ("Cublaslt", 2), ("Ck", 3),
    ]  # fmt: skip
    assert [(m.name, int(m)) for m in _LinalgBackend] == [
        ("Default", 0), ("Cusolver", 1), ("Magma", 2),
    ]  # fmt: skip
    assert [(m.name, int(m)) for m in _ROCmFABackend] == [
        ("Default", 0), ("AOTriton", 1), ("Ck", 2),
    ]  # fmt: skip
    assert repr(_BlasBackend.Cublas) == "<_BlasBackend.Cublas: 1>"
    assert str(_BlasBackend.Cublas) == "_BlasBackend.Cublas"
    assert _BlasBackend.Cublas != 1  # not an int, as PyTorch's


# ---- preferred libraries ---------------------------------------------------------------


def test_preferred_blas_library():
    assert cuda.preferred_blas_library() is _BlasBackend.Cublas  # PyTorch's default
    assert cuda.preferred_blas_library("default") is _BlasBackend.Cublas  # reads back as cuBLAS
    assert cuda.preferred_blas_library("hipblas") is _BlasBackend.Cublas
    with pytest.warns(UserWarning, match="preferred_blas_library is an experimental feature"):
        assert cuda.preferred_blas_library("ck") is _BlasBackend.Ck
    assert cuda.preferred_blas_library() is _BlasBackend.Ck
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once only
        assert cuda.preferred_blas_library(_BlasBackend.Ck) is _BlasBackend.Ck
    assert cuda.preferred_blas_library(_BlasBackend.Default) is _BlasBackend.Cublas


@pytest.mark.parametrize("name", ["cublaslt", "hipblaslt", _BlasBackend.Cublaslt])
def test_cublaslt_needs_a_build_with_it(name):
    with pytest.raises(RuntimeError, match="Cannot set preferred backend to cuBLASLt"):
        cuda.preferred_blas_library(name)
    assert cuda.preferred_blas_library() is _BlasBackend.Cublas  # unchanged


def test_preferred_library_errors():
    choices = "default, cublas, hipblas, cublaslt, hipblaslt, ck"
    with pytest.raises(RuntimeError, match=f"Unknown input value. Choose from: {choices}."):
        cuda.preferred_blas_library("CUBLAS")
    for bad in (1, True, _LinalgBackend.Default):
        with pytest.raises(RuntimeError, match="Unknown input value type."):
            cuda.preferred_blas_library(bad)
    with pytest.raises(RuntimeError, match="Choose from: default, cusolver, magma."):
        cuda.preferred_linalg_library("lapack")
    with pytest.raises(RuntimeError, match="Unknown input value type."):
        cuda.preferred_linalg_library(1)
    with pytest.raises(RuntimeError, match="Choose from: default, aotriton, ck."):
        cuda.preferred_rocm_fa_library("triton")
    with pytest.raises(ValueError, match="Choose from: default, aotriton, ck."):
        cuda.preferred_rocm_fa_library(1)  # ValueError here, as in PyTorch


def test_preferred_linalg_library():
    assert cuda.preferred_linalg_library() is _LinalgBackend.Default
    with pytest.raises(RuntimeError, match="Cannot set preferred backend to cuSOLVER"):
        cuda.preferred_linalg_library("cusolver")
    with pytest.raises(RuntimeError, match="Cannot set preferred backend to MAGMA"):
        cuda.preferred_linalg_library(_LinalgBackend.Magma)
    assert cuda.preferred_linalg_library("default") is _LinalgBackend.Default


def test_preferred_rocm_fa_library_is_a_setting():
    assert cuda.preferred_rocm_fa_library() is _ROCmFABackend.Default
    assert cuda.preferred_rocm_fa_library("ck") is _ROCmFABackend.Ck
    assert cuda.preferred_rocm_fa_library(_ROCmFABackend.AOTriton) is _ROCmFABackend.AOTriton
    assert cuda.preferred_rocm_fa_library("default") is _ROCmFABackend.Default


def test_a_plugin_built_with_the_libraries_may_prefer_them(plugin):
    plugin._has_cublaslt = plugin._has_cusolver = lambda: True
    with pytest.warns(UserWarning, match="preferred_blas_library is an experimental"):
        assert cuda.preferred_blas_library("cublaslt") is _BlasBackend.Cublaslt
    with pytest.warns(UserWarning, match="preferred_linalg_library is an experimental"):
        assert cuda.preferred_linalg_library("cusolver") is _LinalgBackend.Cusolver
    with pytest.raises(RuntimeError, match="MAGMA"):
        cuda.preferred_linalg_library("magma")


def _run(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )


def test_pytorchs_environment_variables_set_the_first_values():
    code = (
        "import flambeau.backends.cuda as c\n"
        "print(c.preferred_blas_library().name, c.preferred_linalg_library().name,"
        " c.preferred_rocm_fa_library().name)\n"
    )
    out = _run(
        code,
        TORCH_BLAS_PREFER_CUBLASLT="1",
        TORCH_LINALG_PREFER_CUSOLVER="1",
        TORCH_ROCM_FA_PREFER_CK="1",
    )
    assert out.stdout.split() == ["Cublaslt", "Cusolver", "Ck"]
    out = _run(code, TORCH_BLAS_PREFER_CUBLASLT="yes")
    assert out.stdout.split() == ["Cublas", "Default", "Default"]
    assert "Ignoring invalid value for boolean flag TORCH_BLAS_PREFER_CUBLASLT: yes" in out.stderr


# ---- workspace sizes -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cublas_workspace_size", "cublaslt_workspace_size"])
def test_workspaces_need_cuda(name):
    with pytest.raises(AttributeError, match=f"{name} needs cuBLAS"):
        getattr(cuda, name)()
    with pytest.raises(AttributeError, match=f"{name} needs cuBLAS"):
        getattr(cuda, name)(1024)


def test_blas_workspace_size_without_cuda():
    with pytest.raises(AttributeError, match="cublas_workspace_size needs cuBLAS"):
        cuda.blas_workspace_size()
    with pytest.raises(AttributeError, match="cublaslt_workspace_size needs cuBLAS"):
        cuda.blas_workspace_size(backend="hipblaslt")
    with pytest.raises(RuntimeError, match="CK backend does not use a workspace."):
        cuda.blas_workspace_size(backend="ck")
    with pytest.raises(RuntimeError, match="Unknown backend string. Choose from: default,"):
        cuda.blas_workspace_size(backend="mkl")
    with pytest.raises(RuntimeError, match="Unknown backend type."):
        cuda.blas_workspace_size(backend=2)
    with pytest.warns(UserWarning):
        cuda.preferred_blas_library("ck")
    with pytest.raises(RuntimeError, match="CK backend does not use a workspace."):
        cuda.blas_workspace_size(4096)  # the preferred library's


def test_workspaces_from_the_plugin(plugin):
    sizes = {"cublas": 4096, "cublaslt": 1024}
    plugin._cuda_getCublasWorkspaceSize = lambda: sizes["cublas"]
    plugin._cuda_setCublasWorkspaceSize = lambda n: sizes.__setitem__("cublas", n)
    plugin._cuda_getCublasLtWorkspaceSize = lambda: sizes["cublaslt"]
    plugin._cuda_setCublasLtWorkspaceSize = lambda n: sizes.__setitem__("cublaslt", n)
    assert cuda.cublas_workspace_size() == 4096
    assert cuda.cublas_workspace_size(8192) == 8192 and sizes["cublas"] == 8192
    assert cuda.blas_workspace_size(backend="cublaslt") == 1024
    assert cuda.blas_workspace_size(2048, backend=_BlasBackend.Default) == 2048
    assert sizes == {"cublas": 2048, "cublaslt": 1024}


# ---- cuFFT plan caches -----------------------------------------------------------------


def test_plan_cache_without_cuda():
    manager = cuda.cufft_plan_cache
    assert isinstance(manager, cuda.cuFFTPlanCacheManager) and manager.caches == []
    for device in (0, "cuda:0", F.device("cuda", 1), -1):
        with pytest.raises(RuntimeError, match="expected 0 <= device index < 0, but got device"):
            manager[device]
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        manager["cpu"]
    with pytest.raises(ValueError, match="with a specified index or an integer, but got:None"):
        manager[None]
    with pytest.raises(ValueError, match="with a specified index or an integer, but got:cuda"):
        manager["cuda"]
    for name in ("size", "max_size", "clear"):
        with pytest.raises(AssertionError, match="no CUDA backend is installed"):
            getattr(manager, name)
    with pytest.raises(AssertionError):
        manager.max_size = 10
    assert not hasattr(manager, "__wrapped__")  # protocols probed: plain AttributeError


def test_a_plan_cache_without_cuda():
    cache = cuda.cuFFTPlanCache(3)
    assert cache.device_index == 3
    for name in ("size", "max_size"):
        with pytest.raises(RuntimeError, match="Cannot access cuFFT plan cache"):
            getattr(cache, name)
    with pytest.raises(RuntimeError, match="Cannot access cuFFT plan cache"):
        cache.clear()
    with pytest.raises(RuntimeError, match="Cannot access cuFFT plan cache"):
        cache.max_size = 10
    with pytest.raises(RuntimeError, match=r"^\.size is a read-only property"):
        cache.size = 10


def test_plan_caches_from_the_plugin(plugin, monkeypatch):
    plans = {0: [], 1: ["plan"]}
    capacity = {0: 4096, 1: 4096}
    plugin._cufft_get_plan_cache_size = lambda i: len(plans[i])
    plugin._cufft_get_plan_cache_max_size = lambda i: capacity[i]
    plugin._cufft_set_plan_cache_max_size = capacity.__setitem__
    plugin._cufft_clear_plan_cache = lambda i: plans[i].clear()
    monkeypatch.setattr(F.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(F.cuda, "current_device", lambda: 1, raising=False)
    manager = cuda.cuFFTPlanCacheManager()
    assert manager[0].size == 0 and manager["cuda:1"].size == 1
    assert manager[1] is manager[F.device("cuda:1")] and len(manager.caches) == 2
    assert manager.size == 1 and manager.max_size == 4096  # the current device's
    manager.max_size = 10
    assert capacity == {0: 4096, 1: 10}
    manager.clear()
    assert manager.size == 0
    with pytest.raises(RuntimeError, match="expected 0 <= device index < 2, but got device"):
        manager[2]


# ---- mkl, mps, nnpack ------------------------------------------------------------------


def test_mkl_verbose_without_mkl():
    assert (mkl.VERBOSE_OFF, mkl.VERBOSE_ON) == (0, 1)
    with mkl.verbose(mkl.VERBOSE_OFF) as entered:
        assert entered is None
    for level in (mkl.VERBOSE_ON, 5, True):
        with pytest.raises(AssertionError, match="Failed to set MKL into verbose mode"):
            with mkl.verbose(level):
                pass
    with pytest.raises(TypeError):
        mkl.verbose("x").__enter__()
    with pytest.raises(TypeError):
        mkl.verbose()
    assert mkl.verbose(mkl.VERBOSE_ON).__exit__(None, None, None) is False


def test_mps_names_need_an_mps_backend():
    for name in ("get_name", "get_core_count"):
        with pytest.raises(AttributeError, match=f"mps.{name} needs an MPS backend"):
            getattr(mps, name)()


def test_mps_names_from_a_plugin(monkeypatch):
    plugin = types.SimpleNamespace(get_name=lambda: "Apple M9", get_core_count=lambda: 64)
    monkeypatch.setattr(mps, "is_built", lambda: True)
    monkeypatch.setattr(backends, "module", lambda name: plugin if name == "mps" else None)
    assert (mps.get_name(), mps.get_core_count()) == ("Apple M9", 64)


def test_nnpack():
    assert backends.nnpack is nnpack and "nnpack" in backends.__doc__
    assert nnpack.is_available() is False
    assert not hasattr(nnpack, "enabled")  # PyTorch's keeps no module attribute
    assert nnpack.set_flags(False) == (True,)  # PyTorch's default: enabled
    assert nnpack.set_flags(True) == (False,)
    for bad in (1, None, "no"):
        with pytest.raises(RuntimeError, match="set_enabled_NNPACK expects a bool, but got"):
            nnpack.set_flags(bad)
    with pytest.raises(TypeError):
        nnpack.set_flags()
    with nnpack.flags() as entered:
        assert entered is None and nnpack._state["enabled"] is False
    assert nnpack._state["enabled"] is True
    with nnpack.flags(enabled=True):
        assert nnpack._state["enabled"] is True
    with pytest.raises(RuntimeError, match="expects a bool"):
        with nnpack.flags(1):
            pass
    assert nnpack._state["enabled"] is True


def test_nnpack_loads_by_import():
    _run("import flambeau.backends.nnpack as n\nassert n.is_available() is False\n")


# ---- PyTorch as an oracle, when installed ---------------------------------------------


def test_pytorch_without_cuda_answers_the_same():
    torch = pytest.importorskip("torch")
    import torch.backends.cuda as tcuda

    if torch.cuda.is_available():
        pytest.skip("PyTorch here has CUDA")
    blas = tcuda.preferred_blas_library()
    try:
        assert blas.name == cuda.preferred_blas_library().name
        assert tcuda.preferred_blas_library("default").name == "Cublas"
        with pytest.raises(RuntimeError, match="Cannot set preferred backend to cuBLASLt"):
            tcuda.preferred_blas_library("cublaslt")
        with pytest.raises(RuntimeError, match="Unknown input value type."):
            tcuda.preferred_blas_library(1)
    finally:
        tcuda.preferred_blas_library(blas)
    assert tcuda.preferred_linalg_library().name == cuda.preferred_linalg_library().name
    with pytest.raises(RuntimeError, match="Cannot set preferred backend to MAGMA"):
        tcuda.preferred_linalg_library("magma")
    with pytest.raises(ValueError, match="Choose from: default, aotriton, ck."):
        tcuda.preferred_rocm_fa_library(1)
    with pytest.raises(AttributeError):
        tcuda.cublas_workspace_size()
    with pytest.raises(RuntimeError, match="CK backend does not use a workspace."):
        tcuda.blas_workspace_size(backend="ck")
    with pytest.raises(RuntimeError, match="expected 0 <= device index < 0"):
        tcuda.cufft_plan_cache[0]
    with pytest.raises(AssertionError):
        tcuda.cufft_plan_cache.size  # noqa: B018
    with pytest.raises(RuntimeError, match=r"^\.size is a read-only property"):
        tcuda.cuFFTPlanCache(0).size = 1
    with pytest.raises(RuntimeError):
        tcuda.cuFFTPlanCache(0).max_size  # noqa: B018
    import torch.backends.mps as tmps

    if not tmps.is_built():
        for name in ("get_name", "get_core_count"):
            with pytest.raises(AttributeError):
                getattr(tmps, name)()
    import torch.backends.nnpack as tnnpack

    with pytest.raises(RuntimeError, match="set_enabled_NNPACK expects a bool, but got int"):
        tnnpack.set_flags(1)
    assert tnnpack.set_flags(True) == nnpack.set_flags(True) == (True,)
