"""The modules of flambeau.utils.benchmark, at PyTorch's paths
(``torch.utils.benchmark.utils.timer``, ``.common``, ``.compare``)."""
