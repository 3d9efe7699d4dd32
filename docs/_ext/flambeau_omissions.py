"""The `flambeau-omissions` directive: the names of PyTorch's API flambeau lacks on purpose.

The rows come from shared/flambeau_coverage/omissions.toml, the same list the coverage
tool (`nox -s coverage`) counts against, so the page cannot drift from the measurement.
"""

from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

OMISSIONS = Path(__file__).parents[2] / "shared" / "flambeau_coverage" / "omissions.toml"
HEADER = ("Name", "Reason")


def _row(cells):
    row = nodes.row()
    for i, text in enumerate(cells):
        content = nodes.literal(text, text) if i == 0 else nodes.Text(text)
        row += nodes.entry("", nodes.paragraph("", "", content))
    return row


def _table(names: dict[str, str], namespace: str):
    tgroup = nodes.tgroup(cols=2)
    tgroup += [nodes.colspec(colwidth=w) for w in (30, 70)]
    tgroup += nodes.thead("", _row(HEADER))
    body = nodes.tbody()
    prefix = f"torch.{namespace}." if namespace else "torch."
    for name in sorted(names):
        body += _row((prefix + name, names[name]))
    tgroup += body
    return nodes.table("", tgroup)


class OmissionTables(SphinxDirective):
    """One table per namespace of the given kind: ``omitted`` or ``elsewhere``."""

    required_arguments = 1

    def run(self):
        kind = self.arguments[0]
        self.env.note_dependency(str(OMISSIONS))
        data = tomllib.loads(OMISSIONS.read_text()).get(kind, {})
        if not data:
            return [nodes.paragraph("", "None.")]
        return [_table(names, namespace) for namespace, names in sorted(data.items()) if names]


def setup(app):
    app.add_directive("flambeau-omissions", OmissionTables)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
