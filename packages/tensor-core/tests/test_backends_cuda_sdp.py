"""flambeau.backends.cuda's attention names: SDPAParams, the can_use_* questions, the
enable_*_sdp switches, the fp16/bf16 reduction flag and the deprecated sdp_kernel, with
PyTorch's behaviour on a build without CUDA (and a CUDA plugin's answers when it has
them). PyTorch, when installed, is asked the same questions."""

import types
import warnings

import pytest

import flambeau as F
from flambeau.backends import _cuda_plugin, _sdp, cuda

Q = F.ones(2, 3, 4, 8)


@pytest.fixture(autouse=True)
def restore_flags():
    enabled, priority = dict(_sdp.ENABLED), list(_sdp.PRIORITY)
    reduction = dict(_sdp.MATH_REDUCTION)
    yield
    _sdp.ENABLED.update(enabled)
    _sdp.PRIORITY[:] = priority
    _sdp.MATH_REDUCTION.update(reduction)


def _flags():
    return (
        cuda.flash_sdp_enabled(),
        cuda.mem_efficient_sdp_enabled(),
        cuda.math_sdp_enabled(),
        cuda.cudnn_sdp_enabled(),
        _sdp.ENABLED["overrideable"],
    )


# ---- SDPAParams ------------------------------------------------------------------------


def test_sdpa_params_holds_the_call_read_only():
    mask = F.zeros(4, 4)
    p = cuda.SDPAParams(Q, Q * 2, Q * 3, mask, 1, 1, 0)
    assert p.query is Q and p.attn_mask is mask
    assert (p.value / p.key == 1.5).all()
    assert p.dropout == 1.0 and isinstance(p.dropout, float)
    assert p.is_causal is True and p.enable_gqa is False
    with pytest.raises(AttributeError, match="has no setter"):
        p.dropout = 0.5
    with pytest.raises(AttributeError, match="'SDPAParams' object has no attribute 'foo'"):
        p.foo = 1


def test_sdpa_params_takes_seven_positional_arguments():
    with pytest.raises(TypeError):
        cuda.SDPAParams(Q, Q, Q, None, 0.0, False)  # enable_gqa is required
    with pytest.raises(TypeError):
        cuda.SDPAParams(Q, Q, Q, None, 0.0, False, False, 1)
    with pytest.raises(TypeError):
        cuda.SDPAParams(
            query=Q, key=Q, value=Q, attn_mask=None, dropout=0.0, is_causal=False,
            enable_gqa=False,
        )  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [
        (1, Q, Q, None, 0.0, False, False),  # query not a tensor
        (Q, Q, Q, "mask", 0.0, False, False),  # attn_mask neither a tensor nor None
        (Q, Q, Q, None, "0.5", False, False),  # dropout a string
        (Q, Q, Q, None, 0.0, "yes", False),  # is_causal a string
        (Q, Q, Q, None, 0.0, False, [True]),  # enable_gqa a list
    ],
)
def test_sdpa_params_checks_the_types(args):
    with pytest.raises(TypeError):
        cuda.SDPAParams(*args)


def test_sdpa_params_bools_as_pytorchs_binding_takes_them():
    assert cuda.SDPAParams(Q, Q, Q, None, 0.0, None, 2.5).enable_gqa is True
    assert cuda.SDPAParams(Q, Q, Q, None, 0.0, None, 0).is_causal is False
    assert cuda.SDPAParams(Q, Q, Q, None, True, False, False).dropout == 1.0


# ---- can_use_*: False without CUDA, and no reasons given ---------------------------------

CAN_USE = ["can_use_flash_attention", "can_use_efficient_attention", "can_use_cudnn_attention"]


@pytest.mark.parametrize("name", CAN_USE)
def test_no_fused_kernel_without_cuda_and_no_debug_output(name, recwarn, capfd):
    params = cuda.SDPAParams(Q, Q, Q, None, 0.0, False, False)
    can_use = getattr(cuda, name)
    assert can_use(params) is False
    assert can_use(params, True) is False
    assert can_use(params, debug=1) is False
    assert len(recwarn) == 0  # PyTorch without CUDA warns nothing either
    assert capfd.readouterr() == ("", "")


@pytest.mark.parametrize("name", CAN_USE)
def test_can_use_checks_its_arguments(name):
    can_use = getattr(cuda, name)
    with pytest.raises(TypeError, match="SDPAParams"):
        can_use(Q)
    with pytest.raises(TypeError):
        can_use(cuda.SDPAParams(Q, Q, Q, None, 0.0, False, False), "x")
    with pytest.raises(TypeError):
        can_use()


def test_availability_without_cuda():
    assert cuda.is_flash_attention_available() is False
    assert cuda.is_ck_sdpa_available() is False


def test_a_cuda_plugin_answers_when_it_can(monkeypatch):
    asked = []

    def flash(params, debug):
        asked.append((params.query.shape[-1], debug))
        return params.query.shape[-1] % 8 == 0

    plugin = types.SimpleNamespace(
        _can_use_flash_attention=flash, _is_flash_attention_available=lambda: True
    )
    monkeypatch.setattr(_cuda_plugin, "plugin", lambda: plugin)
    params = cuda.SDPAParams(Q, Q, Q, None, 0.0, False, False)
    assert cuda.can_use_flash_attention(params, debug=True) is True
    assert asked == [(8, True)]
    assert cuda.is_flash_attention_available() is True
    # what the plugin does not answer keeps the answer without CUDA
    assert cuda.can_use_efficient_attention(params) is False
    assert cuda.is_ck_sdpa_available() is False


# ---- the switches ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setter", "name"),
    [
        ("enable_flash_sdp", "set_sdp_use_flash"),
        ("enable_mem_efficient_sdp", "set_sdp_use_mem_efficient"),
        ("enable_math_sdp", "set_sdp_use_math"),
        ("enable_cudnn_sdp", "set_sdp_use_cudnn"),
        ("allow_fp16_bf16_reduction_math_sdp", "set_math_sdp_allow_fp16_bf16_reduction"),
    ],
)
@pytest.mark.parametrize("value", [1, 0, None, "yes"])
def test_switches_take_only_bools(setter, name, value):
    before = (_flags(), cuda.fp16_bf16_reduction_math_sdp_allowed())
    with pytest.raises(
        RuntimeError, match=f"{name} expects a bool, but got {type(value).__name__}"
    ):
        getattr(cuda, setter)(value)
    assert (_flags(), cuda.fp16_bf16_reduction_math_sdp_allowed()) == before


def test_fp16_bf16_reduction_flag():
    assert cuda.fp16_bf16_reduction_math_sdp_allowed() is False  # PyTorch's default
    cuda.allow_fp16_bf16_reduction_math_sdp(True)
    assert cuda.fp16_bf16_reduction_math_sdp_allowed() is True
    cuda.allow_fp16_bf16_reduction_math_sdp(False)
    assert cuda.fp16_bf16_reduction_math_sdp_allowed() is False


def test_each_switch_sets_its_own_flag():
    cuda.enable_mem_efficient_sdp(False)
    cuda.enable_cudnn_sdp(False)
    assert _flags() == (True, False, True, False, True)


# ---- sdp_kernel (deprecated) ----------------------------------------------------------


def test_sdp_kernel_warns_when_called_and_enables_only_what_it_is_asked():
    with pytest.warns(FutureWarning, match=r"sdp_kernel\(\)` is deprecated") as record:
        manager = cuda.sdp_kernel(enable_flash=False, enable_cudnn=0)
    assert record[0].filename == __file__  # the caller's line
    assert _flags() == (True, True, True, True, True)  # nothing before the block
    with manager as context:
        assert context == {}
        # asked: efficient and math; the overrideable backend is off too, as in PyTorch
        assert _flags() == (False, True, True, False, False)
    assert _flags() == (True, True, True, True, True)


def test_sdp_kernel_restores_after_an_error_and_leaves_priority_alone():
    priority = list(_sdp.PRIORITY)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(KeyError):
            with cuda.sdp_kernel(False, False, False, False):
                assert _flags() == (False,) * 5
                cuda.enable_math_sdp(True)
                raise KeyError
    assert _flags() == (True,) * 5 and _sdp.PRIORITY == priority


def test_attention_runs_as_the_flags_say_inside_sdp_kernel():
    nn_functional = pytest.importorskip("flambeau.nn.functional")
    q = F.ones(1, 1, 2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with cuda.sdp_kernel(enable_flash=False, enable_math=False):
            with pytest.raises(RuntimeError, match="No viable backend"):
                nn_functional.scaled_dot_product_attention(q, q, q)
    assert nn_functional.scaled_dot_product_attention(q, q, q).shape == (1, 1, 2, 4)
    attention = pytest.importorskip("flambeau.nn.attention")
    assert attention.can_use_flash_attention is cuda.can_use_flash_attention
    assert attention.can_use_efficient_attention is cuda.can_use_efficient_attention


# ---- PyTorch as an oracle, when installed ---------------------------------------------


def test_pytorch_without_cuda_answers_the_same():
    torch = pytest.importorskip("torch")
    import torch.backends.cuda as tcuda

    if torch.cuda.is_available():
        pytest.skip("PyTorch here has CUDA")
    tq = torch.ones(2, 3, 4, 8)
    tp = tcuda.SDPAParams(tq, tq, tq, None, 1, 1, 0)
    fp = cuda.SDPAParams(Q, Q, Q, None, 1, 1, 0)
    assert (tp.dropout, tp.is_causal, tp.enable_gqa) == (fp.dropout, fp.is_causal, fp.enable_gqa)
    for name in CAN_USE:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert getattr(tcuda, name)(tp, True) is getattr(cuda, name)(fp, True)
        assert not seen
    assert tcuda.is_flash_attention_available() is cuda.is_flash_attention_available()
    assert tcuda.is_ck_sdpa_available() is cuda.is_ck_sdpa_available()
    assert (
        tcuda.fp16_bf16_reduction_math_sdp_allowed() is cuda.fp16_bf16_reduction_math_sdp_allowed()
    )
    with pytest.raises(RuntimeError, match="expects a bool, but got int"):
        tcuda.enable_flash_sdp(1)
    with pytest.raises(TypeError):
        tcuda.SDPAParams(tq, tq, tq, None, 0.0, False)
    with pytest.raises(AttributeError):
        tp.dropout = 0.5
