"""The testdev backend built for the next ABI major: its import must be refused."""

from flambeau_testdev_next import _testdev_next  # noqa: F401
