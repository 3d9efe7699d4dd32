"""Docstrings written as plain text render as such, without reST warnings.

flambeau's docstrings mix reST (``literals``, roles) with plain-text notation that reST
reads as markup: ``*args`` and ``a * b`` (emphasis), ``|x - t|`` (a substitution),
``exponential_`` (a reference), and the operators' schema lines such as
``add(Tensor input, Tensor other, *, Scalar alpha=1)``. Before autodoc parses a
docstring, this escapes those, outside inline literals, roles, literal blocks and
doctests, so `sphinx-build -W` stays clean and the text reads as written.
"""

from __future__ import annotations

import re

# Inline literals and interpreted text (``x``, `x`, :role:`x`), left as they are.
PROTECTED = re.compile(r"(``.+?``|:[\w:.-]+:`[^`]+`|`[^`]+`_{0,2})")
# `*` or `**` opening a word with no closing star after it (*args, **kwargs, a *b).
LONE_STAR = re.compile(r"(?<![\w\\*])(\*\*?)(?=[\w(])(?![^\s*]*\*(?:\W|$))")
# A star after a space or bracket and before no word: `a * b`, `(*, x)`, `lr *= 2`.
LOOSE_STAR = re.compile(r"(?<=[\s(,\[])(\*\*?)(?=[^\w*]|$)")
BARS = re.compile(r"\|")
TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=[\s.,;:)\]]|$)")
# An operator's schema line: `name(Tensor self, ...) -> ...`.
SCHEMA = re.compile(r"^[a-z_][\w.]*\((Tensor|Scalar|int|float|bool|.*\bTensor\b).*\)\S*$")


def _escape(text: str) -> str:
    parts = PROTECTED.split(text)
    for i in range(0, len(parts), 2):  # the even parts are outside literals and roles
        plain = parts[i]
        plain = LONE_STAR.sub(lambda m: "\\" + "\\".join(m.group(1)), plain)
        plain = LOOSE_STAR.sub(lambda m: "\\" + "\\".join(m.group(1)), plain)
        plain = BARS.sub(r"\\|", plain)
        plain = TRAILING_UNDERSCORE.sub(r"\\_", plain)
        parts[i] = plain
    return "".join(parts)


def escape_plain_text(lines: list[str]) -> None:
    """Escape, in place, the plain-text notation of a docstring's lines."""
    literal_indent = None  # inside a literal block: the indentation of its `::` line
    in_doctest = False  # a doctest block runs from a `>>>` line to the next blank line
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(stripped) if stripped else None
        if literal_indent is not None:
            if indent is None or indent > literal_indent:
                continue
            literal_indent = None
        in_doctest = bool(stripped) and (in_doctest or stripped.startswith(">>>"))
        if in_doctest or stripped.startswith((".. ", "| ", "+-", "+=")) or not stripped:
            pass
        elif SCHEMA.match(stripped):
            lines[i] = line[: len(line) - len(line.lstrip())] + f"``{stripped}``"
        else:
            lines[i] = _escape(line)
        if stripped.endswith("::"):
            literal_indent = indent


def _process(app, what, name, obj, options, lines):
    escape_plain_text(lines)


def _schema_signature(app, what, name, obj, options, signature, return_annotation):
    """A compiled operator's schema as its signature, in place of pybind11's generic
    ``(*args, **kwargs) -> object``."""
    if not signature or "*args, **kwargs" not in signature:
        return None
    for line in (getattr(obj, "__doc__", None) or "").splitlines():
        stripped = line.strip()
        if SCHEMA.match(stripped) and "(" in stripped:
            arguments = stripped[stripped.index("(") : stripped.rindex(")") + 1]
            returns = stripped[stripped.rindex(")") + 1 :].removeprefix(" -> ").strip()
            return arguments, returns or None
    return None


def setup(app):
    app.connect("autodoc-process-docstring", _process)
    app.connect("autodoc-process-signature", _schema_signature)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
