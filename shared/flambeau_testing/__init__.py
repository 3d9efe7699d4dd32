"""Test helpers shared by flambeau's packages and backends (see README.md).

``flambeau_testing.optable`` is the operator test table: for every operator of the
core, rows that say how to call it, its NumPy reference and the inputs to try.
tensor-core's tests run the rows against NumPy on the CPU; :func:`check_on_device` runs
the same rows on another device against the CPU, over the devices :func:`devices` finds.
``python -m flambeau_testing.run_on_device DEVICE`` does that for a whole table and
prints a JSON summary.
"""

from .devices import devices, other_devices
from .on_device import DeviceReport, assert_on_device, check_on_device

__all__ = ["DeviceReport", "assert_on_device", "check_on_device", "devices", "other_devices"]
