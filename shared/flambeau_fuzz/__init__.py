"""Schema-driven fuzzing of every operator in flambeau.ops_table().

    PYTHONPATH=shared python -m flambeau_fuzz --budget 180 --seed 0
    PYTHONPATH=shared python -m flambeau_fuzz --calls 5000 --ops 'linalg_.*'
    PYTHONPATH=shared python -m flambeau_fuzz --seed 0 --replay 1234   # print one call
    PYTHONPATH=shared python -m flambeau_fuzz --oracle torch          # compare with PyTorch

`nox -s fuzz` and `nox -s sanitize` run it. Calls are generated from each
operator's schema (generate.py, with shape hints per family in hints.py) and run
in worker processes (worker.py) that the parent (runner.py) replaces when one
crashes or hangs. Every outcome is classified (outcomes.py); the run writes a
summary and one standalone reproducer per finding (report.py), and exits 1 when
there is any crash, hang, sanitizer report or unclean exception (or, with
--oracle torch, a disagreement with PyTorch: oracle.py). There is no
allow-list: a finding is fixed, not hidden. See docs/design/fuzzing.rst.
"""
