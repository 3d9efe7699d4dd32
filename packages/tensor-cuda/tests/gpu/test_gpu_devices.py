"""Devices: properties, switching, synchronization and memory info on a real GPU."""

import flambeau


def test_properties_describe_the_device():
    props = flambeau.cuda.get_device_properties(0)
    assert props.total_memory > 0 and props.multi_processor_count > 0
    assert (props.major, props.minor) == flambeau.cuda.get_device_capability(0)
    assert props.major >= 5
    assert flambeau.cuda.get_device_name(0) == props.name and props.name
    assert "name=" in repr(props)


def test_current_and_set_device():
    assert flambeau.cuda.is_initialized() or flambeau.cuda.current_device() == 0
    flambeau.cuda.set_device(0)
    assert flambeau.cuda.current_device() == 0
    with flambeau.cuda.device(0):
        assert flambeau.cuda.current_device() == 0
    last = flambeau.cuda.device_count() - 1
    with flambeau.cuda.device(f"cuda:{last}"):
        assert flambeau.cuda.current_device() == last
    assert flambeau.cuda.current_device() == 0


def test_synchronize_and_mem_get_info():
    flambeau.cuda.synchronize()
    free, total = flambeau.cuda.mem_get_info()
    assert 0 < free <= total == flambeau.cuda.get_device_properties(0).total_memory


def test_arch_list_and_bf16():
    assert flambeau.cuda.get_arch_list()
    assert flambeau.cuda.is_bf16_supported() in (True, False)
