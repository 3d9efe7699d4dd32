"""The text table Compare prints for the measurements of one label: a row per
(thread count, env, sub-label or statement), a column per description, grouped by
thread count, with medians in one time unit. The layout is PyTorch's, character for
character."""

import enum

import flambeau
from flambeau.utils.benchmark.utils.common import select_unit, trim_sigfig, unit_to_english

# ANSI escapes of the colorized table.
BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"

CELL_SEPARATOR = "  |  "
HIGH_VARIANCE_NOTE = "(! XX%) Measurement has high variance, where XX is the IQR / median * 100."


class Colorize(enum.Enum):
    """How Compare colors medians: not at all, against the best of their column (within
    a thread-count group), or against the best of their row.

    >>> from flambeau.utils.benchmark import Colorize
    >>> Colorize.ROWWISE.value
    'rowwise'
    """

    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _env_name(m) -> str:
    # PyTorch fails on a mix of set and unset envs; flambeau names the unset one.
    return "Unspecified env" if m.env is None else m.env


def _row_key(m):
    return m.num_threads, _env_name(m), m.as_row_name


class _ColumnFormat:
    """How one column writes its medians: a shared width and number of decimals, so
    that the decimal points line up."""

    def __init__(self, results, time_scale, trim_significant_figures, highlight_warnings):
        present = [m for m in results if m is not None]
        self._trim = trim_significant_figures
        self._highlight = highlight_warnings and any(m.has_warnings for m in present)
        # In the default dtype, as PyTorch computes it (see common._scalar).
        integer_digits = [
            int(flambeau.tensor(m.median / time_scale).log10().ceil()) for m in present
        ]
        if trim_significant_figures:
            # As many decimals as the least precise median supports.
            decimals = min(
                max(m.significant_figures - digits, 0)
                for m, digits in zip(present, integer_digits, strict=True)
            )
        else:
            decimals = 1
        width = max(integer_digits) + decimals + (1 if decimals else 0)
        self._number_format = f"{{:>{width}.{decimals}f}}"
        self._spread_width = 7 if self._highlight else 0

    def cell(self, value, significant_figures, spread):
        """The median (in the table's unit), with its spread when it is flagged."""
        if self._trim:
            value = trim_sigfig(value, significant_figures)
        note = f" (! {spread * 100:.0f}%)" if self._highlight and spread is not None else ""
        return self._number_format.format(value) + f"{note:>{self._spread_width}}"

    def blank(self):
        """An empty cell as wide as a filled one."""
        return " " * len(self.cell(1, 1, None))


def _color(cell, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + cell + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + cell + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + cell + TERMINATE * 2
    if value >= best * 2:
        return BAD + cell + TERMINATE * 2
    return cell


def render_table(results, colorize, trim_significant_figures, highlight_warnings) -> str:
    """The table of ``results`` (merged measurements sharing one label)."""
    unit, scale = select_unit(min(m.median for m in results))

    # Rows keep the order in which they first appear, within ascending thread counts
    # (and envs); columns keep the order of their descriptions.
    row_keys = list(dict.fromkeys(_row_key(m) for m in results))
    row_keys.sort(key=lambda key: key[:2])
    column_keys = list(dict.fromkeys(m.description for m in results))
    grid = {(_row_key(m), m.description): m for m in results}
    rows = [[grid.get((r, c)) for c in column_keys] for r in row_keys]

    # A group is the rows of one thread count; column-wise colors compare within it.
    group_of_row, groups = [], []
    for i, (threads, _, _) in enumerate(row_keys):
        if i == 0 or threads != row_keys[i - 1][0]:
            groups.append([])
        groups[-1].append(i)
        group_of_row.append(len(groups) - 1)

    formats = [
        _ColumnFormat([row[j] for row in rows], scale, trim_significant_figures, highlight_warnings)
        for j in range(len(column_keys))
    ]

    envs = {_env_name(m) for m in results}
    show_env = len(envs) > 1
    env_width = max(len(e) for e in envs) + 4 if show_env else 4

    text_rows = [[""] + ["" if c is None else c for c in column_keys]]
    for i, row in enumerate(rows):
        threads, env, name = row_keys[i]
        # An env is written on the first row of each run of rows that share it.
        previous_env = "" if i == groups[group_of_row[i]][0] else row_keys[i - 1][1]
        new_env = show_env and env != previous_env
        cells = ["  " + (f"({env})" if new_env else "").ljust(env_width) + name]
        for m, fmt in zip(row, formats, strict=True):
            if m is None:
                cells.append(fmt.blank())
            else:
                spread = m.iqr / m.median if m.has_warnings else None
                cells.append(fmt.cell(m.median / scale, m.significant_figures, spread))
        text_rows.append(cells)

    widths = [max(len(r[j]) for r in text_rows) for j in range(len(text_rows[0]))]
    header = CELL_SEPARATOR.join(c.center(w) for c, w in zip(text_rows[0], widths, strict=True))
    lines = [header]
    for i, (cells, row) in enumerate(zip(text_rows[1:], rows, strict=True)):
        group = groups[group_of_row[i]]
        if i == group[0]:
            lines.append(f"{row_keys[i][0]} threads: ".ljust(len(header), "-"))
        best = _best_values(row, [[rows[k][j] for k in group] for j in range(len(row))], colorize)
        out = [cells[0].ljust(widths[0])]
        for cell, width, m, best_value in zip(cells[1:], widths[1:], row, best, strict=True):
            cell = cell.center(width)
            if colorize != Colorize.NONE and m is not None and best_value is not None:
                cell = _color(cell, m.median, best_value)
            out.append(cell)
        lines.append(CELL_SEPARATOR.join(out))

    label = results[0].label
    title = f"[{(' ' + (label or '') + ' ').center(len(header) - 2, '-')}]"
    footer = f"Times are in {unit_to_english(unit)}s ({unit})."
    text = "\n".join([title, *lines, "", footer]) + "\n"
    if highlight_warnings and any(m.has_warnings for m in results):
        text += HIGH_VARIANCE_NOTE + "\n"
    return text


def _best_values(row, columns_in_group, colorize):
    """The median each cell of ``row`` is colored against (None: not colored)."""
    if colorize == Colorize.ROWWISE:
        best = min(m.median for m in row if m is not None)
        return [best] * len(row)
    if colorize == Colorize.COLUMNWISE:
        return [
            min((m.median for m in column if m is not None), default=None)
            for column in columns_in_group
        ]
    return [None] * len(row)
