"""Every public name of every installed package has an entry in the API reference.

The reference pages (docs/api/*.rst) write an entry for every public name of each
module they name in a `flambeau-reference` directive; which names are public is
decided in docs/_ext/flambeau_public.py. These checks keep that list complete: each
public module of an installed package is on a page, every class and function a
package's modules define is reachable from one of those modules' public names, and
every public class and function has a docstring with an example (which the docs'
doctest build runs). No Sphinx and no torch needed.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys

import pytest
from wheelhouse import ROOT

sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from flambeau_public import PUBLIC_MODULES, importable, public_names  # noqa: E402

DIRECTIVE = re.compile(r"^\.\. flambeau-reference:: (\S+)", re.MULTILINE)
KNOWN_UNDOCUMENTED = ROOT / "docs" / "_ext" / "undocumented.txt"
TOPS = sorted({m for modules in PUBLIC_MODULES.values() for m in modules})


def installed_modules() -> dict[str, object]:
    return {name: m for name in TOPS if (m := importable(name)) is not None}


def documented_modules() -> set[str]:
    pages = (ROOT / "docs" / "api").glob("*.rst")
    return {m for page in pages for m in DIRECTIVE.findall(page.read_text())}


def reachable_objects(modules) -> set[int]:
    """ids of the public names of the documented modules and of their classes' members."""
    found = set()
    for module in modules.values():
        for name in public_names(module):
            obj = getattr(module, name)
            found.add(id(obj))
            if inspect.isclass(obj):
                found |= {id(v) for v in vars(obj).values()}
    return found


def package_modules(top: str):
    """Every module under the package `top`, private ones included."""
    package = importlib.import_module(top)
    yield package
    for info in pkgutil.walk_packages(package.__path__, top + "."):
        try:
            yield importlib.import_module(info.name)
        except ImportError:
            continue  # an optional dependency (mpi4py, safetensors) is missing


def test_every_public_module_has_a_reference_page():
    missing = sorted(set(installed_modules()) - documented_modules())
    assert not missing, f"no `.. flambeau-reference::` in docs/api for {missing}"


def test_public_classes_and_functions_have_docstrings():
    """Their entries show the docstring. docs/_ext/undocumented.txt lists the names
    excused; it has been empty since issue 22, and a new name gets a docstring rather
    than a line there."""
    listed = set(KNOWN_UNDOCUMENTED.read_text().split())
    undocumented = {
        f"{name}.{attr}"
        for name, module in installed_modules().items()
        for attr in public_names(module)
        if (inspect.isclass(obj := getattr(module, attr)) or inspect.isroutine(obj))
        and not (inspect.getdoc(obj) or "").strip()
    }
    new = sorted(undocumented - listed)
    assert not new, f"{len(new)} public names without a docstring: {new}"


# The families of modules whose classes users reach by name: a layer, optimizer,
# distribution, dataset or legacy module defined there must be exported.
CLASS_FAMILIES = [
    "flambeau.nn.modules",
    "flambeau.optim",
    "flambeau.distributions",
    "flambeau.utils.data",
    "flambeau.legacy.nn",
]
# Bases and helpers that PyTorch does not export either.
NOT_EXPORTED = {
    "flambeau.nn.modules.lazy.LazyModuleMixin",
    "flambeau.nn.modules.linear.NonDynamicallyQuantizableLinear",
    "flambeau.distributions.relaxed_bernoulli.LogitRelaxedBernoulli",
    "flambeau.distributions.relaxed_categorical.ExpRelaxedCategorical",
    "flambeau.distributions.utils.lazy_property",
}


@pytest.mark.parametrize("top", CLASS_FAMILIES)
def test_every_class_a_package_defines_has_a_reference_entry(top):
    """A class defined in the package's public modules must be a public name of a
    documented module or a member of a documented class: a layer added in
    nn/modules/ but not exported from flambeau.nn fails here."""
    if importable(top) is None:
        pytest.skip(f"{top} is not installed")
    reachable = reachable_objects(installed_modules())
    hidden = []
    for module in package_modules(top):
        if any(part.startswith("_") for part in module.__name__.split(".")):
            continue
        for name, obj in vars(module).items():
            qualified = f"{module.__name__}.{name}"
            if (
                inspect.isclass(obj)
                and not name.startswith("_")
                and obj.__module__ == module.__name__
                and id(obj) not in reachable
                and qualified not in NOT_EXPORTED
            ):
                hidden.append(qualified)
    assert not hidden, f"{len(hidden)} classes with no reference entry: {hidden}"


def _is_operator_binding(obj) -> bool:
    """A generated operator binding: its example is the operator table's (checked by the
    core's tests/test_ops.py)."""
    doc = getattr(obj, "__doc__", None) or ""
    return doc.startswith(f"{getattr(obj, '__name__', '')}(*args, **kwargs) -> object")


def test_public_classes_and_functions_have_examples():
    """Each has a `>>>` example in its docstring, as issue 22 asks."""
    without = sorted(
        f"{name}.{attr}"
        for name, module in installed_modules().items()
        for attr in public_names(module)
        if (inspect.isclass(obj := getattr(module, attr)) or inspect.isroutine(obj))
        and not _is_operator_binding(obj)
        and ">>>" not in (inspect.getdoc(obj) or "")
    )
    assert not without, f"{len(without)} public names without an example: {without}"
