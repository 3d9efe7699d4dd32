"""``replace_pattern``: find every occurrence of a pattern graph and replace it with
another graph (``torch.fx.subgraph_rewriter``)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import NamedTuple

import flambeau

from ._symbolic_trace import symbolic_trace
from .graph import Graph
from .graph_module import GraphModule, _get_attr
from .node import Node

__all__ = ["Match", "replace_pattern", "replace_pattern_with_filters", "ReplacedPatterns"]


class Match(NamedTuple):
    """Where a pattern matched: the pattern's anchor (its last operation) and the
    pattern node -> graph node map.

    >>> import flambeau.fx as fx
    >>> gm = fx.symbolic_trace(lambda x: flambeau.relu(x) * 2)
    >>> [m] = fx.replace_pattern(gm, lambda x: flambeau.relu(x), lambda x: flambeau.sigmoid(x))
    >>> m.anchor.target is flambeau.relu, len(m.nodes_map)
    (True, 2)
    """

    anchor: flambeau.fx.Node  # (spelled out for the docs: flambeau.autograd has a Node too)
    nodes_map: dict


@dataclass
class ReplacedPatterns:
    """A match (as :class:`Match`) and the nodes that replaced it.

    >>> import flambeau.fx as fx
    >>> gm = fx.symbolic_trace(lambda x: flambeau.relu(x) * 2)
    >>> [r] = fx.subgraph_rewriter.replace_pattern_with_filters(
    ...     gm, lambda x: flambeau.relu(x), lambda x: flambeau.sigmoid(x))
    >>> [n.name for n in r.replacements]
    ['sigmoid']
    """

    anchor: flambeau.fx.Node
    nodes_map: dict
    replacements: list


@dataclass
class _InternalMatch:
    anchors: list
    nodes_map: dict = field(default_factory=dict)
    placeholder_nodes: list = field(default_factory=list)
    returning_nodes: list = field(default_factory=list)

    def __copy__(self):
        return _InternalMatch(self.anchors, dict(self.nodes_map), list(self.placeholder_nodes),
                              list(self.returning_nodes))  # fmt: skip


class _SubgraphMatcher:
    """Matches a pattern graph against a graph by walking use-def chains backwards from
    the pattern's anchors (the operations its output returns); pattern placeholders
    match anything."""

    def __init__(self, pattern: Graph, ignore_literals: bool = False):
        self.pattern = pattern
        self.ignore_literals = ignore_literals
        if len(pattern.nodes) == 0:
            raise ValueError("SubgraphMatcher cannot be initialized with an empty pattern")
        for node in pattern.nodes:
            if node.op != "output" and not node.is_impure() and len(node.users) == 0:
                raise AssertionError(
                    "SubgraphMatcher cannot be initialized with an pattern with dead code"
                )
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        output_node = next(iter(reversed(pattern.nodes)))
        self.pattern_returning_nodes = output_node.all_input_nodes
        self.pattern_anchors = [n for n in output_node.all_input_nodes if len(n.users) == 1]

    def _nodes_are_equal(self, pn: Node, gn: Node) -> bool:
        if pn.op == "placeholder":
            return True
        if pn.op != gn.op:
            return False
        if pn.op == "output":
            return True
        if pn.op == "get_attr":
            pv = _get_attr(pn.graph.owning_module, pn.target)
            gv = _get_attr(gn.graph.owning_module, gn.target)
            if type(pv) is not type(gv):
                return False
            if isinstance(pv, flambeau.Tensor):
                return True
            raise RuntimeError(f"Unsupported type {pv} when matching attributes")
        return pn.target == gn.target

    def _match_literals(self, pn, gn, match: _InternalMatch) -> bool:
        if isinstance(pn, Node):
            if isinstance(gn, Node) or pn.op != "placeholder":
                return False
            if pn in match.nodes_map:
                return match.nodes_map[pn] == gn
            match.nodes_map[pn] = gn
            return True
        if isinstance(gn, Node):
            return False
        return type(gn) is type(pn) and gn == pn

    def _match_nodes(self, pn: Node, gn: Node, match: _InternalMatch) -> bool:
        if pn in match.nodes_map:
            return match.nodes_map[pn] is gn
        if any(gn is v for v in match.nodes_map.values()):
            return False
        if not self._nodes_are_equal(pn, gn):
            return False
        saved = dict(match.nodes_map)
        match.nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True

        def match_args(a1, a2) -> bool:
            if len(a1) != len(a2):
                return False
            for x, y in zip(a1, a2):
                if isinstance(x, Node) and isinstance(y, Node):
                    ok = self._match_nodes(x, y, match)
                elif isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
                    ok = match_args(x, y)
                else:
                    ok = self._match_literals(x, y, match) or self.ignore_literals
                if not ok:
                    return False
            return True

        found = (
            len(pn.args) == len(gn.args)
            and list(pn.kwargs) == list(gn.kwargs)
            and match_args([*pn.args, *pn.kwargs.values()], [*gn.args, *gn.kwargs.values()])
        )
        if not found:
            match.nodes_map.clear()
            match.nodes_map.update(saved)
        return found

    def _is_contained(self, nodes_map: dict) -> bool:
        lookup = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        for gn, pn in lookup.items():
            if pn in self.pattern_returning_nodes:
                continue
            if any(user not in lookup for user in gn.users):
                return False
        return True

    def match(self, graph: Graph) -> list:
        candidates = {
            anchor: [n for n in graph.nodes if self._nodes_are_equal(anchor, n)]
            for anchor in self.pattern_anchors
        }
        anchors = list(candidates.items())
        matches: list = []

        def backtrack(i: int, match: _InternalMatch) -> None:
            if i == len(anchors):
                match.placeholder_nodes = [
                    match.nodes_map[pn] for pn in self.pattern_placeholder_nodes
                ]
                match.returning_nodes = [match.nodes_map[pn] for pn in self.pattern_returning_nodes]
                matches.append(match)
                return
            anchor, nodes = anchors[i]
            for node in nodes:
                attempt = copy.copy(match)
                if self._match_nodes(anchor, node, attempt):
                    backtrack(i + 1, attempt)

        if anchors:
            backtrack(0, _InternalMatch(anchors=self.pattern_anchors))
        matches = [m for m in matches if self._is_contained(m.nodes_map)]
        # Overlapping matches: the first one found wins.
        kept, taken = [], set()
        for m in matches:
            nodes = [gn for pn, gn in m.nodes_map.items() if pn.op not in ("placeholder", "output")]
            if any(gn in taken for gn in nodes):
                continue
            kept.append(m)
            taken.update(nodes)
        return kept


def _replace_attributes(gm: GraphModule, replacement) -> None:
    gm.delete_all_unused_submodules()
    if isinstance(replacement, GraphModule):
        replacement.graph.lint()

    def try_get_attr(mod, target):
        path, _, name = target.rpartition(".")
        try:
            sub = mod.get_submodule(path)
        except AttributeError:
            return None
        return getattr(sub, name, None)

    for node in gm.graph.nodes:
        if node.op in ("call_module", "get_attr"):
            if try_get_attr(gm, node.target) is not None:
                continue
            attr = try_get_attr(replacement, node.target)
            if attr is None:
                raise RuntimeError(
                    f'Attempted to create a "{node.op}" node during subgraph rewriting with '
                    f"target {node.target}, but the referenced attribute does not exist in the "
                    "replacement GraphModule"
                )
            new_attr = copy.deepcopy(attr)
            if isinstance(attr, flambeau.nn.Module):
                gm.add_submodule(node.target, new_attr)
            else:
                setattr(gm, node.target, new_attr)
    gm.graph.lint()


def replace_pattern(gm: GraphModule, pattern, replacement) -> list:
    """Replaces each non-overlapping occurrence of ``pattern`` (a function or
    GraphModule, traced) in ``gm``'s graph with ``replacement`` (the same number of
    inputs), then recompiles ``gm``. Matching follows use-def chains, not names; the
    pattern's inputs match any value, and the matched operations other than the returned
    ones must not be used outside the match. Returns a :class:`Match` per replacement.

    >>> import flambeau.fx as fx
    >>> def f(x, w1, w2):
    ...     return x + flambeau.cat([w1, w2]).sum()
    >>> def pattern(w1, w2):
    ...     return flambeau.cat([w1, w2])
    >>> def replacement(w1, w2):
    ...     return flambeau.stack([w1, w2])
    >>> gm = fx.symbolic_trace(f)
    >>> len(fx.replace_pattern(gm, pattern, replacement))
    1
    >>> print(gm.code.strip())
    def forward(self, x, w1, w2):
        stack = flambeau.stack([w1, w2]);  w1 = w2 = None
        sum_1 = stack.sum();  stack = None
        add = x + sum_1;  x = sum_1 = None
        return add
    """
    return [
        Match(anchor=m.anchor, nodes_map=m.nodes_map)
        for m in _replace_pattern(gm, pattern, replacement)
    ]


def replace_pattern_with_filters(gm: GraphModule, pattern, replacement=None, match_filters=None,
                                 ignore_literals: bool = False) -> list:  # fmt: skip
    """``replace_pattern`` keeping only the matches for which every
    ``match_filter(match, original_graph, pattern_graph)`` is true; with
    ``ignore_literals``, constants in the pattern match any constant. Returns
    :class:`ReplacedPatterns`.

    >>> import flambeau.fx as fx
    >>> gm = fx.symbolic_trace(lambda x: (x + 1) * (x + 2))
    >>> out = fx.subgraph_rewriter.replace_pattern_with_filters(
    ...     gm, lambda x: x + 1, lambda x: x - 1, ignore_literals=True)
    >>> len(out), gm(flambeau.tensor([3.0]))
    (2, tensor([4.]))
    """
    return _replace_pattern(gm, pattern, replacement, match_filters, ignore_literals)


def _as_graph(obj) -> Graph:
    if isinstance(obj, GraphModule):
        return obj.graph
    if isinstance(obj, Graph):
        return obj
    return symbolic_trace(obj).graph


def _replace_pattern(gm, pattern, replacement, match_filters=None, ignore_literals=False) -> list:
    original_graph = gm.graph
    pattern_graph = _as_graph(pattern)
    matcher = _SubgraphMatcher(pattern_graph, ignore_literals=ignore_literals)
    matches = [
        m
        for m in matcher.match(original_graph)
        if all(f(m, original_graph, pattern_graph) for f in (match_filters or ()))
    ]
    replacement_graph = _as_graph(replacement)
    changed: dict = {}  # returning nodes of earlier matches -> their replacements
    results = []
    for match in matches:
        placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
        if len(match.placeholder_nodes) != len(placeholders):
            raise AssertionError(
                f"Placeholder count mismatch: {len(match.placeholder_nodes)} vs {len(placeholders)}"
            )
        val_map: dict = {}
        for rn, gn in zip(placeholders, match.placeholder_nodes):
            if isinstance(gn, Node):
                val_map[rn] = changed.get(gn, gn)
                if val_map[rn] is not gn:
                    i = match.placeholder_nodes.index(gn)
                    match.placeholder_nodes[i] = val_map[rn]
                    for pn, mapped in list(match.nodes_map.items()):
                        if mapped is gn:
                            match.nodes_map[pn] = val_map[rn]
            else:
                val_map[rn] = gn
        # Insert before the first user of the returned values (or after the match).
        users = {u for n in match.returning_nodes for u in n.users}
        insert_point = next((n for n in original_graph.nodes if n in users), None)
        if insert_point is None:
            last = None
            for n in reversed(original_graph.nodes):
                if n in match.returning_nodes:
                    insert_point = last
                    break
                last = n
        with original_graph.inserting_before(insert_point):
            copied = original_graph.graph_copy(replacement_graph, val_map)
        if isinstance(copied, Node):
            copied = (copied,)
        replacements = [v for v in val_map.values() if v not in match.placeholder_nodes]
        if len(match.returning_nodes) != len(copied):
            raise AssertionError(
                f"Returning nodes count mismatch: {len(match.returning_nodes)} vs {len(copied)}"
            )
        for gn, new in zip(match.returning_nodes, copied):
            gn.replace_all_uses_with(new)
            changed[gn] = new
        for node in reversed(pattern_graph.nodes):
            if node.op not in ("placeholder", "output"):
                gm.graph.erase_node(match.nodes_map[node])
        results.append(ReplacedPatterns(match.anchors[0], match.nodes_map, replacements))
    gm.recompile()
    if isinstance(replacement, flambeau.nn.Module):
        _replace_attributes(gm, replacement)
    return results
