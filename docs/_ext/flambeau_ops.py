"""The `flambeau-operators` directive: one table per category of the operator table.

The rows come from `flambeau.ops_table()` of the installed core, which is built
from the same declarations (packages/tensor-core/ops/*.yaml) as the bindings,
so the list cannot drift from the code. After each table come the operators'
examples (their `example:` key), which the doctest build runs.
"""

from collections import defaultdict

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

HEADER = ("Operator", "Schema", "Variants", "Description")
WIDTHS = (14, 46, 14, 26)


def _row(cells, literal=()):
    row = nodes.row()
    for i, text in enumerate(cells):
        content = nodes.literal(text, text) if i in literal and text else nodes.Text(text)
        row += nodes.entry("", nodes.paragraph("", "", content))
    return row


def _nondeterminism(op):
    """The device types where the operator is not deterministic (ops/README.md)."""
    devices = op.get("nondeterministic") or ()
    if not devices:
        return ""
    when = f" when {op['nondeterministic_if']}" if op.get("nondeterministic_if") else ""
    return f" Not deterministic on {', '.join(devices)}{when}."


def _table(ops):
    tgroup = nodes.tgroup(cols=len(HEADER))
    tgroup += [nodes.colspec(colwidth=w) for w in WIDTHS]
    tgroup += nodes.thead("", _row(HEADER))
    body = nodes.tbody()
    for op in sorted(ops, key=lambda op: op["name"]):
        variants = op.get("variants") or ()
        if not isinstance(variants, str):
            variants = ", ".join(map(str, variants))
        summary = (op.get("doc") or "").strip().split("\n\n")[0].replace("\n", " ")
        summary += _nondeterminism(op)
        body += _row((op["name"], op["schema"], variants, summary), literal=(0, 1))
    tgroup += body
    return nodes.table("", tgroup, classes=["longtable"])


def _examples(ops):
    """A name and a doctest block per operator of the category that has an example."""
    found = {}
    for op in ops:
        if op.get("example") and op["name"] not in found:
            found[op["name"]] = op["example"]
    out = []
    if found:
        out.append(nodes.rubric("Examples", "Examples"))
    for name in sorted(found):
        out.append(nodes.paragraph("", "", nodes.literal(name, name)))
        out.append(nodes.doctest_block(found[name], found[name]))
    return out


class OperatorTables(SphinxDirective):
    def run(self):
        import flambeau

        by_category = defaultdict(list)
        for op in flambeau.ops_table():
            by_category[op.get("category") or "other"].append(op)
        sections = []
        for category in sorted(by_category):
            title = category.replace("_", " ").capitalize()
            section = nodes.section(ids=[nodes.make_id(f"operators-{category}")], names=[title])
            section += nodes.title(title, title)
            section += _table(by_category[category])
            section += _examples(by_category[category])
            self.state.document.note_implicit_target(section)
            sections.append(section)
        return sections


def setup(app):
    app.add_directive("flambeau-operators", OperatorTables)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
