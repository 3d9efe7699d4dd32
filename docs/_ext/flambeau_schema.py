"""Show operator schemas as the signatures of generated bindings.

The generated pybind11 bindings take ``(*args, **kwargs)`` and carry their
operator schemas as the first lines of the docstring, e.g.
``zeros(int[] size, *, ScalarType? dtype=None)``, one line per overload.
Autodoc would show the useless signature and parse the schemas as
reStructuredText (their ``*`` starts emphasis). This shows the first schema as
the signature and any other overloads as a literal block.
"""

GENERIC = "(*args, **kwargs)"


def _schemas(name, lines):
    """(start, end) of the schema lines: those right after leading blank lines
    that read `name(...)`."""
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    end = start
    while end < len(lines) and lines[end].startswith(name + "(") and lines[end].endswith(")"):
        end += 1
    return start, end


def _process_signature(app, what, name, obj, options, signature, return_annotation):
    if what not in ("function", "method") or signature != GENERIC:
        return None
    short = name.rsplit(".", 1)[-1]
    lines = [line.rstrip() for line in (obj.__doc__ or "").splitlines()[1:]]  # after pybind's
    start, end = _schemas(short, lines)
    return (lines[start][len(short) :], None) if end > start else None


def _process_docstring(app, what, name, obj, options, lines):
    if what not in ("function", "method"):
        return
    short = name.rsplit(".", 1)[-1]
    start, end = _schemas(short, [line.rstrip() for line in lines])
    overloads = [line.rstrip() for line in lines[start + 1 : end]]
    del lines[:end]
    if overloads:
        lines[:0] = ["Other forms::", "", *("    " + s for s in overloads), ""]


def setup(app):
    app.connect("autodoc-process-signature", _process_signature)
    app.connect("autodoc-process-docstring", _process_docstring)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
