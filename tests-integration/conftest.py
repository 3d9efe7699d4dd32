import pathlib


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "editable: builds an editable install of the core (slow the first time; "
        'deselect with -m "not editable")',
    )


def pytest_report_header(config):
    # Shows which flambeau this run tests: the installed wheel, or a source checkout.
    try:
        import flambeau
    except ImportError as e:
        return f"flambeau: not importable ({e})"
    return f"flambeau: {pathlib.Path(flambeau.__file__).parent}"
