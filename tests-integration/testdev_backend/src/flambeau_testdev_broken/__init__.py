"""A backend whose import fails: flambeau must stay usable, and say why when asked."""

raise RuntimeError("testdev_broken fails on purpose")
