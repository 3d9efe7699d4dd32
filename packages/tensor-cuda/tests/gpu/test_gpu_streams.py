"""Streams and events on a GPU: current-stream switching, ordering, timing."""

import flambeau


def test_stream_context_switches_the_current_stream():
    default = flambeau.cuda.current_stream()
    assert default == flambeau.cuda.default_stream()
    s = flambeau.cuda.Stream()
    assert s != default and s.device == flambeau.device("cuda", 0)
    with flambeau.cuda.stream(s):
        assert flambeau.cuda.current_stream() == s
        y = flambeau.ones(1 << 20, device="cuda") * 3
    assert flambeau.cuda.current_stream() == default
    s.synchronize()
    assert s.query()
    assert y.sum().item() == 3 * (1 << 20)


def test_priorities_are_clamped_to_the_device_range():
    least, greatest = flambeau.cuda.Stream.priority_range()
    assert greatest <= least
    assert flambeau.cuda.Stream(priority=-100).priority == greatest
    assert flambeau.cuda.Stream(priority=100).priority == least


def test_event_timing_and_cross_stream_wait():
    start = flambeau.cuda.Event(enable_timing=True)
    end = flambeau.cuda.Event(enable_timing=True)
    start.record()
    x = flambeau.ones(1 << 22, device="cuda")
    for _ in range(10):
        x = x + 1
    end.record()
    end.synchronize()
    assert end.query()
    assert start.elapsed_time(end) > 0

    producer, consumer = flambeau.cuda.Stream(), flambeau.cuda.Stream()
    with flambeau.cuda.stream(producer):
        z = flambeau.full((1 << 20,), 2.0, device="cuda")
    consumer.wait_stream(producer)
    with flambeau.cuda.stream(consumer):
        w = z * 5
    consumer.synchronize()
    assert w.sum().item() == 10.0 * (1 << 20)


def test_untimed_event_refuses_elapsed_time():
    a, b = flambeau.cuda.Event(), flambeau.cuda.Event()
    a.record()
    b.record()
    b.synchronize()
    try:
        a.elapsed_time(b)
    except RuntimeError as e:
        assert "enable_timing=True" in str(e)
    else:
        raise AssertionError("elapsed_time of untimed events did not raise")
