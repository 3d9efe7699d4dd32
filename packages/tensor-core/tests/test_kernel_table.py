"""The kernel table (kernels/table.yaml): every CPU kernel is declared there, the
plugin header generated from it is current, and codegen rejects bad entries."""

from __future__ import annotations

import copy
import importlib.util
import os
import re
from pathlib import Path

import pytest

import flambeau
from flambeau import _C

CODEGEN = Path(__file__).resolve().parents[1] / "codegen" / "gen_kernels.py"
pytestmark = pytest.mark.skipif(
    not CODEGEN.exists(), reason="the source tree's codegen is not here"
)


@pytest.fixture(scope="module")
def gen():
    yaml = pytest.importorskip("yaml")
    spec = importlib.util.spec_from_file_location("gen_kernels", CODEGEN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.raw = yaml.safe_load(module.TABLE.read_text())
    return module


def test_the_cpu_registers_exactly_the_declared_kernels(gen):
    table = gen.Table(copy.deepcopy(gen.raw))
    assert set(_C._operators_with_kernel("cpu")) == set(table.kernels)


def test_the_plugin_header_is_current(gen):
    table = gen.Table(copy.deepcopy(gen.raw))
    assert gen.ABI_HEADER.read_text() == gen.gen_abi_header(table)
    shipped = Path(flambeau.get_include()) / "flambeau" / "backend_kernels.h"
    assert shipped.read_text() == gen.ABI_HEADER.read_text()
    assert '#include "backend_kernels.h"' in (shipped.parent / "backend_abi.h").read_text()


def test_the_header_says_where_each_argument_goes(gen):
    # Comments wrap at clang-format's column limit: read them as one line each.
    text = re.sub(r"\n \*\s+", " ", gen.ABI_HEADER.read_text())
    assert "/* AvgPool: tensors [out, input]; structs [flb_pool_geometry g]" in text
    assert (
        "/* Var: tensors [var_out, mean_out?, in]; scalars [correction]; ints [dims..., take_sqrt]"
        in text
    )
    assert (
        "/* IndexScatter: tensors [dst, src, indices]; ints [accumulate]; result in *int_result"
        in text
    )
    # A struct's tensor fields go to the tensor list, after the arguments before them.
    assert (
        "tensors [p.q, p.k, p.v, p.mask, out, logsumexp]; structs [flb_attention_problem p]" in text
    )
    assert "int64_t n_batch_sizes;\n  const int64_t* batch_sizes;" in text


def _mutate(raw, path, value):
    raw = copy.deepcopy(raw)
    node = raw
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return raw


@pytest.mark.parametrize(
    "path,value,message",
    [
        (("kernel",), [], "unknown keys ['kernel']"),
        (("signatures", "Bmm", "kernal"), ["bmm2"], "signature Bmm: unknown keys ['kernal']"),
        (("signatures", "Bmm", "type"), "void(Tensor out, Tensr a)", "unknown type 'Tensr'"),
        (("signatures", "Bmm", "type"), "float(Tensor out)", "cannot read type"),
        (("signatures", "Bmm", "kernels"), ["bmm", "add"], "kernel 'add' declared twice"),
        (("signatures", "Bmm", "kernels"), ["bmm", "max_other"], "map to one tag 'max_other'"),
        (("signatures", "Bmm", "kernels"), ["bmm", "no-dash"], "is not an identifier"),
        (("structs", "PoolGeometry", "fields"), "int planes, vec3 in", "unknown type 'vec3'"),
        (
            ("structs", "PoolGeometry", "headers"),
            "x.h",
            "struct PoolGeometry: unknown keys ['headers']",
        ),
    ],
)
def test_codegen_rejects_bad_entries(gen, path, value, message):
    with pytest.raises(gen.TableError, match=None) as e:
        gen.Table(_mutate(gen.raw, path, value))
    assert message in str(e.value), str(e.value)


def test_codegen_refuses_a_stale_header(gen, tmp_path, monkeypatch):
    stale = tmp_path / "backend_kernels.h"
    stale.write_text("/* old */\n")
    monkeypatch.setattr(gen, "ABI_HEADER", stale)
    monkeypatch.setattr("sys.argv", ["gen_kernels.py", "--out", os.fspath(tmp_path / "out")])
    assert gen.main() == 1
    assert not (tmp_path / "out").exists()
    monkeypatch.setattr(
        "sys.argv", ["gen_kernels.py", "--update", "--out", os.fspath(tmp_path / "out")]
    )
    assert gen.main() == 0
    assert (tmp_path / "out" / "kernels.h").exists() and stale.read_text().startswith(
        "/* The kernels"
    )
