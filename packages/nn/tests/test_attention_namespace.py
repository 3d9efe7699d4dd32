"""flambeau.nn.attention (torch.nn.attention): SDPBackend, sdpa_kernel over the flags of
flambeau.backends.cuda, PyTorch's CPU rule for which inputs scaled_dot_product_attention
then accepts, and the flash attention implementation registry."""

import warnings

import pytest

import flambeau
import flambeau.nn.functional as F
from flambeau.backends import _sdp
from flambeau.backends import cuda as cuda_flags
from flambeau.nn import attention
from flambeau.nn.attention import SDPBackend, sdpa_kernel

B = SDPBackend


def _flags():
    return (
        cuda_flags.cudnn_sdp_enabled(),
        cuda_flags.flash_sdp_enabled(),
        cuda_flags.mem_efficient_sdp_enabled(),
        cuda_flags.math_sdp_enabled(),
        _sdp.ENABLED["overrideable"],
    )


ALL_ON = (True, True, True, True, True)


@pytest.fixture(autouse=True)
def _restore_sdp_settings():
    enabled, priority = dict(_sdp.ENABLED), list(_sdp.PRIORITY)
    yield
    _sdp.ENABLED.update(enabled)
    _sdp.PRIORITY[:] = priority


def test_namespace():
    assert attention.__all__ == [
        "SDPBackend",
        "sdpa_kernel",
        "WARN_FOR_UNFUSED_KERNELS",
        "register_flash_attention_impl",
        "activate_flash_attention_impl",
        "list_flash_attention_impls",
        "current_flash_attention_impl",
        "restore_flash_attention_impl",
    ]
    assert attention.WARN_FOR_UNFUSED_KERNELS is False
    assert flambeau.nn.attention is attention
    assert cuda_flags.SDPBackend is SDPBackend


def test_sdp_backend_members():
    assert {b.name: int(b) for b in SDPBackend} == {
        "ERROR": -1,
        "MATH": 0,
        "FLASH_ATTENTION": 1,
        "EFFICIENT_ATTENTION": 2,
        "CUDNN_ATTENTION": 3,
        "OVERRIDEABLE": 4,
    }
    assert B.MATH.value == 0 and B.MATH.name == "MATH"
    assert repr(B.MATH) == "<SDPBackend.MATH: 0>" and str(B.MATH) == "SDPBackend.MATH"
    assert B.MATH != 0 and not isinstance(B.MATH, int)  # an enum, not an int (PyTorch's)
    assert B(1) is B.FLASH_ATTENTION and [10, 11][B.FLASH_ATTENTION] == 11


def test_sdpa_kernel_enables_only_the_given_backends_then_restores():
    assert _flags() == ALL_ON
    with sdpa_kernel(B.FLASH_ATTENTION) as value:
        assert value == {}
        assert _flags() == (False, True, False, False, False)
        with sdpa_kernel([B.MATH, B.CUDNN_ATTENTION, B.MATH]):
            assert _flags() == (True, False, False, True, False)
        assert _flags() == (False, True, False, False, False)
    assert _flags() == ALL_ON
    with pytest.raises(KeyError), sdpa_kernel([]):
        assert _flags() == (False,) * 5
        raise KeyError
    assert _flags() == ALL_ON


def test_sdpa_kernel_restores_flags_set_before_it():
    cuda_flags.enable_flash_sdp(False)
    with sdpa_kernel(B.FLASH_ATTENTION):
        assert cuda_flags.flash_sdp_enabled()
    assert _flags() == (True, False, True, True, True)


def test_sdpa_kernel_as_a_decorator():
    @sdpa_kernel(B.MATH)
    def flags_inside():
        return _flags()

    assert flags_inside() == (False, False, False, True, False)
    assert _flags() == ALL_ON


@pytest.mark.parametrize("backends", ["math", (B.MATH,), 0])
def test_sdpa_kernel_takes_a_backend_or_a_list(backends):
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend or a "
                       "list of SDPBackend instances, got " + type(backends).__name__):  # fmt: skip
        with sdpa_kernel(backends):
            pass


def test_set_priority_puts_the_list_first_and_restores_the_order():
    assert _sdp.PRIORITY == [1, 2, 0, 3, 4]  # PyTorch's default: flash, efficient, math...
    with sdpa_kernel([B.CUDNN_ATTENTION, B.MATH], set_priority=True):
        assert _sdp.PRIORITY == [3, 0, 1, 2, 4]
        with sdpa_kernel(B.FLASH_ATTENTION):  # without set_priority: the order stays
            assert _sdp.PRIORITY == [3, 0, 1, 2, 4]
    assert _sdp.PRIORITY == [1, 2, 0, 3, 4] and _flags() == ALL_ON
    # Restoring puts the previously enabled backends first, in their previous order, then
    # the rest as they stand (PyTorch's rule): a disabled backend goes last.
    cuda_flags.enable_flash_sdp(False)
    with sdpa_kernel([B.OVERRIDEABLE, B.MATH], set_priority=True):
        assert _sdp.PRIORITY == [4, 0, 1, 2, 3]
    assert _sdp.PRIORITY == [2, 0, 3, 4, 1]


# ---- which calls the CPU accepts -----------------------------------------------------


def _sdpa(*args, backends=B.FLASH_ATTENTION, **kwargs):
    """(result or exception, warning messages) of F.scaled_dot_product_attention."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with sdpa_kernel(backends):
            try:
                result = F.scaled_dot_product_attention(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - the test looks at it
                result = e
    return result, [str(w.message) for w in caught]


NO_KERNEL = "No available kernel.  Aborting execution."
HEADLINE = "Flash attention kernel not used because:"


def _refused(args, kwargs, reason):
    result, messages = _sdpa(*args, **kwargs)
    assert isinstance(result, RuntimeError) and str(result) == NO_KERNEL
    assert messages == [HEADLINE] + ([reason] if reason else [])


def r(*shape, **kwargs):
    return flambeau.randn(*shape, **kwargs)


Q = r(2, 3, 4, 8)


def test_flash_alone_runs_4d_inputs_with_the_same_result():
    expected = F.scaled_dot_product_attention(Q, Q, Q, is_causal=True)
    result, messages = _sdpa(Q, Q, Q, is_causal=True)
    assert messages == [] and flambeau.equal(result, expected)
    for dtype in (flambeau.float64, flambeau.float16, flambeau.bfloat16):
        q = Q.to(dtype)
        result, messages = _sdpa(q, q, q)
        assert messages == [] and result.dtype == dtype
    accepted = [
        dict(attn_mask=flambeau.ones(4, 4, dtype=flambeau.bool)),
        dict(attn_mask=flambeau.zeros(1, 1)),
        dict(attn_mask=flambeau.zeros(2, 1, 4, 4)),
        dict(attn_mask=flambeau.zeros(4, 4).t()),  # the CPU takes any mask stride
        dict(scale=0.3),
        dict(dropout_p=0.0),
    ]
    for kwargs in accepted:
        result, messages = _sdpa(Q, Q, Q, **kwargs)
        assert messages == [] and tuple(result.shape) == (2, 3, 4, 8), kwargs
    result, messages = _sdpa(r(2, 6, 4, 8), r(2, 3, 4, 8), r(2, 3, 4, 8), enable_gqa=True)
    assert messages == [] and tuple(result.shape) == (2, 6, 4, 8)


def test_flash_alone_refuses_what_it_cannot_take_saying_why():
    _refused(
        (r(3, 4, 8),) * 3,
        {},
        "All fused kernels requires query, key and value to be 4 dimensional, but got "
        "Query dim: 3, Key dim: 3, Value dim: 3 instead.",
    )
    _refused((Q, Q, Q), {"dropout_p": 0.5}, "Both fused kernels do not support non-zero dropout.")
    _refused(
        (r(3, 4, 8),) * 3,  # dropout is checked first
        {"dropout_p": 0.1},
        "Both fused kernels do not support non-zero dropout.",
    )
    _refused(
        (Q, r(1, 3, 4, 8), r(1, 3, 4, 8)),
        {},
        "For dense inputs, both fused kernels require query, key and value to have the same "
        "batch_size. Query.sizes(): [2, 3, 4, 8], Key.sizes(): [1, 3, 4, 8], Value.sizes(): "
        "[1, 3, 4, 8] instead. To broadcast dense inputs, try using unsqueeze and expand_to "
        "before passing them into the kernel.",
    )
    _refused(
        (r(2, 6, 4, 8), r(2, 3, 4, 8), r(2, 3, 4, 8)),
        {},
        "For dense input, both fused kernels require query, key and value to have the same "
        "num_heads. Query.sizes(): [2, 6, 4, 8], Key sizes(): [2, 3, 4, 8], Value sizes(): "
        "[2, 3, 4, 8] instead. To broadcast dense inputs, try using unsqueeze and expand_to "
        "before passing them into the kernel.",
    )
    _refused(
        (r(2, 6, 4, 8), r(2, 3, 4, 8), r(2, 2, 4, 8)),
        {"enable_gqa": True},
        "Both fused kernels require key and value to have the same num_heads and batch_size "
        "but got: Key sizes: [2, 3, 4, 8], Value sizes: [2, 2, 4, 8], Query sizes: "
        "[2, 6, 4, 8] instead.",
    )
    _refused(
        (r(2, 5, 4, 8), r(2, 3, 4, 8), r(2, 3, 4, 8)),
        {"enable_gqa": True},
        "The number of heads in key/value must divide number of heads in query.Got input Key "
        "sizes(): 3, Value sizes(): 3, Query sizes(): 5 instead.",
    )
    _refused(
        (Q, Q, r(2, 3, 4, 5)),
        {},
        "Flash attention requires q,k,v to have the same last dimension. Got Query.size(-1): "
        "8, Key.size(-1): 8, Value.size(-1): 5 instead.",
    )
    _refused(
        (r(2, 3, 8, 4).transpose(-1, -2), Q, Q),
        {},
        "All fused kernels require the last dimension of the input to have stride 1. Got "
        "Query.stride(-1): 4, Key.stride(-1): 1, Value.stride(-1): 1",
    )
    _refused(
        (r(2, 3, 8, 4).transpose(-1, -2), Q, Q),
        {"attn_mask": flambeau.zeros(4, 4).t()},
        "All fused kernels require the last dimension of the input to have stride 1. Got "
        "Query.stride(-1): 4, Key.stride(-1): 1, Value.stride(-1): 1, Attn_mask.stride(-1): 4 "
        "(GPU backends require attn_mask's last dimension to have stride 1 while the CPU does "
        "not).",
    )
    i = flambeau.zeros(2, 3, 4, 8, dtype=flambeau.int32)
    _refused(
        (i, i, i),
        {},
        "Expected query, key and value to all be of dtype: {Float, Double, BFloat16, Half}. "
        "Got Query dtype: int32, Key dtype: int32, and Value dtype: int32 instead.",
    )


def test_flash_alone_refuses_masks_of_other_shapes():
    shape_hint = (
        "Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x {KV_seq_len, 1}); "
        "4d - ({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x {KV_seq_len, 1})"
    )
    for mask in (
        flambeau.zeros(3, 4, 4),
        flambeau.zeros(3, 1, 4, 4),
        flambeau.zeros(1, 1, 1, 4, 4),
    ):
        _refused((Q, Q, Q), {"attn_mask": mask}, shape_hint)
    # A mask whose last two sizes do not fit, or that requires grad: refused without a reason.
    _refused((Q, Q, Q), {"attn_mask": flambeau.zeros(3, 4)}, None)
    _refused((Q, Q, Q), {"attn_mask": flambeau.zeros(4, 4, requires_grad=True)}, None)
    result, _ = _sdpa(Q, Q, Q, attn_mask=flambeau.zeros(4))
    assert isinstance(result, IndexError) and "range of [-1, 0], but got -2" in str(result)


def test_no_enabled_kernel_at_all():
    message = (
        "No viable backend for scaled_dot_product_attention was found. This is likely due to "
        "turning off both the math kernel and the fused kernels."
    )
    for backends in ([], B.EFFICIENT_ATTENTION, B.CUDNN_ATTENTION, B.OVERRIDEABLE, B.ERROR):
        result, messages = _sdpa(Q, Q, Q, backends=backends)
        assert isinstance(result, RuntimeError) and str(result) == message and messages == []
    i = flambeau.zeros(2, 3, 4, 8, dtype=flambeau.int32)
    result, _ = _sdpa(i, i, i, backends=[])
    assert str(result) == message


def test_math_takes_any_input():
    for args, kwargs in [
        ((r(3, 4, 8),) * 3, {}),
        ((Q, Q, Q), {"dropout_p": 0.5}),
        ((Q, r(1, 3, 4, 8), r(1, 3, 4, 8)), {}),
        ((Q, Q, Q), {"attn_mask": flambeau.zeros(3, 4, 4)}),
    ]:
        for backends in (B.MATH, [B.FLASH_ATTENTION, B.MATH]):
            result, messages = _sdpa(*args, backends=backends, **kwargs)
            assert isinstance(result, flambeau.Tensor) and messages == []


def test_empty_inputs_need_no_kernel_and_validation_comes_first():
    z = r(2, 3, 0, 8)
    for backends in ([], B.FLASH_ATTENTION):
        result, _ = _sdpa(z, Q, Q, backends=backends)
        assert tuple(result.shape) == (2, 3, 0, 8)
        result, _ = _sdpa(Q, z, z, backends=backends)
        assert result.tolist() == flambeau.zeros(2, 3, 4, 8).tolist()
        result, _ = _sdpa(Q.double(), Q, Q, backends=backends)
        assert isinstance(result, RuntimeError) and "to have the same dtype" in str(result)
        mask = flambeau.zeros(4, 4, dtype=flambeau.float64)
        result, _ = _sdpa(Q, Q, Q, attn_mask=mask, backends=backends)
        assert "Expected attn_mask dtype to be bool or float" in str(result)
        one_d = r(8)
        result, _ = _sdpa(one_d, one_d, one_d, backends=backends)
        assert "at least 2 dimensional" in str(result)


def test_warnings_point_at_the_caller():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with sdpa_kernel(B.FLASH_ATTENTION), pytest.raises(RuntimeError):
            F.scaled_dot_product_attention(Q, Q, Q, dropout_p=0.5)
    assert [w.filename for w in caught] == [__file__, __file__]


def test_torch_function_subclasses_see_the_functional():
    seen = []

    class Tagged(flambeau.Tensor):
        __slots__ = ()

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append((func, len(args), sorted(kwargs or {})))
            return "handled"

    mask = flambeau.zeros(4, 4).as_subclass(Tagged)
    assert F.scaled_dot_product_attention(Q, Q, Q, mask) == "handled"
    func, n_args, keywords = seen[0]
    assert func is F.scaled_dot_product_attention and n_args == 3
    assert keywords == ["attn_mask", "dropout_p", "enable_gqa", "is_causal", "scale"]


# ---- the flash attention implementation registry -------------------------------------


@pytest.fixture
def registry(monkeypatch):
    from flambeau.nn.attention import _registry

    monkeypatch.setattr(_registry, "_IMPLS", {})
    monkeypatch.setattr(_registry, "_ACTIVE", None)
    return _registry


def test_no_implementation_is_registered_by_flambeau(registry):
    import subprocess
    import sys

    code = "import flambeau.nn.attention as a; print(a.list_flash_attention_impls())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert attention.current_flash_attention_impl() is None


def test_register_activate_restore(registry, caplog):
    events = []

    class Handle:
        def __init__(self, name):
            self.name = name

        def remove(self):
            events.append(f"remove {self.name}")

    def installer(name):
        def install():
            events.append(f"install {name}")
            return Handle(name)

        return install

    attention.register_flash_attention_impl("B", register_fn=installer("B"))
    attention.register_flash_attention_impl("A", register_fn=installer("A"))
    attention.register_flash_attention_impl("Quiet", register_fn=lambda: None)
    assert attention.list_flash_attention_impls() == ["A", "B", "Quiet"]
    attention.activate_flash_attention_impl("A")
    assert attention.current_flash_attention_impl() == "A"
    attention.activate_flash_attention_impl("B")  # the previous one is removed first
    assert events == ["install A", "remove A", "install B"]
    attention.activate_flash_attention_impl("Quiet")  # no handle: nothing is current
    assert attention.current_flash_attention_impl() is None
    with pytest.raises(ValueError, match=r"Unknown flash attention impl 'C'\. Available "
                       r"implementations: \['A', 'B', 'Quiet'\]"):  # fmt: skip
        attention.activate_flash_attention_impl("C")
    with caplog.at_level("WARNING"):
        attention.restore_flash_attention_impl()
    assert "Trying to restore default FA2 impl when no custom impl was activated" in caplog.text


def test_warn_for_unfused_kernels(monkeypatch):
    from flambeau.nn.attention.bias import causal_lower_right

    q, kv = r(1, 2, 3, 8), r(1, 2, 4, 8)
    _, messages = _sdpa(q, kv, kv, causal_lower_right(3, 4), backends=list(SDPBackend))
    assert messages == []
    monkeypatch.setattr(attention, "WARN_FOR_UNFUSED_KERNELS", True)
    _, messages = _sdpa(q, kv, kv, causal_lower_right(3, 4), backends=list(SDPBackend))
    assert messages == [
        "Efficient attention can't be used because:",
        "Flash attention can't be used because:",
    ]


# ---- PyTorch as an oracle, when it is installed -------------------------------------

ORACLE_CASES = {
    "4d": ((2, 3, 4, 8), (2, 3, 4, 8), (2, 3, 4, 8), {}),
    "3d": ((3, 4, 8), (3, 4, 8), (3, 4, 8), {}),
    "dropout": ((2, 3, 4, 8), (2, 3, 4, 8), (2, 3, 4, 8), {"dropout_p": 0.5}),
    "heads": ((2, 3, 4, 8), (2, 1, 4, 8), (2, 1, 4, 8), {}),
    "gqa": ((2, 6, 4, 8), (2, 3, 4, 8), (2, 3, 4, 8), {"enable_gqa": True}),
    "gqa-nodiv": ((2, 5, 4, 8), (2, 3, 4, 8), (2, 3, 4, 8), {"enable_gqa": True}),
    "vdim": ((2, 3, 4, 8), (2, 3, 4, 8), (2, 3, 4, 5), {}),
    "empty": ((2, 3, 0, 8), (2, 3, 4, 8), (2, 3, 4, 8), {}),
}


@pytest.mark.parametrize("case", sorted(ORACLE_CASES))
@pytest.mark.parametrize("backends", ["flash", "none", "math"])
def test_against_pytorch(case, backends):
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend as TorchBackend
    from torch.nn.attention import sdpa_kernel as torch_sdpa_kernel

    names = {"flash": ["FLASH_ATTENTION"], "none": [], "math": ["MATH"]}[backends]
    q_shape, k_shape, v_shape, kwargs = ORACLE_CASES[case]

    def run(lib, backend_enum, kernel):
        q, k, v = (lib.randn(*s) for s in (q_shape, k_shape, v_shape))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with kernel([getattr(backend_enum, n) for n in names]):
                try:
                    out = lib.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs)
                    outcome = ("ok", tuple(out.shape))
                except RuntimeError as e:
                    outcome = ("error", str(e))
        return outcome, [str(w.message).split(" (Triggered internally")[0] for w in caught]

    ours, theirs = (
        run(flambeau, SDPBackend, sdpa_kernel),
        run(torch, TorchBackend, torch_sdpa_kernel),
    )
    if theirs[0][0] == "error" and "kernel" not in theirs[0][1]:
        # An error of the math kernel itself: the operator words it its own way.
        assert ours[0][0] == "error" and ours[1] == theirs[1]
    else:
        assert ours == theirs
