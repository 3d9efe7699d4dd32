"""Generate the C++ side of the operator table.

Reads ops/*.yaml (the one declaration of every operator) and writes:

* ``ops.h``: the C++ declaration each operator's frontend must implement
  (``flambeau::ops::<name>``), so the table and the code cannot drift apart;
* ``op_bindings.cpp``: the Python bindings (functions, Tensor methods, in-place
  ``op_`` methods, ``out=``, Python operators), each a thin shim that parses
  arguments, offers the call to the autograd slot, and calls the frontend;
  plus the runtime copy of the table behind ``flambeau.ops_table()``.

Table entry keys: func (schema), category, doc, variants (function/method),
inplace (bool), out (true: the frontend takes the out= destination; copy: the binding
writes the frontend's result into out=, for operators whose kernels gain nothing from
writing in place), dunder (list), python_name (optional),
nondeterministic (device types whose kernels are not deterministic),
nondeterministic_if (the argument condition under which they are not),
autocast (how autocast casts the floating-point arguments: lower_precision_fp,
fp32 or promote) and view (the outputs are views of the first input: PyTorch's
``_base``). Any other key is an error.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

CPP_PARAM = {
    "Tensor": ("const Tensor&", "tensor"),
    "Tensor?": ("const Tensor&", "tensor_or_null"),
    "Tensor[]": ("const std::vector<Tensor>&", "tensors"),
    "Tensor?[]": ("const std::vector<Tensor>&", "optional_tensors"),  # None -> null Tensor
    "Scalar": ("const Scalar&", "scalar"),
    "Scalar?": ("const std::optional<Scalar>&", "scalar_opt"),
    "Scalar[]": ("const std::vector<Scalar>&", "scalars"),
    "int": ("int64_t", "int64"),
    "int?": ("std::optional<int64_t>", "int64_opt"),
    "int[]": ("IntList", "intlist"),
    "int[]?": ("const std::optional<DimVector>&", "intlist_opt"),
    "float": ("double", "f64"),
    "float?": ("std::optional<double>", "f64_opt"),
    "bool": ("bool", "boolean"),
    "bool?": ("std::optional<bool>", "bool_opt"),
    "str": ("const std::string&", "string"),
    "str?": ("const std::optional<std::string>&", "string_opt"),
    "ScalarType": ("ScalarType", "dtype"),
    "ScalarType?": ("std::optional<ScalarType>", "dtype_opt"),
    "Device?": ("std::optional<Device>", "device_opt"),
    "Generator?": ("Generator*", "generator"),
    # None (MemoryFormat?) reaches the frontend as MemoryFormat::Preserve, as in PyTorch.
    "MemoryFormat": ("MemoryFormat", "memory_format"),
    "MemoryFormat?": ("MemoryFormat", "memory_format"),
}

CPP_RETURN = {
    "Tensor": "Tensor",
    "Tensor[]": "std::vector<Tensor>",
    "bool": "bool",
    "int": "int64_t",
    "float": "double",
    "Scalar": "Scalar",
    "()": "void",
}


@dataclass
class Param:
    type: str  # as written, e.g. "int[2]?"
    name: str
    default: str | None
    kwonly: bool

    @property
    def base_type(self) -> str:  # int[2]? -> int[]?
        return re.sub(r"int\[\d+\]", "int[]", self.type)


@dataclass
class Op:
    name: str  # python name
    overload: str  # "" or e.g. "dim"
    params: list[Param]
    returns: list[tuple[str, str]]  # (type, field name)
    entry: dict = field(repr=False)

    @property
    def key(self) -> str:
        """The table key autograd knows the overload by: "add" or "max.dim"."""
        return self.name + (f".{self.overload}" if self.overload else "")

    @property
    def cpp_name(self) -> str:
        return self.name + (f"_{self.overload}" if self.overload else "")

    @property
    def has_out(self) -> bool:
        """Whether the frontend takes a destination (out=, or self of an in-place call)."""
        return self.entry.get("out") is True or bool(self.entry.get("inplace"))

    @property
    def copies_out(self) -> bool:
        """out= is the binding's: the result is copied into it (``out: copy``)."""
        return self.entry.get("out") == "copy"

    @property
    def tuple_out(self) -> bool:
        """out= of an operator returning several tensors is a tuple of them."""
        return len(self.returns) > 1 and bool(self.entry.get("out"))


def parse_schema(entry: dict) -> Op:
    func = entry["func"]
    m = re.fullmatch(r"([\w.]+)\((.*)\)\s*->\s*(.+)", func.strip())
    if not m:
        raise SystemExit(f"bad schema: {func}")
    full, body, ret = m.groups()
    name, _, overload = full.partition(".")
    params, kwonly, depth, cur = [], False, 0, ""
    pieces = []
    for ch in body:  # split on commas outside brackets
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "," and depth == 0:
            pieces.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        pieces.append(cur)
    for piece in (p.strip() for p in pieces):
        if piece == "*":
            kwonly = True
            continue
        decl, _, default = piece.partition("=")
        ptype, pname = decl.strip().rsplit(" ", 1)
        params.append(Param(ptype, pname, default.strip() or None, kwonly))
    ret = ret.strip()
    if ret.startswith("(") and ret != "()":
        returns = [tuple(r.strip().rsplit(" ", 1)) for r in ret[1:-1].split(",")]
    else:
        returns = [(ret, "")]
    return Op(name, overload, params, returns, entry)


def cpp_return_type(op: Op) -> str:
    if len(op.returns) > 1:
        return "std::tuple<" + ", ".join(CPP_RETURN[t] for t, _ in op.returns) + ">"
    return CPP_RETURN[op.returns[0][0]]


def cpp_param_type(p: Param) -> str:
    try:
        return CPP_PARAM[p.base_type][0]
    except KeyError:
        raise SystemExit(f"unsupported parameter type {p.type}") from None


def declaration(op: Op) -> str:
    params = [f"{cpp_param_type(p)} {p.name}" for p in op.params]
    if op.has_out:
        params.append("const std::vector<Tensor>& out" if op.tuple_out else "const OutArg& out")
    return f"{cpp_return_type(op)} {op.cpp_name}({', '.join(params)})"


def schema_for_parser(op: Op, with_out: bool) -> str:
    parts, star = [], False
    for p in op.params:
        if p.kwonly and not star:
            parts.append("*")
            star = True
        parts.append(f"{p.type} {p.name}" + (f"={p.default}" if p.default is not None else ""))
    if with_out:
        if not star:
            parts.append("*")
        parts.append("Tensor[]? out=None" if op.tuple_out else "Tensor? out=None")
    return f"{op.name}({', '.join(parts)})"


def cpp_literal(p: Param) -> str:
    """C++ expression for a parameter's default (used by the operator fast paths)."""
    d, t = p.default, p.base_type
    if d is None:
        raise SystemExit(f"parameter {p.name} needs a default for a Python operator binding")
    if d == "None":
        return {"Tensor?": "Tensor()", "Generator?": "&default_generator()"}.get(t, "std::nullopt")
    if t.startswith("Scalar"):
        return (
            f"Scalar({d}.0)"
            if re.fullmatch(r"-?\d+\.\d*", d) is None and "." in d
            else (f"Scalar(int64_t({d}))" if re.fullmatch(r"-?\d+", d) else f"Scalar({d})")
        )
    if t.startswith("bool"):
        return "true" if d == "True" else "false"
    if t.startswith("int[]"):
        return "DimVector{" + d.strip("[]()") + "}"
    if t.startswith("str"):
        return f"std::string({d!s})".replace("'", '"')
    return d


def py_return(op: Op, call: str, ret_names: str) -> list[str]:
    rtype = op.returns[0][0]
    if op.entry.get("view"):
        call = view_marked(op, call)
    if len(op.returns) > 1:
        return [f"return make_return({ret_names}, {call});"]
    if rtype == "()" and op.params and op.params[0].base_type == "Tensor[]":
        # In-place list operators (_foreach_add_) hand back the very list they were given.
        return [f"{call};", "return py::reinterpret_borrow<py::object>(p.raw(0));"]
    if rtype == "()":
        return [f"{call};", "return py::none();"]
    if rtype == "Scalar":
        return [f"return scalar_to_py({call});"]
    if rtype == "Tensor[]":
        return [f"return tensors_to_tuple({call});"]
    return [f"return py::cast({call});"]


def copied_out(op: Op, call: str, ret_names: str, py_name: str) -> list[str]:
    """An ``out: copy`` operator given out=: its result written into the out= tensors."""
    idx = len(op.params)
    if len(op.returns) == 1:
        return [
            f"if (!p.is_none({idx})) {{",
            f'  write_out(p.out({idx}), {call}, "{py_name}");',
            f"  return py::reinterpret_borrow<py::object>(p.raw({idx}));",
            "}",
        ]
    n = len(op.returns)
    written = ", ".join(f'write_out(outs, {i}, std::get<{i}>(r), "{py_name}")' for i in range(n))
    return [
        f"if (!p.is_none({idx})) {{",
        f"  std::vector<Tensor> outs = p.tensors({idx});",
        f'  check_out_tuple(outs, {n}, "{py_name}");',
        f"  auto r = {call};",
        f"  return make_return({ret_names}, std::make_tuple({written}));",
        "}",
    ]


def view_marked(op: Op, call: str) -> str:
    """The call with its outputs marked as views of its first input (``view: true``)."""
    rtype = op.returns[0][0]
    if len(op.returns) != 1 or rtype not in ("Tensor", "Tensor[]"):
        raise SystemExit(f"{op.name}: a view operator returns Tensor or Tensor[]")
    if not op.params or op.params[0].base_type != "Tensor":
        raise SystemExit(f"{op.name}: a view operator's first parameter is its base Tensor")
    base = call_args(op)[0]
    return f"{'mark_views' if rtype == 'Tensor[]' else 'mark_view'}({call}, {base})"


def call_args(op: Op, offset: int = 0) -> list[str]:
    args = []
    for i, p in enumerate(op.params):
        accessor = CPP_PARAM[p.base_type][1]
        args.append(f"p.{accessor}({i + offset})")
    return args


def tensor_arg_indices(op: Op) -> list[int]:
    return [i for i, p in enumerate(op.params) if p.base_type.startswith("Tensor")]


ENTRY_KEYS = frozenset(
    {
        "func",
        "category",
        "doc",
        "example",
        "variants",
        "inplace",
        "out",
        "dunder",
        "python_name",
        "nondeterministic",
        "nondeterministic_if",
        "autocast",
        "factory",
        "view",
        "deprecated",
    }
)

# PyTorch's factory keywords that the bindings take care of themselves (the frontends
# never see them): layout (strided only), pin_memory, out= for factories that lack an
# out variant, memory_format for empty. An entry lists the ones its function takes.
FACTORY_EXTRAS = ("layout", "pin_memory", "out", "memory_format")

# The autocast policies of PyTorch's CPU lists, and their C++ enumerators (core/autocast.h).
AUTOCAST_POLICIES = {
    "lower_precision_fp": "LowerPrecisionFp",
    "fp32": "Fp32",
    "promote": "Promote",
}


def check_entry(entry: dict) -> None:
    unknown = sorted(set(entry) - ENTRY_KEYS)
    if unknown:
        raise SystemExit(f"{entry.get('func')}: unknown table keys {unknown}")
    if entry.get("out", False) not in (True, False, "copy"):
        raise SystemExit(f"{entry.get('func')}: out is true, false or copy, not {entry['out']!r}")


def factory_extras(group: list[Op]) -> tuple[str, ...]:
    """The factory keywords (FACTORY_EXTRAS) the group's function takes."""
    found = [op.entry["factory"] for op in group if op.entry.get("factory")]
    extras = tuple(dict.fromkeys(e for f in found for e in f))
    unknown = [e for e in extras if e not in FACTORY_EXTRAS]
    if unknown:
        raise SystemExit(f"{group[0].name}: unknown factory keywords {unknown}")
    return extras


def group_example(name: str, group: list[Op]) -> str:
    """The operator's example (doctest lines), declared on one overload of the name."""
    found = [op.entry["example"] for op in group if op.entry.get("example")]
    if len(found) > 1:
        raise SystemExit(f"{name}: an example on {len(found)} overloads; declare it once")
    text = found[0].strip() if found else ""
    if text and not text.startswith(">>> "):
        raise SystemExit(f"{name}: an example is doctest lines, starting with '>>> '")
    return text


def c_string(text: str) -> str:
    """`text` as the inside of a C string literal, line breaks kept."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def autocast_policy(op: Op) -> str | None:
    """The entry's autocast policy (None: autocast leaves its arguments alone)."""
    policy = op.entry.get("autocast")
    if policy is not None and policy not in AUTOCAST_POLICIES:
        raise SystemExit(
            f"{op.name}: autocast must be one of {', '.join(AUTOCAST_POLICIES)}, not {policy!r}"
        )
    if policy is not None and not tensor_arg_indices(op):
        raise SystemExit(f"{op.name}: autocast needs a tensor parameter")
    return policy


def cpp_policy(op: Op) -> str:
    policy = autocast_policy(op)
    return f"autocast::Policy::{AUTOCAST_POLICIES[policy] if policy else 'None'}"


def autocast_check(ops: list[Op], method: bool) -> list[str]:
    """While autocast is on in this thread: cast the call's floating-point tensor
    arguments by the overload's policy and parse the rewritten call again (one
    branch while it is off). Groups without a policy get nothing."""
    if not any(autocast_policy(o) for o in ops):
        return []
    policies = ", ".join(cpp_policy(o) for o in ops)
    self_ptr, reparse_self = ("&self", "self.ptr()") if method else ("nullptr", "nullptr")
    return [
        "  py::object autocast_self;",
        "  if (FLB_UNLIKELY(autocast::any_enabled())) {",
        f"    static constexpr autocast::Policy policies[] = {{{policies}}};",
        f"    if (autocast_arguments(policies[p.overload], p, {self_ptr}, autocast_self, args, "
        "kwargs))",
        f"      p = sigs.parse({reparse_self}, args.ptr(), kwargs.ptr());",
        "  }",
    ]


# Device types the table may mark nondeterministic: the core's own (device.h).
# Plugins of other device types declare their marks when they register.
CORE_DEVICE_TYPES = ("cpu", "cuda")


def nondeterministic_devices(op: Op) -> list[str]:
    devices = op.entry.get("nondeterministic", [])
    if not isinstance(devices, list) or any(d not in CORE_DEVICE_TYPES for d in devices):
        raise SystemExit(
            f"{op.name}: nondeterministic must be a list of {', '.join(CORE_DEVICE_TYPES)}"
        )
    return devices


def nondeterministic_condition(op: Op) -> str:
    """C++ test of a parsed call for ``nondeterministic_if``: ``arg`` (a bool that is
    true, or an optional argument that is given) or ``arg=v1|v2`` (a str or int
    argument equal to one of the values)."""
    cond = op.entry.get("nondeterministic_if")
    if cond is None:
        return ""
    name, _, values = str(cond).partition("=")
    index = next((i for i, p in enumerate(op.params) if p.name == name.strip()), None)
    if index is None:
        raise SystemExit(f"{op.name}: nondeterministic_if names no parameter: {cond}")
    ptype = op.params[index].base_type
    if not values:
        if ptype == "bool":
            return f"p.boolean({index})"
        if ptype.endswith("?"):
            return f"!p.is_none({index})"
        raise SystemExit(f"{op.name}: nondeterministic_if {cond}: needs a bool or optional")
    if ptype.startswith("str"):
        test = " || ".join(f'v == "{v.strip()}"' for v in values.split("|"))
        get = f"p.string({index})"
    elif ptype.startswith("int") and "[" not in ptype:
        test = " || ".join(f"v == {int(v)}" for v in values.split("|"))
        get = f"*p.int64_opt({index})" if ptype.endswith("?") else f"p.int64({index})"
    else:
        raise SystemExit(f"{op.name}: nondeterministic_if {cond}: needs a str or int parameter")
    given = f"!p.is_none({index}) && " if ptype.endswith("?") else ""
    return f"{given}[&](const auto& v) {{ return {test}; }}({get})"


def deterministic_check(op: Op, indent: str) -> list[str]:
    """While deterministic mode is on: alert when the call's device is marked (one
    branch when it is off). Operators without tensor arguments have no device."""
    tensors = tensor_arg_indices(op)
    if not tensors:
        return []
    devices = ", ".join(f'"{d}"' for d in nondeterministic_devices(op))
    cond = nondeterministic_condition(op)
    call = f"check_deterministic(nd, p, {{{', '.join(map(str, tensors))}}});"
    return [
        f"{indent}if (FLB_UNLIKELY(deterministic_algorithms_enabled())) {{",
        f'{indent}  static const NondeterministicMarks nd("{op.name}", {{{devices}}});',
        f"{indent}  {f'if ({cond}) ' if cond else ''}{call}",
        f"{indent}}}",
    ]


def torch_function_check(py_name: str, method: bool, args: str = "args, kwargs") -> list[str]:
    """Hands the call to a Tensor subclass's ``__torch_function__`` (python/torch_function.h)."""
    self_ = "self" if method else "py::handle()"
    return [
        "  if (FLB_UNLIKELY(torch_function::wants(p)))",
        f'    return torch_function::call("{py_name}", {str(method).lower()}, {self_}, {args});',
    ]


def parsed(self_arg: str, py_name: str, method: bool) -> list[str]:
    """Binds the call to the group's overloads (python/arg_parser.h). A call that binds to
    none because an argument is a tensor-like of another type (fx's Proxy) goes to that
    type's ``__torch_function__``, as in PyTorch."""
    return [
        f"  ParsedArgs p = sigs.parse({self_arg}, args.ptr(), kwargs.ptr(), true);",
        "  if (FLB_UNLIKELY(p.tensor_like))",
        *torch_function_check(py_name, method)[1:],
    ]


def profiled(op_name: str, args: str) -> str:
    """Times the call while a profile is active, as PyTorch's aten::<name> (python/profiler.h)."""
    return f'  profiler::OpScope profiled("aten::{op_name}", {args});'


def deprecated_forms(ops: list[Op], method: bool, suffix: str = "", with_out=None) -> str:
    """The OverloadSet's deprecated forms (``deprecated:``, PyTorch's deprecated.yaml):
    ``{target overload, "schema"}``. A method's forms take self first, as bound; a
    function's take out= where their target does."""
    forms = []
    for k, op in enumerate(ops):
        for schema in op.entry.get("deprecated", []):
            form = parse_schema({"func": f"{schema} -> Tensor"})
            known = {p.name: p for p in op.params}
            if form.name != op.name or any(p.name not in known for p in form.params):
                raise SystemExit(f"{op.key}: deprecated form {schema!r} names other parameters")
            given = {p.name for p in form.params}
            if any(p.default is None and p.name not in given for p in op.params):
                raise SystemExit(f"{op.key}: deprecated form {schema!r} leaves out a required one")
            params = list(form.params)
            if method:  # self is bound first: the target's first parameter
                params.sort(key=lambda p: p.name != op.params[0].name)
            parts = [f"{p.type} {p.name}" for p in params]
            if with_out is not None and with_out[k]:
                parts += ["*", "Tensor[]? out=None" if op.tuple_out else "Tensor? out=None"]
            forms.append(f'{{{k}, "{op.name}{suffix}({", ".join(parts)})"}}')
    return ", ".join(forms)


def gen_group(name: str, ops: list[Op], method: bool, py_name: str) -> list[str]:
    """A pybind11 lambda body dispatching a group of overloads."""
    with_out = [o.entry.get("out", False) and not method for o in ops]
    schemas = ", ".join(f'"{schema_for_parser(o, w)}"' for o, w in zip(ops, with_out))
    self_arg = "self.ptr()" if method else "nullptr"
    lines = []
    extras = factory_extras(ops) if not method else ()
    if extras:
        mask = " | ".join(f"kFactory_{e}" for e in extras)
        lines += [
            f"  if (kwargs.size() != 0 && has_factory_extras(kwargs.ptr(), {mask}))",
            f'    return call_with_factory_extras("{py_name}", args, kwargs, {mask});',
        ]
    forms = deprecated_forms(ops, method, with_out=with_out)
    lines += [
        f"  static const OverloadSet sigs({{{schemas}}}{f', {{{forms}}}' if forms else ''});",
        *parsed(self_arg, py_name, method),
        profiled(py_name, "p"),
    ]
    lines += torch_function_check(py_name, method)
    lines += autocast_check(ops, method)
    lines += [
        "  auto run = [&]() -> py::object {",
        "  switch (p.overload) {",
    ]
    for k, (op, w) in enumerate(zip(ops, with_out)):
        args = call_args(op)
        if op.tuple_out and not op.copies_out:  # the frontend returns the out tensors
            out_idx = len(op.params)
            empty = "std::vector<Tensor>{}"
            args.append(f"p.is_none({out_idx}) ? {empty} : p.tensors({out_idx})" if w else empty)
        elif op.has_out:
            out_idx = len(op.params)
            args.append(f"p.out({out_idx})" if w else "OutArg::none()")
        call = f"ops::{op.cpp_name}({', '.join(args)})"
        ret_names = f"{op.cpp_name}_return_type()"
        lines.append(f"    case {k}: {{")
        lines += deterministic_check(op, "      ")
        if w and op.copies_out:
            lines += ["      " + line for line in copied_out(op, call, ret_names, py_name)]
        if w and not op.tuple_out and not op.copies_out:
            lines.append(f"      if (!p.is_none({len(op.params)})) {{")
            lines.append(f"        {call};")
            lines.append(
                f"        return py::reinterpret_borrow<py::object>(p.raw({len(op.params)}));"
            )
            lines.append("      }")
        lines += ["      " + line for line in py_return(op, call, ret_names)]
        lines.append("    }")
    plans = ", ".join(f'autograd_record::PlanSlot("{o.key}")' for o in ops)
    lines += [
        "  }",
        "  return py::none();",
        "  };",
        f"  static const autograd_record::PlanSlot plans[] = {{{plans}}};",
        "  if (FLB_UNLIKELY(autograd_slot::wants(p)))",
        f'    return autograd_slot::dispatch(plans[p.overload], p, "{name}", '
        f"{'self' if method else 'py::handle()'}, args, kwargs, run);",
        "  return run();",
    ]
    return lines


def gen_inplace(ops: list[Op], py_name: str) -> list[str]:
    """The in-place ``name_`` method of a group's in-place overloads (tried in order)."""
    name = ops[0].name
    schemas = ", ".join(
        '"' + schema_for_parser(o, False).replace(f"{name}(", f"{name}_(", 1) + '"' for o in ops
    )
    forms = deprecated_forms(ops, True, suffix="_")
    lines = [
        f"  static const OverloadSet sigs({{{schemas}}}{f', {{{forms}}}' if forms else ''});",
        *parsed("self.ptr()", py_name + "_", True),
        profiled(py_name + "_", "p"),
        *torch_function_check(py_name + "_", True),
        "  auto run = [&]() {",
        "    switch (p.overload) {",
    ]
    for k, op in enumerate(ops):
        args = call_args(op) + ["OutArg::self(p.tensor(0))"]
        lines.append(f"      case {k}: {{")
        lines += deterministic_check(op, "        ")
        lines += [f"        ops::{op.cpp_name}({', '.join(args)});", "        break;", "      }"]
    # Recorded with the plan of the out-of-place overload (autograd_record.h).
    plans = ", ".join(f'autograd_record::PlanSlot("{o.key}")' for o in ops)
    lines += [
        "    }",
        "  };",
        f"  static const autograd_record::PlanSlot plans[] = {{{plans}}};",
        "  if (FLB_UNLIKELY(autograd_slot::wants(p)))",
        f'    return autograd_slot::dispatch_inplace(plans[p.overload], p, "{name}_", self, args, '
        "kwargs, run);",
        "  run();",
        "  return py::reinterpret_borrow<py::object>(self);",
    ]
    return lines


def gen_dunder(op: Op, dunder: str) -> list[str]:
    """Fast path for a Python operator: fixed arity, no argument parsing."""
    nin = 1 if len([p for p in op.params if p.default is None]) == 1 else 2
    rest = [cpp_literal(p) for p in op.params[nin:]]
    reflected = dunder.startswith("__r") and dunder not in ("__rshift__",)
    inplace = dunder.startswith("__i") and dunder not in ("__invert__",)
    operand_ptrs = "self.ptr(), other.ptr()" if nin == 2 else "self.ptr(), nullptr"
    call_args_tf = "py::make_tuple(other), py::dict()" if nin == 2 else "py::tuple(), py::dict()"
    tf_check = [
        f"  if (FLB_UNLIKELY(torch_function::wants_operands({operand_ptrs})))",
        f'    return torch_function::call("{dunder}", true, self, {call_args_tf});',
    ]
    if nin == 1:
        head = ["  Tensor a = py::cast<Tensor>(self);"]
        operands = ["a"]
        slot_args = "py::make_tuple(self)"
    else:
        # A tensor-like of another type (fx's Proxy) gets the call, as in PyTorch; other
        # operands Python offers to the reflected operator.
        head = [
            "  if (!is_tensor(other.ptr()) && !is_number(other.ptr())) {",
            "    if (torch_function::enabled() && torch_function::is_tensor_like(other.ptr()))",
            f'      return torch_function::call("{dunder}", true, self, {call_args_tf});',
            "    return py::reinterpret_borrow<py::object>(Py_NotImplemented);",
            "  }",
            "  Tensor a = py::cast<Tensor>(self);",
            f'  Tensor b = tensor_from_py(other.ptr(), "{dunder}", "other");',
        ]
        operands = ["b", "a"] if reflected else ["a", "b"]
        slot_args = "py::make_tuple(other, self)" if reflected else "py::make_tuple(self, other)"
    slot_name = op.name + ("_" if inplace else "")
    head = [profiled(slot_name, f"{{{operand_ptrs.replace(', nullptr', '')}}}")] + tf_check + head
    call_list = operands + rest
    if op.has_out:
        call_list.append("OutArg::self(a)" if inplace else "OutArg::none()")
    call = f"ops::{op.cpp_name}({', '.join(call_list)})"
    if op.entry.get("nondeterministic_if"):
        raise SystemExit(f"{op.name}: a Python operator's op cannot have nondeterministic_if")
    devices = ", ".join(f'"{d}"' for d in nondeterministic_devices(op))
    # Inside run(): a call recorded in C++ runs it too.
    check = [
        "  if (FLB_UNLIKELY(deterministic_algorithms_enabled())) {",
        f'    static const NondeterministicMarks nd("{op.name}", {{{devices}}});',
        f"    check_deterministic(nd, {{{', '.join('&' + o for o in operands)}}});",
        "  }",
    ]
    if inplace:
        slot_check = [
            f"  if (FLB_UNLIKELY(autograd_slot::wants_tensors({', '.join(operands)})))",
            f'    return autograd_slot::call("{slot_name}", py::handle(), {slot_args}, '
            "py::dict());",
        ]
        body = [f"  {call};", "  return py::reinterpret_borrow<py::object>(self);"]
        return head + slot_check + check + body
    # Out-of-place operators of an autocast entry cast their operands first (a @ b).
    if autocast_policy(op):
        other = "other" if nin == 2 else "py::none()"
        head += [
            "  if (FLB_UNLIKELY(autocast::any_enabled())) {",
            f'    py::object r = autocast_operator({cpp_policy(op)}, "{dunder}", self, {other});',
            "    if (r) return r;",
            "  }",
        ]
    run = ["  auto run = [&]() -> py::object {"] + ["  " + line for line in check]
    run += ["  " + line for line in py_return(op, call, f"{op.cpp_name}_return_type()")]
    run += ["  };"]
    handles = slot_args.removeprefix("py::make_tuple(").removesuffix(")")
    slot_check = [
        f"  if (FLB_UNLIKELY(autograd_slot::wants_tensors({', '.join(operands)}))) {{",
        f'    static const autograd_record::PlanSlot plan("{op.key}");',
        f'    return autograd_slot::dispatch_operands(plan, "{slot_name}", {{{handles}}}, run);',
        "  }",
    ]
    return head + run + slot_check + ["  return run();"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("tables", nargs="+", type=Path)
    a = ap.parse_args()
    a.tables_stems = [p.stem for p in a.tables]

    ops: list[Op] = []
    for path in sorted(a.tables):
        for entry in yaml.safe_load(path.read_text()) or []:
            check_entry(entry)
            entry.setdefault("category", path.stem)
            entry["category_file"] = path.stem
            ops.append(parse_schema(entry))

    groups: dict[str, list[Op]] = {}
    for op in ops:
        groups.setdefault(op.name, []).append(op)
    examples = {name: group_example(name, group) for name, group in groups.items()}

    a.out.mkdir(parents=True, exist_ok=True)
    # One header per table file, so adding an operator recompiles only the
    # frontends that include its family (ops.h includes them all).
    for stem in sorted(a.tables_stems):
        header = [
            "// Generated by codegen/gen_ops.py from ops/*.yaml. Do not edit.",
            "#pragma once",
            "#include <optional>",
            "#include <string>",
            "#include <tuple>",
            "#include <vector>",
            '#include "core/generator.h"',
            '#include "ops/common.h"',
            "namespace flambeau::ops {",
        ]
        header += [declaration(op) + ";" for op in ops if op.entry["category_file"] == stem]
        header += ["}  // namespace flambeau::ops", ""]
        write_if_changed(a.out / f"ops_{stem}.h", "\n".join(header))
    umbrella = ["// Generated by codegen/gen_ops.py from ops/*.yaml. Do not edit.", "#pragma once"]
    umbrella += [f'#include "generated/ops_{stem}.h"' for stem in sorted(a.tables_stems)]
    write_if_changed(a.out / "ops.h", "\n".join(umbrella) + "\n")

    src = [
        "// Generated by codegen/gen_ops.py from ops/*.yaml. Do not edit.",
        '#include "generated/ops.h"',
        '#include "python/autocast.h"',
        '#include "python/binding_support.h"',
        '#include "python/profiler.h"',
        '#include "python/deterministic.h"',
        '#include "python/torch_function.h"',
        "namespace flambeau::python {",
        "namespace {",
    ]
    for op in ops:
        if len(op.returns) > 1:
            fields = ", ".join(f'"{n}"' for _, n in op.returns)
            src += [
                f"py::object {op.cpp_name}_return_type() {{",
                "  PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> t;",
                "  return t.call_once_and_store_result([] {",
                f'    return make_return_type("{op.name}", {{{fields}}});',
                "  }).get_stored();",
                "}",
            ]
    src += ["}  // namespace", "", "void register_generated_ops(py::module_& m, py::object cls) {"]
    src.append("  auto tensor_cls = py::reinterpret_borrow<py::class_<TensorImpl, Tensor>>(cls);")
    for name, group in groups.items():
        variants = group[0].entry.get("variants", ["function", "method"])
        py_name = group[0].entry.get("python_name", name)
        doc = c_string((group[0].entry.get("doc") or "").strip())
        sigs = "\\n".join(schema_for_parser(o, o.entry.get("out", False)) for o in group)
        full_doc = f"{sigs}\\n\\n{doc}"
        if examples[name]:
            full_doc += "\\n\\n" + c_string(examples[name])
        if "function" in variants:
            src.append(
                f'  m.def("{py_name}", [](py::args args, py::kwargs kwargs) -> py::object {{'
            )
            src += gen_group(name, group, method=False, py_name=py_name)
            src.append(f'  }}, "{full_doc}");')
        if "method" in variants:
            src.append(
                f'  tensor_cls.def("{py_name}", [](py::handle self, py::args args, '
                "py::kwargs kwargs) -> py::object {"
            )
            src += gen_group(name, group, method=True, py_name=py_name)
            src.append(f'  }}, "{full_doc}");')
        inplace = [op for op in group if op.entry.get("inplace")]
        if inplace:
            src.append(
                f'  tensor_cls.def("{py_name}_", [](py::handle self, py::args args, '
                "py::kwargs kwargs) -> py::object {"
            )
            src += gen_inplace(inplace, py_name)
            src.append(f'  }}, "In-place version of {py_name}.");')
        for op in group:
            for dunder in op.entry.get("dunder", []):
                nin = 1 if len([p for p in op.params if p.default is None]) == 1 else 2
                sig = "py::handle self" + (", py::handle other" if nin == 2 else "")
                src.append(f'  tensor_cls.def("{dunder}", []({sig}) -> py::object {{')
                src += gen_dunder(op, dunder)
                src.append("  });")
    # `from flambeau._C import *` skips names starting with "_" (_foreach_add,
    # _thnn_fused_lstm_cell); flambeau re-exports the functions listed here.
    underscored = [
        g[0].entry.get("python_name", n)
        for n, g in groups.items()
        if n.startswith("_") and "function" in g[0].entry.get("variants", ["function", "method"])
    ]
    names = ", ".join(f'"{n}"' for n in underscored)
    src.append(f'  m.attr("_underscored_ops") = py::make_tuple({names});')
    # Every operator of the table has a dispatcher entry from the start, so a
    # plugin can declare marks for it (declare_nondeterministic) by name.
    all_names = ", ".join(f'"{n}"' for n in groups)
    src.append(f"  for (const char* name : {{{all_names}}}) Dispatcher::op(name);")
    src.append("}")
    src.append("")
    src.append("std::vector<OpInfo> op_table() {")
    src.append("  return {")
    for op in ops:
        e = op.entry
        variants = list(e.get("variants", ["function", "method"]))
        if e.get("inplace"):
            variants.append("inplace")
        if e.get("out"):
            variants.append("out")
        doc = c_string((e.get("doc") or "").strip().replace("\n", " "))
        example = c_string(examples[op.name])
        schema = e["func"].replace('"', '\\"')
        params = json.dumps(params_json(op)).replace("\\", "\\\\").replace('"', '\\"')
        src.append(
            f'    {{"{op.name}", "{schema}", "{e["category"]}", "{doc}", '
            f'"{",".join(variants)}", "{" ".join(e.get("dunder", []))}", "{params}", '
            f'"{example}"}},'
        )
    src += ["  };", "}", "}  // namespace flambeau::python", ""]
    write_if_changed(a.out / "op_bindings.cpp", "\n".join(src))


def params_json(op: Op) -> dict:
    """The parsed schema, so Python consumers (autograd) need not parse schemas again."""
    return {
        "overload": op.overload,
        "n_outputs": len(op.returns),
        "nondeterministic": nondeterministic_devices(op),
        "nondeterministic_if": op.entry.get("nondeterministic_if"),
        "autocast": autocast_policy(op),
        "view": bool(op.entry.get("view", False)),
        "params": [
            {"name": p.name, "type": p.type, "default": p.default, "kwonly": p.kwonly}
            for p in op.params
        ],
    }


def write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


if __name__ == "__main__":
    main()
