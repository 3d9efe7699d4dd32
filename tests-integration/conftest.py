import pathlib

import pytest


def pytest_addoption(parser):
    parser.addoption(
        "--run-editable",
        action="store_true",
        help="also run the tests marked `editable`, which compile the core a second time "
        "(`nox -s editable` passes this option)",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "editable: builds an editable Debug install of the core (a second compilation, slow "
        "the first time); skipped unless --run-editable is given, as `nox -s editable` does",
    )
    # pytest-xdist's mark, known here too for runs without xdist.
    config.addinivalue_line(
        "markers", "xdist_group(name): keep these tests on one xdist worker (--dist loadgroup)"
    )


def pytest_collection_modifyitems(config, items):
    # Opt-in: `nox -s tests` installs the core's wheel, so compiling the core again here
    # would double the time of every run. `nox -s editable` (ci/editable.sh) runs them.
    if config.getoption("--run-editable"):
        return
    skip = pytest.mark.skip(
        reason="compiles the core a second time: opt in with --run-editable (nox -s editable)"
    )
    for item in items:
        if "editable" in item.keywords:
            item.add_marker(skip)


def pytest_report_header(config):
    # Shows which flambeau this run tests: the installed wheel, or a source checkout.
    try:
        import flambeau
    except ImportError as e:
        return f"flambeau: not importable ({e})"
    return f"flambeau: {pathlib.Path(flambeau.__file__).parent}"
