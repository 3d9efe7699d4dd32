"""Generate the typed kernel glue from the kernel table (kernels/table.yaml).

Writes, into --out:

* ``generated/kernel_signatures.h``: ``using <Name>Kernel = ...;`` for every
  signature (the argument structs and enums forward-declared, so any header may
  include it);
* ``generated/kernels.h``: ``kernels::<name>``, one tag per kernel (its name and
  ``Fn`` type), which ``FLB_REGISTER_KERNEL`` and ``kernel<K>(device)`` take, so
  a kernel of the wrong signature does not compile;
* ``generated/kernel_abi.cpp``: the conversion of every argument struct to its
  C form for backend plugins, and the list of kernel names.

and checks (or with --update writes) the plugin header
``src/flambeau/include/flambeau/backend_kernels.h``: the C structs and, per
kernel, how its arguments cross the ABI. Unknown keys, types or names fail.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
TABLE = HERE.parent / "kernels" / "table.yaml"
ABI_HEADER = HERE.parent / "src" / "flambeau" / "include" / "flambeau" / "backend_kernels.h"

# Argument types of the table: (C++ parameter type, ABI list it goes to).
CORE_TYPES = {
    "Tensor": ("const Tensor&", "tensors"),
    "Tensor?": ("const Tensor&", "tensors"),  # may be undefined: an absent flb_tensor
    "Tensor*": ("const Tensor*", "tensors"),  # may be null: an absent flb_tensor
    "Tensor[]": ("Span<Tensor>", "tensors"),
    "Scalar": ("const Scalar&", "scalars"),
    "Scalar[]": ("Span<Scalar>", "scalars"),
    "float": ("double", "scalars"),
    "int": ("int64_t", "ints"),
    "uint": ("uint64_t", "ints"),
    "bool": ("bool", "ints"),
    "char": ("char", "ints"),
    "int[]": ("IntList", "ints"),
    "Generator": ("Generator&", "generator"),
}
# Field types of argument structs: C++ member access -> C member declaration.
FIELD_C = {
    "int": "int64_t",
    "uint": "uint64_t",
    "bool": "int64_t",
    "float": "double",
    "str": "const char*",
}
RETURNS = {
    "void": "void",
    "Tensor": "Tensor",
    "int": "int64_t",
    "(Tensor, Tensor, Tensor)": "std::tuple<Tensor, Tensor, Tensor>",
}
TOP_KEYS = {"enums", "structs", "signatures"}
STRUCT_KEYS = {"header", "fields"}
SIGNATURE_KEYS = {"doc", "type", "kernels"}
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class TableError(Exception):
    pass


def check_keys(where: str, entry: dict, allowed: set[str], required: set[str]) -> None:
    if not isinstance(entry, dict):
        raise TableError(f"{where}: expected a mapping")
    unknown = set(entry) - allowed
    if unknown:
        raise TableError(f"{where}: unknown keys {sorted(unknown)}")
    missing = required - set(entry)
    if missing:
        raise TableError(f"{where}: missing keys {sorted(missing)}")


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Table:
    def __init__(self, data: dict):
        check_keys("kernels/table.yaml", data, TOP_KEYS, TOP_KEYS)
        self.enums: dict[str, str] = dict(data["enums"])
        self.structs: dict[str, dict] = {}
        for name, s in data["structs"].items():
            check_keys(f"struct {name}", s, STRUCT_KEYS, STRUCT_KEYS)
            fields = [f for f in s["fields"].split(",") if f.strip()]
            self.structs[name] = {
                "header": s["header"],
                "fields": [self.field(name, f) for f in fields],
            }
        self.signatures: dict[str, dict] = {}
        self.kernels: dict[str, str] = {}
        for name, sig in data["signatures"].items():
            check_keys(f"signature {name}", sig, SIGNATURE_KEYS, {"type", "kernels"})
            ret, args = self.parse_type(name, sig["type"])
            self.signatures[name] = {"doc": sig.get("doc", ""), "returns": ret, "args": args}
            for k in sig["kernels"]:
                if k in self.kernels:
                    raise TableError(f"kernel {k!r} declared twice ({self.kernels[k]}, {name})")
                if not IDENT.match(k.replace(".", "_")):
                    raise TableError(
                        f"kernel name {k!r} is not an identifier (a '.' may mark an overload)"
                    )
                self.kernels[k] = name
        tags = {}
        for k in self.kernels:
            tag = tag_of(k)
            if tag in tags:
                raise TableError(f"kernels {tags[tag]!r} and {k!r} map to one tag {tag!r}")
            tags[tag] = k

    def field(self, struct: str, text: str) -> tuple[str, str, int | None]:
        m = re.match(r"^(\w+)(\[(\d*)\])?\s+(\w+)$", text.strip())
        if not m:
            raise TableError(f"struct {struct}: cannot read field {text!r}")
        base, array, count, name = m.group(1), m.group(2), m.group(3), m.group(4)
        if (
            base not in FIELD_C
            and base != "Tensor"
            and base not in self.enums
            and base not in self.structs
        ):
            raise TableError(f"struct {struct}: field {name} has unknown type {base!r}")
        n = None if not array else (int(count) if count else 0)  # 0: a vector
        return base, name, n

    def parse_type(self, sig: str, text: str) -> tuple[str, list[tuple[str, str]]]:
        m = re.match(r"^(void|Tensor|int|\(Tensor, Tensor, Tensor\))\((.*)\)$", text.strip())
        if not m:
            raise TableError(f"signature {sig}: cannot read type {text!r}")
        args = []
        for part in filter(None, (p.strip() for p in m.group(2).split(","))):
            t, _, name = part.rpartition(" ")
            if not (t in CORE_TYPES or t in self.enums or t in self.structs):
                raise TableError(f"signature {sig}: argument {name} has unknown type {t!r}")
            args.append((t, name))
        return m.group(1), args

    def cpp_arg(self, t: str) -> str:
        if t in CORE_TYPES:
            return CORE_TYPES[t][0]
        return t if t in self.enums else f"const {t}&"

    def cpp_type(self, sig: str) -> str:
        s = self.signatures[sig]
        args = ", ".join(f"{self.cpp_arg(t)} {n}" for t, n in s["args"])
        return f"{RETURNS[s['returns']]}({args})"


def tag_of(kernel: str) -> str:
    return kernel.replace(".", "_")


def c_struct(name: str) -> str:
    return f"flb_{snake(name)}"


# ---- C header for plugins -------------------------------------------------------------


def c_fields(table: Table, struct: str) -> list[str]:
    out = []
    for base, name, n in table.structs[struct]["fields"]:
        if base == "Tensor":
            out.append(f"int32_t {name};")
        elif base in table.structs:
            out.append(f"{c_struct(base)} {name}{f'[{n}]' if n else ''};")
        else:
            ctype = "int64_t" if base in table.enums else FIELD_C[base]
            if n == 0:
                out.append(f"int64_t n_{name};")
                out.append(f"const {ctype}* {name};")
            else:
                out.append(f"{ctype} {name}{f'[{n}]' if n else ''};")
    return out


def abi_layout(table: Table, sig: str) -> str:
    """How one signature's arguments fill flb_kernel_call, in words."""
    lists: dict[str, list[str]] = {"tensors": [], "scalars": [], "ints": [], "structs": []}
    gen = False

    def struct_tensors(struct: str, prefix: str) -> None:
        for base, name, n in table.structs[struct]["fields"]:
            if base == "Tensor":
                lists["tensors"].append(f"{prefix}{name}")
            elif base in table.structs:
                for i in range(n or 1):
                    struct_tensors(base, f"{prefix}{name}{f'[{i}]' if n else ''}.")

    for t, name in table.signatures[sig]["args"]:
        if t in table.structs:
            lists["structs"].append(f"{c_struct(t)} {name}")
            struct_tensors(t, f"{name}.")
        elif t in table.enums:
            lists["ints"].append(f"{name} ({t})")
        elif CORE_TYPES[t][1] == "generator":
            gen = True
        else:
            suffix = "..." if t.endswith("[]") else ("?" if t in ("Tensor?", "Tensor*") else "")
            lists[CORE_TYPES[t][1]].append(name + suffix)
    parts = [f"{k} [{', '.join(v)}]" for k, v in lists.items() if v]
    if gen:
        parts.append("generator")
    ret = table.signatures[sig]["returns"]
    if ret == "int":
        parts.append("result in *int_result")
    return "; ".join(parts)


def gen_abi_header(table: Table) -> str:
    lines = [
        "/* The kernels a flambeau backend may provide, and the C form of their arguments.",
        " * Generated by packages/tensor-core/codegen/gen_kernels.py from kernels/table.yaml:",
        " * do not edit. Included by backend_abi.h. */",
        "#ifndef FLAMBEAU_BACKEND_KERNELS_H_",
        "#define FLAMBEAU_BACKEND_KERNELS_H_",
        "",
        "#include <stdint.h>",
        "",
        "/* Argument structs: a kernel's i-th struct argument is call->structs[i], of the",
        " * type below. Enums and bools are int64_t; int[]/float[] are a count and a",
        " * pointer valid for the call. An int32_t field named after a tensor of the C++",
        " * struct is that tensor's position in call->tensors (an absent tensor there",
        " * when it is undefined). */",
    ]
    for struct in table.structs:
        lines.append(f"typedef struct {c_struct(struct)} {{")
        lines += [f"  {f}" for f in c_fields(table, struct)]
        lines.append(f"}} {c_struct(struct)};")
        lines.append("")
    lines.append("/* Kernels by signature: how each one's arguments fill flb_kernel_call. Absent")
    lines.append(" * tensors (marked ?) have data NULL and ndim -1; a list (...) contributes its")
    lines.append(" * elements in order. Kernels returning a tensor run on the CPU (see")
    lines.append(" * docs/design/backends.rst). */")
    for sig, s in table.signatures.items():
        names = ", ".join(k for k, v in table.kernels.items() if v == sig)
        block = textwrap.wrap(f"{sig}: {abi_layout(table, sig)}", 94)
        block[1:] = ["  " + line for line in block[1:]]
        if s["doc"]:
            block += ["  " + line for line in textwrap.wrap(s["doc"], 92)]
        block += ["  " + line for line in textwrap.wrap(names, 92)]
        # Lines within clang-format's column limit, so that it leaves them as they are.
        lines.append(f"/* {block[0]}")
        lines += [f" * {line}" for line in block[1:]]
        lines[-1] += " */"
    lines += ["", "#endif /* FLAMBEAU_BACKEND_KERNELS_H_ */", ""]
    return "\n".join(lines)


# ---- C++ ------------------------------------------------------------------------------


def gen_signatures(table: Table) -> str:
    lines = [
        "// Generated by codegen/gen_kernels.py from kernels/table.yaml: do not edit.",
        "#pragma once",
        "#include <cstdint>",
        "#include <tuple>",
        "",
        '#include "core/generator.h"',
        '#include "core/scalar.h"',
        '#include "core/tensor.h"',
        "",
        "namespace flambeau {",
        "",
    ]
    lines += [f"enum class {e} : {u};" for e, u in table.enums.items()]
    lines += [f"struct {s};" for s in table.structs]
    lines.append("")
    for sig, s in table.signatures.items():
        if s["doc"]:
            lines.append(f"// {s['doc']}")
        lines.append(f"using {sig}Kernel = {table.cpp_type(sig)};")
    lines += ["", "}  // namespace flambeau", ""]
    return "\n".join(lines)


def gen_tags(table: Table) -> str:
    lines = [
        "// Generated by codegen/gen_kernels.py from kernels/table.yaml: do not edit.",
        "// One tag per kernel: FLB_REGISTER_KERNEL(add, kCPU, fn) and "
        "kernel<kernels::add>(device)",
        "// take it, so a kernel of another signature does not compile.",
        "#pragma once",
        '#include "dispatch/dispatcher.h"',
        '#include "generated/kernel_signatures.h"',
        "",
        "namespace flambeau::kernels {",
        "",
    ]
    for k, sig in table.kernels.items():
        body = f'static constexpr const char* name = "{k}"; using Fn = {sig}Kernel;'
        lines.append(f"struct {tag_of(k)} {{ {body} }};")
    lines += ["", "}  // namespace flambeau::kernels", ""]
    return "\n".join(lines)


def fill_body(table: Table, struct: str) -> list[str]:
    fields = table.structs[struct]["fields"]
    names = ", ".join(f"f{i}" for i in range(len(fields)))
    lines = [
        f"void fill(ForeignCall& call, {c_struct(struct)}& c, const {struct}& s) {{",
        f"  // The table lists every data member of {struct}: the binding fails otherwise.",
        f"  [[maybe_unused]] const auto& [{names}] = s;",
    ]
    for base, name, n in fields:
        if base == "Tensor":
            lines.append(f"  c.{name} = call.add_tensor_at(s.{name});")
        elif base in table.structs:
            if n:
                lines.append(
                    f"  for (int i = 0; i < {n}; ++i) fill(call, c.{name}[i], s.{name}[i]);"
                )
            else:
                lines.append(f"  fill(call, c.{name}, s.{name});")
        elif n == 0:
            lines.append(f"  c.n_{name} = static_cast<int64_t>(s.{name}.size());")
            lines.append(f"  c.{name} = s.{name}.data();")
        elif n:
            lines.append(f"  for (int i = 0; i < {n}; ++i) c.{name}[i] = s.{name}[i];")
        else:
            cast = "int64_t" if (base in table.enums or base == "bool") else None
            lines.append(
                f"  c.{name} = {f'static_cast<{cast}>(s.{name})' if cast else f's.{name}'};"
            )
    lines.append("}")
    return lines


def gen_abi_cpp(table: Table) -> str:
    headers = sorted({s["header"] for s in table.structs.values()})
    lines = [
        "// Generated by codegen/gen_kernels.py from kernels/table.yaml: do not edit.",
        "// The C form of the kernels' argument structs, for backend plugins.",
        "#include <cstring>",
        "#include <utility>",
        "",
        '#include "plugin/foreign_call.h"',
    ]
    lines += [f'#include "{h}"' for h in headers]
    lines += ["", "namespace flambeau {", "", "namespace {", ""]
    # Nested structs first: a struct's fill may call those of its fields.
    order: list[str] = []

    def visit(s: str) -> None:
        for base, _, _ in table.structs[s]["fields"]:
            if base in table.structs and base not in order:
                visit(base)
        if s not in order:
            order.append(s)

    for s in table.structs:
        visit(s)
    for s in order:
        lines += fill_body(table, s) + [""]
    lines += ["}  // namespace", ""]
    for s in table.structs:
        lines += [
            f"void ForeignCall::add(const {s}& s) {{",
            f"  auto& c = hold<{c_struct(s)}>();",
            "  fill(*this, c, s);",
            "  structs_.push_back(&c);",
            "}",
            "",
        ]
    host = {
        k
        for k, sig in table.kernels.items()
        if table.signatures[sig]["returns"] in ("Tensor", "(Tensor, Tensor, Tensor)")
    }
    lines.append("KernelForm kernel_form(const char* name) {")
    lines.append("  static const std::pair<const char*, KernelForm> kernels[] = {")
    lines += [
        f'      {{"{k}", KernelForm::{"kHostOnly" if k in host else "kC"}}},'
        for k in sorted(table.kernels)
    ]
    lines.append("  };")
    lines.append("  for (const auto& [n, form] : kernels)")
    lines.append("    if (std::strcmp(n, name) == 0) return form;")
    lines.append("  return KernelForm::kUnknown;")
    lines.append("}")
    lines += ["", "}  // namespace flambeau", ""]
    return "\n".join(lines)


def gen_foreign_decls(table: Table) -> str:
    lines = [
        "// Generated by codegen/gen_kernels.py from kernels/table.yaml: do not edit.",
        "// Included inside class ForeignCall (plugin/foreign_call.h).",
    ]
    lines += [f"void add(const {s}& s);" for s in table.structs]
    return "\n".join(lines) + "\n"


def write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, help="directory that receives generated/")
    ap.add_argument(
        "--update", action="store_true", help="rewrite the plugin header backend_kernels.h"
    )
    args = ap.parse_args()
    try:
        table = Table(yaml.safe_load(TABLE.read_text()))
    except TableError as e:
        print(f"kernels/table.yaml: {e}", file=sys.stderr)
        return 1
    header = gen_abi_header(table)
    if args.update:
        write_if_changed(ABI_HEADER, header)
    elif not ABI_HEADER.exists() or ABI_HEADER.read_text() != header:
        print(
            f"{ABI_HEADER} is out of date with kernels/table.yaml: run "
            "python packages/tensor-core/codegen/gen_kernels.py --update",
            file=sys.stderr,
        )
        return 1
    if args.out:
        gen = args.out
        gen.mkdir(parents=True, exist_ok=True)
        write_if_changed(gen / "kernel_signatures.h", gen_signatures(table))
        write_if_changed(gen / "kernels.h", gen_tags(table))
        write_if_changed(gen / "kernel_abi.cpp", gen_abi_cpp(table))
        write_if_changed(gen / "foreign_call_structs.inc", gen_foreign_decls(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
