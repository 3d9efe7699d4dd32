"""The `flambeau-reference` directive: an autodoc entry for every public name of a module.

    .. flambeau-reference:: flambeau.nn.init
       :skip: calculate_gain            (names to leave out)
       :no-operators:                   (leave out the operators: the operators page has them)

Names already documented on the page (an ``autofunction`` written by hand above the
directive, with prose around it) are left out, so a page can describe its main names
by hand and let the directive list the rest.

Classes get their members (``Tensor`` all of them, documented or not), functions their
signature and docstring, other objects (dtypes, constants) a data entry. Which names are
public is decided in docs/_ext/flambeau_public.py, which the reference test shares, so
the pages cannot fall behind the packages. A module whose package is not installed
renders a note instead, so that the site builds with any subset of the packages.
"""

from __future__ import annotations

import inspect

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from flambeau_public import importable, operator_names, public_names
from sphinx.domains.python import PyClasslike
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

# Classes documented with every member, with or without a docstring.
EVERY_MEMBER = {"flambeau.Tensor"}


def _entry(module: str, name: str, obj) -> list[str]:
    target = f"{module}.{name}"
    if inspect.isclass(obj):
        kind = "autoexception" if issubclass(obj, BaseException) else "autoclass"
        lines = [f".. {kind}:: {target}", "   :members:"]
        if target in EVERY_MEMBER:
            lines += ["   :undoc-members:", "   :inherited-members:"]
        return [*lines, ""]
    if callable(obj):
        return [f".. autofunction:: {target}", ""]
    value = repr(obj)
    if "\n" in value or len(value) > 60:
        value = type(obj).__name__ + " instance"
    return [f".. py:data:: {target}", f"   :value: {value}", ""]


class ModuleReference(SphinxDirective):
    required_arguments = 1
    option_spec = {"skip": directives.unchanged, "no-operators": directives.flag}

    def run(self):
        module_name = self.arguments[0]
        module = importable(module_name)
        if module is None:
            text = f"``{module_name}`` is not installed here, so it has no entries."
            return [nodes.note("", nodes.paragraph(text, text))]
        skip = set(self.options.get("skip", "").split())
        if "no-operators" in self.options:
            skip |= operator_names()
        documented = self.env.get_domain("py").objects  # entries written by hand above
        lines: list[str] = []
        for name in public_names(module):
            if name not in skip and f"{module_name}.{name}" not in documented:
                lines += _entry(module_name, name, getattr(module, name))
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(self.state, StringList(lines, source=module_name), container)
        return container.children


class ClassWithoutCanonical(PyClasslike):
    """``py:class`` without the ``:canonical:`` name autodoc adds for a class defined in
    another module. flambeau documents one class under each public name PyTorch gives
    it (``flambeau.no_grad`` and ``flambeau.autograd.no_grad``); with the private
    defining module as canonical name of both, Sphinx would report duplicates."""

    def run(self):
        self.options.pop("canonical", None)
        return super().run()


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")
    app.add_directive("flambeau-reference", ModuleReference)
    for kind in ("class", "exception"):
        app.add_directive_to_domain("py", kind, ClassWithoutCanonical, override=True)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
