"""FLAMBEAU_CUDA_ALLOC_CONF: PYTORCH_CUDA_ALLOC_CONF's format and options."""

from __future__ import annotations

import pytest

MiB = 1 << 20


def test_empty_string_gives_the_defaults(harness):
    cfg = harness.parse_config("")
    assert cfg["max_split_size"] is None
    assert cfg["max_non_split_rounding_size"] == 20 * MiB
    assert cfg["garbage_collection_threshold"] == 0.0
    assert cfg["expandable_segments"] is None  # on wherever the device has virtual memory
    assert cfg["roundup_power2_divisions"] == [0] * 16
    assert cfg["text"] == ""


def test_the_documented_example_parses(harness):
    cfg = harness.parse_config(
        "expandable_segments:True,max_split_size_mb:128,garbage_collection_threshold:0.8"
    )
    assert cfg["expandable_segments"] is True
    assert cfg["max_split_size"] == 128 * MiB
    assert cfg["garbage_collection_threshold"] == pytest.approx(0.8)


def test_spaces_empty_items_and_a_trailing_comma_are_ignored(harness):
    cfg = harness.parse_config(" max_split_size_mb : 64 ,, expandable_segments:False, ")
    assert cfg["max_split_size"] == 64 * MiB
    assert cfg["expandable_segments"] is False


def test_a_later_setting_wins(harness):
    assert harness.parse_config("max_split_size_mb:64,max_split_size_mb:100")["max_split_size"] == (
        100 * MiB
    )


@pytest.mark.parametrize("text", ["True", "true", "1"])
def test_expandable_true_spellings(harness, text):
    assert harness.parse_config(f"expandable_segments:{text}")["expandable_segments"] is True


def test_roundup_divisions_single_value_sets_every_interval(harness):
    cfg = harness.parse_config("roundup_power2_divisions:4")
    assert cfg["roundup_power2_divisions"] == [4] * 16


def test_roundup_divisions_list(harness):
    cfg = harness.parse_config("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]")
    divisions = cfg["roundup_power2_divisions"]
    # Interval k holds sizes in (2**(k-1), 2**k] MiB; interval 0 sizes up to 1 MiB.
    assert divisions[:9] == [1] * 9  # up to 256 MiB
    assert divisions[9] == 2  # (256, 512] MiB
    assert divisions[10] == 4  # (512, 1024] MiB
    assert divisions[11:] == [8] * 5
    assert cfg["text"] == "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]"


def test_to_string_round_trips(harness):
    text = (
        "expandable_segments:False,max_split_size_mb:200,max_non_split_rounding_mb:5,"
        "garbage_collection_threshold:0.6,roundup_power2_divisions:[>:2]"
    )
    cfg = harness.parse_config(text)
    assert cfg["text"] == text
    assert harness.parse_config(cfg["text"]) == cfg


@pytest.mark.parametrize(
    "text, message",
    [
        ("foo:1", "unknown option 'foo' (known options: backend, expandable_segments"),
        ("max_split_size:128", "unknown option 'max_split_size'"),
        ("pinned_use_cuda_host_register:True", "is PyTorch's; flambeau does not implement it"),
        ("release_lock_on_cudamalloc:True", "is PyTorch's"),
        ("expandable_segments", "expected <option>:<value>, got 'expandable_segments'"),
        ("max_split_size_mb:20", "max_split_size_mb must be an integer > 20, got '20'"),
        ("max_split_size_mb:abc", "max_split_size_mb must be an integer > 20"),
        ("max_split_size_mb:-5", "max_split_size_mb must be an integer > 20"),
        ("garbage_collection_threshold:0", "threshold must be a number in (0, 1), got '0'"),
        ("garbage_collection_threshold:1", "threshold must be a number in (0, 1), got '1'"),
        ("garbage_collection_threshold:x", "threshold must be a number in (0, 1), got 'x'"),
        ("expandable_segments:yes", "expandable_segments must be True or False, got 'yes'"),
        ("roundup_power2_divisions:3", "takes powers of two (or 0 to disable), got '3'"),
        ("roundup_power2_divisions:[300:2]", "sizes are powers of two from 1 to 16384"),
        ("roundup_power2_divisions:[512:2,256:4]", "sizes must increase"),
        ("roundup_power2_divisions:[256:2", "unbalanced '['"),
        ("roundup_power2_divisions:[256 2]", "entries are <size_mb>:<divisions>"),
        ("backend:cudaMallocAsync", "backend 'cudaMallocAsync' is not supported (only 'native')"),
        ("max_non_split_rounding_mb:x", "max_non_split_rounding_mb must be a non-negative integer"),
    ],
)
def test_errors_name_the_variable_and_the_problem(harness, text, message):
    with pytest.raises(ValueError) as info:
        harness.parse_config(text)
    assert str(info.value).startswith("FLAMBEAU_CUDA_ALLOC_CONF: ")
    assert message in str(info.value)


def test_backend_native_is_accepted(harness):
    assert harness.parse_config("backend:native")["text"] == ""


def test_the_allocator_reads_the_environment(harness, monkeypatch):
    monkeypatch.setenv(harness.CONF_ENV, "max_split_size_mb:64,expandable_segments:False")
    fake = harness.FakeDevice(total_bytes=64 * MiB)
    alloc = harness.CachingAllocator(fake)
    assert alloc.config == "expandable_segments:False,max_split_size_mb:64"
    assert alloc.memory_stats()["max_split_size"] == 64 * MiB
    assert not alloc.expandable_segments()


def test_a_bad_environment_fails_at_construction(harness, monkeypatch):
    monkeypatch.setenv(harness.CONF_ENV, "expandable:True")
    with pytest.raises(ValueError, match="unknown option 'expandable'"):
        harness.CachingAllocator(harness.FakeDevice(total_bytes=64 * MiB))


def test_expandable_segments_are_on_by_default_with_virtual_memory(make):
    assert make("")[1].expandable_segments()
    assert not make("", virtual_memory=False)[1].expandable_segments()


def test_asking_for_expandable_segments_without_virtual_memory_falls_back(make):
    fake, alloc = make("expandable_segments:True", virtual_memory=False)
    assert not alloc.expandable_segments()
    ptr = alloc.malloc(4096)
    assert fake.calls("malloc") == 1
    alloc.free(ptr)
