"""Random sequences of malloc, free, record_stream, stream completion and
empty_cache, against a model of what the allocator may and may not do:

- live blocks never overlap;
- a block freed after record_stream(ptr, s) is not handed out again until the
  work queued on s by then has completed (or the allocator synchronized);
- a cached block is handed out only on its own stream (until memory went back
  to the device);
- snapshot, statistics and device agree: allocated <= reserved <= device size,
  peaks >= current values (allocator_checks.check_consistent);
- once everything is freed and the cache emptied, nothing is reserved, mapped
  or malloc'd, and no address space stays reserved.
"""

from __future__ import annotations

from allocator_checks import check_all_returned, check_consistent
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

KiB = 1 << 10
MiB = 1 << 20
DEVICE_BYTES = 96 * MiB
STREAMS = st.sampled_from([0, 1, 2])
SIZES = st.one_of(
    st.integers(1, 4 * KiB),
    st.integers(4 * KiB, MiB),
    st.integers(MiB + 1, 12 * MiB),
    st.integers(12 * MiB, 40 * MiB),
)
CONFS = st.fixed_dictionaries(
    {
        "expandable_segments": st.sampled_from(["True", "False"]),
        "max_split_size_mb": st.sampled_from([None, "32"]),
        "garbage_collection_threshold": st.sampled_from([None, "0.7"]),
        "roundup_power2_divisions": st.sampled_from([None, "4"]),
    }
)


def overlaps(lo, hi, other_lo, other_hi):
    return lo < other_hi and other_lo < hi


def make_machine(harness):
    class AllocatorMachine(RuleBasedStateMachine):
        @initialize(conf=CONFS, granularity=st.sampled_from([64 * KiB, 2 * MiB]))
        def start(self, conf, granularity):
            text = ",".join(f"{k}:{v}" for k, v in conf.items() if v is not None)
            self.fake = harness.FakeDevice(total_bytes=DEVICE_BYTES, granularity=granularity)
            self.alloc = harness.CachingAllocator(self.fake, text)
            self.live = {}  # ptr -> [size, stream, streams recorded]
            self.pending = []  # [lo, hi, streams whose work must finish first]
            self.cached = []  # (lo, hi, stream) of freed blocks
            self.releases = 0  # num_device_free when `cached` was last valid
            self.syncs = 0

        def stat(self, key):
            return self.alloc.memory_stats()[key]

        def forget_what_went_back(self):
            """Memory returned to the device may come back on any stream, and a
            synchronization completes every pending free."""
            if self.stat("num_device_free") != self.releases:
                self.cached.clear()
                self.releases = self.stat("num_device_free")
            if self.stat("num_sync_all_streams") != self.syncs:
                self.pending.clear()
                self.syncs = self.stat("num_sync_all_streams")

        @rule(size=SIZES, stream=STREAMS)
        def malloc(self, size, stream):
            try:
                ptr = self.alloc.malloc(size, stream=stream)
            except harness.OutOfMemoryError as e:
                assert e.requested == size
                assert e.allocated == self.stat("allocated_bytes.all.current")
                assert e.allocated <= e.reserved <= DEVICE_BYTES
                assert 0 <= e.largest_free <= e.free_cached <= e.reserved - e.allocated
                assert 0.0 <= e.fragmentation <= 1.0
                assert e.device_total == DEVICE_BYTES
                self.forget_what_went_back()
                return
            self.forget_what_went_back()
            lo, hi = ptr, ptr + size
            for other, (other_size, _, _) in self.live.items():
                assert not overlaps(lo, hi, other, other + other_size), "live blocks overlap"
            for p_lo, p_hi, streams in self.pending:
                assert not overlaps(lo, hi, p_lo, p_hi), f"reused before {streams} finished"
            still_cached = []
            for c_lo, c_hi, c_stream in self.cached:
                if overlaps(lo, hi, c_lo, c_hi):
                    assert c_stream == stream, "a cached block changed streams"
                else:
                    still_cached.append((c_lo, c_hi, c_stream))
            self.cached = still_cached
            self.live[ptr] = [size, stream, set()]

        @precondition(lambda self: self.live)
        @rule(data=st.data())
        def free(self, data):
            ptr = data.draw(st.sampled_from(sorted(self.live)))
            size, stream, recorded = self.live.pop(ptr)
            self.alloc.free(ptr)
            if recorded:
                self.pending.append([ptr, ptr + size, recorded])
            self.cached.append((ptr, ptr + size, stream))

        @precondition(lambda self: self.live)
        @rule(data=st.data(), stream=STREAMS)
        def record_stream(self, data, stream):
            ptr = data.draw(st.sampled_from(sorted(self.live)))
            self.alloc.record_stream(ptr, stream)
            if stream != self.live[ptr][1]:
                self.live[ptr][2].add(stream)

        @rule(stream=STREAMS)
        def complete(self, stream):
            self.fake.complete(stream)
            for entry in self.pending:
                entry[2].discard(stream)
            self.pending = [entry for entry in self.pending if entry[2]]

        @rule()
        def empty_cache(self):
            self.alloc.empty_cache()
            self.forget_what_went_back()
            assert not self.pending
            # Nothing unused stays: every malloc'd segment holds an active block,
            # and no free page is left mapped.
            for seg in self.alloc.snapshot():
                states = {b["state"] for b in seg["blocks"]}
                assert states != {"inactive"}, "an unused segment survived empty_cache"

        @invariant()
        def consistent(self):
            if hasattr(self, "alloc"):
                check_consistent(self.fake, self.alloc)

        def teardown(self):
            if not hasattr(self, "alloc"):
                return
            for ptr in list(self.live):
                self.alloc.free(ptr)
            self.alloc.empty_cache()
            check_all_returned(self.fake, self.alloc)

    return AllocatorMachine


def test_random_sequences(harness):
    run_state_machine_as_test(
        make_machine(harness),
        settings=settings(
            max_examples=300,
            stateful_step_count=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
            print_blob=True,
        ),
    )
