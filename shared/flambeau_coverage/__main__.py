"""python -m flambeau_coverage: torch's public names that flambeau has and lacks."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

from .names import public_names
from .namespaces import NAMESPACES, Namespace

HERE = Path(__file__).parent
OMISSIONS = HERE / "omissions.toml"
PRESENT = HERE / "present.txt"


def load_omissions() -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """(omitted, elsewhere): namespace -> {name: reason}."""
    data = tomllib.loads(OMISSIONS.read_text())
    unknown = set(data) - {"omitted", "elsewhere"}
    if unknown:
        raise SystemExit(f"{OMISSIONS}: unknown tables {sorted(unknown)}")
    known = {ns.name for ns in NAMESPACES}
    for kind in ("omitted", "elsewhere"):
        if bad := set(data.get(kind, {})) - known:
            raise SystemExit(f"{OMISSIONS}: [{kind}] names unknown namespaces {sorted(bad)}")
    return data.get("omitted", {}), data.get("elsewhere", {})


def measure(ns: Namespace, elsewhere: dict[str, str]):
    """(torch's counted names, the ones flambeau has, the names left out as elsewhere)."""
    import torch

    theirs = public_names(ns.resolve("torch"), torch)
    away = theirs & set(elsewhere)
    counted = theirs - away
    # flambeau has a name when the attribute exists (its docstring is the docs' business).
    mine = ns.resolve("flambeau")
    have = {name for name in counted if mine is not None and _has(mine, name)}
    return counted, have, away


def _has(namespace, name: str) -> bool:
    try:
        getattr(namespace, name)
    except AttributeError:
        return False
    except Exception:  # it exists, but fails to load: present, and a test will say why
        return True
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m flambeau_coverage", description=__doc__)
    p.add_argument("--missing", action="store_true", help="list every missing name")
    p.add_argument("--only", help="only this namespace (as after 'torch.'; '' for torch)")
    p.add_argument("--write-present", action="store_true", help=f"rewrite {PRESENT.name}")
    p.add_argument("--check", action="store_true", help="fail when a target is not met")
    args = p.parse_args(argv)

    omitted, elsewhere = load_omissions()
    present_lines, failures = [], []
    print(f"{'namespace':24} {'torch':>6} {'flambeau':>9} {'covered':>8} {'target':>7}")
    for ns in NAMESPACES:
        if args.only is not None and ns.name != args.only:
            continue
        counted, have, away = measure(ns, elsewhere.get(ns.name, {}))
        share = len(have) / len(counted) if counted else 1.0
        mark = "" if share >= ns.target else "  below target"
        print(
            f"{ns.title:24} {len(counted):6d} {len(have):9d} {share:8.1%} {ns.target:7.0%}"
            f"{mark}" + (f"  ({len(away)} elsewhere)" if away else "")
        )
        if share < ns.target:
            failures.append(ns.title)
        present_lines += [f"{ns.name or '.'} {name}" for name in sorted(have)]
        missing = counted - have
        if args.missing and missing:
            mine_omitted = omitted.get(ns.name, {})
            for name in sorted(missing):
                why = mine_omitted.get(name)
                print(f"    {name}" + (f"  (omitted: {why})" if why else ""))
        if stale := set(omitted.get(ns.name, {})) & have:
            print(f"    listed as omitted but present: {sorted(stale)}")
    if args.write_present:
        PRESENT.write_text(
            "# Names of torch's API that flambeau has (python -m flambeau_coverage "
            "--write-present).\n# A test keeps each one present; a line is "
            "'<namespace> <name>', '.' being torch itself.\n" + "\n".join(present_lines) + "\n"
        )
        print(f"wrote {PRESENT}")
    if args.check and failures:
        print("below target: " + ", ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
