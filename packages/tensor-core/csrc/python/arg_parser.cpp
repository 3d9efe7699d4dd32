#include "python/arg_parser.h"

#include <algorithm>
#include <sstream>

#include "python/torch_function.h"

namespace flambeau::python {

namespace {

PyTypeObject* g_tensor_type = nullptr;
PyTypeObject* g_dtype_type = nullptr;
PyTypeObject* g_device_type = nullptr;
PyTypeObject* g_generator_type = nullptr;
std::array<PyObject*, kNumScalarTypes> g_dtype_objects{};
std::array<PyObject*, kNumMemoryFormats> g_memory_format_objects{};

const char* type_name(ParamType t) {
  switch (t) {
    case ParamType::Tensor:
      return "Tensor";
    case ParamType::TensorList:
      return "tuple of Tensors";
    case ParamType::Scalar:
      return "Number";
    case ParamType::ScalarList:
      return "tuple of Numbers";
    case ParamType::Int:
      return "int";
    case ParamType::IntList:
      return "tuple of ints";
    case ParamType::Float:
      return "float";
    case ParamType::Bool:
      return "bool";
    case ParamType::String:
      return "str";
    case ParamType::Dtype:
      return "dtype";
    case ParamType::Device:
      return "device";
    case ParamType::Generator:
      return "Generator";
    case ParamType::MemoryFormat:
      return "flambeau.memory_format";
  }
  return "?";
}

// An int argument: a Python or NumPy integer, or (as in PyTorch, e.g. narrow's start from
// x.argmax()) a 0-dim integer or bool tensor.
bool is_int(PyObject* o) {
  if (PyLong_Check(o)) return true;
  if (is_tensor(o)) {
    const Tensor& t = tensor_from_py(o, "", "");
    return t->dim() == 0 && is_integral(t->dtype(), /*include_bool=*/true);
  }
  return !PyFloat_Check(o) && PyIndex_Check(o);
}

bool is_int_list(PyObject* o, int list_size) {
  if (list_size > 0 && is_int(o)) return true;
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!is_int(items[i])) return false;
  return true;
}

bool is_tensor_list(PyObject* o, bool none_elements) {
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!is_tensor(items[i]) && !(none_elements && items[i] == Py_None)) return false;
  return true;
}

bool is_number_list(PyObject* o) {
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!is_number(items[i])) return false;
  return true;
}

// lenient: also what PyTorch's parser takes for a float but only once no overload fits
// plainly (a 0-dim real tensor: allclose(atol=torch.tensor(1e-3))); tried in a second
// pass, so that x.bernoulli_(p) with a 0-dim p still picks the Tensor overload.
bool matches(const Param& p, PyObject* o, bool lenient) {
  if (o == Py_None) return p.optional;
  switch (p.type) {
    case ParamType::Tensor:
      return is_tensor(o) || is_number(o);
    case ParamType::TensorList:
      return is_tensor_list(o, p.none_elements);
    case ParamType::Scalar:
      return is_number(o) || (is_tensor(o) && tensor_from_py(o, "", "")->numel() == 1);
    case ParamType::ScalarList:
      return is_number_list(o);
    case ParamType::Int:
      return is_int(o);
    case ParamType::IntList:
      return is_int_list(o, p.list_size);
    case ParamType::Float:
      // As PyTorch: a Python or NumPy real number; leniently a 0-dim real tensor.
      if (PyFloat_Check(o) || is_int(o)) return true;
      if (is_tensor(o)) {
        if (!lenient) return false;
        const Tensor& t = tensor_from_py(o, "", "");
        return t->dim() == 0 && (is_floating(t->dtype()) || is_integral(t->dtype(), true));
      }
      return is_number(o) && !PyComplex_Check(o);
    case ParamType::Bool:
      return PyBool_Check(o);
    case ParamType::String:
      return PyUnicode_Check(o);
    case ParamType::Dtype:
      return is_dtype(o);
    case ParamType::Device:
      return is_device(o) || PyUnicode_Check(o) || is_int(o);
    case ParamType::Generator:
      return PyObject_TypeCheck(o, g_generator_type);
    case ParamType::MemoryFormat:
      return is_memory_format(o);
  }
  return false;
}

std::string py_type_name(PyObject* o) { return Py_TYPE(o)->tp_name; }

ParamType parse_type(const std::string& t, int* list_size, const std::string& schema) {
  *list_size = 0;
  if (t == "Tensor") return ParamType::Tensor;
  if (t == "Tensor[]" || t == "Tensor?[]") return ParamType::TensorList;
  if (t == "Scalar") return ParamType::Scalar;
  if (t == "Scalar[]") return ParamType::ScalarList;
  if (t == "int") return ParamType::Int;
  if (t.rfind("int[", 0) == 0) {
    std::string inner = t.substr(4, t.size() - 5);
    *list_size = inner.empty() ? 0 : std::stoi(inner);
    return ParamType::IntList;
  }
  if (t == "float") return ParamType::Float;
  if (t == "bool") return ParamType::Bool;
  if (t == "str") return ParamType::String;
  if (t == "ScalarType") return ParamType::Dtype;
  if (t == "Device") return ParamType::Device;
  if (t == "Generator") return ParamType::Generator;
  if (t == "MemoryFormat") return ParamType::MemoryFormat;
  fail("schema '", schema, "': unknown type ", t);
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

void set_python_types(PyObject* tensor, PyObject* dtype, PyObject* device, PyObject* generator) {
  g_tensor_type = reinterpret_cast<PyTypeObject*>(tensor);
  g_dtype_type = reinterpret_cast<PyTypeObject*>(dtype);
  g_device_type = reinterpret_cast<PyTypeObject*>(device);
  g_generator_type = reinterpret_cast<PyTypeObject*>(generator);
}
PyObject* dtype_object(ScalarType t) { return g_dtype_objects[static_cast<size_t>(t)]; }
void set_dtype_object(ScalarType t, PyObject* o) { g_dtype_objects[static_cast<size_t>(t)] = o; }
PyObject* memory_format_object(MemoryFormat f) {
  return g_memory_format_objects[static_cast<size_t>(f)];
}
void set_memory_format_object(MemoryFormat f, PyObject* o) {
  g_memory_format_objects[static_cast<size_t>(f)] = o;
}
// The four singletons are the only instances (the type cannot be instantiated).
bool is_memory_format(PyObject* o) {
  return std::find(g_memory_format_objects.begin(), g_memory_format_objects.end(), o) !=
         g_memory_format_objects.end();
}
MemoryFormat memory_format_from_py(PyObject* o, const char* op, const char* arg) {
  for (int i = 0; i < kNumMemoryFormats; ++i)
    if (g_memory_format_objects[static_cast<size_t>(i)] == o) return static_cast<MemoryFormat>(i);
  fail<TypeError>(op, "(): argument '", arg, "' must be flambeau.memory_format, not ",
                  py_type_name(o));
}

bool is_tensor(PyObject* o) { return PyObject_TypeCheck(o, g_tensor_type); }
bool is_dtype(PyObject* o) {
  return PyObject_TypeCheck(o, g_dtype_type) || o == reinterpret_cast<PyObject*>(&PyFloat_Type) ||
         o == reinterpret_cast<PyObject*>(&PyLong_Type) ||
         o == reinterpret_cast<PyObject*>(&PyBool_Type) ||
         o == reinterpret_cast<PyObject*>(&PyComplex_Type);
}
bool is_device(PyObject* o) { return PyObject_TypeCheck(o, g_device_type); }

bool is_number(PyObject* o) {
  if (PyFloat_Check(o) || PyLong_Check(o) || PyComplex_Check(o)) return true;
  if (is_tensor(o) || PySequence_Check(o)) return false;
  // NumPy scalars: integers implement __index__, floats __float__.
  return PyIndex_Check(o) ||
         Py_TYPE(o)->tp_as_number != nullptr && Py_TYPE(o)->tp_as_number->nb_float != nullptr;
}

// One element of an int list (a shape, dims): PyTorch's TypeError when it does
// not fit in int64, never a wrapped-around value or a pending Python error.
static int64_t list_item_int64(PyObject* o, const std::string& op, const std::string& arg,
                               Py_ssize_t pos) {
  py::object idx = py::reinterpret_steal<py::object>(PyNumber_Index(o));
  if (!idx) throw py::error_already_set();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
  if (overflow)
    fail<TypeError>(op, "(): argument '", arg, "' failed to unpack the object at pos ", pos + 1,
                    ": ", py::str(idx).cast<std::string>(), " does not fit in int64");
  return v;
}

Scalar scalar_from_py(PyObject* o, const char* op, const char* arg) {
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) fail<ValueError>(op, ": argument '", arg, "' is out of the int64 range");
    return Scalar(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
  if (PyComplex_Check(o)) {
    Py_complex c = PyComplex_AsCComplex(o);
    return Scalar(std::complex<double>(c.real, c.imag));
  }
  if (is_tensor(o)) {
    Tensor t = py::handle(o).cast<Tensor>();
    FLB_CHECK_T(TypeError, t->numel() == 1, op, ": argument '", arg,
                "' must be a Number, not a Tensor with ", t->numel(), " elements");
    py::object item = py::handle(o).attr("item")();
    return scalar_from_py(item.ptr(), op, arg);
  }
  if (PyIndex_Check(o)) {
    py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(o));
    if (!i) throw py::error_already_set();
    return scalar_from_py(i.ptr(), op, arg);
  }
  if (Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float) {
    double d = PyFloat_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    return Scalar(d);
  }
  fail<TypeError>(op, ": argument '", arg, "' must be a Number, not ", py_type_name(o));
}

Tensor tensor_from_py(PyObject* o, const char* op, const char* arg) {
  if (FLB_LIKELY(is_tensor(o))) return py::handle(o).cast<Tensor>();
  if (is_number(o)) return wrapped_scalar(scalar_from_py(o, op, arg));
  fail<TypeError>(op, ": argument '", arg, "' must be Tensor, not ", py_type_name(o));
}

ScalarType dtype_from_py(PyObject* o, const char* op, const char* arg) {
  if (PyObject_TypeCheck(o, g_dtype_type))
    return py::handle(o).attr("_scalar_type").cast<ScalarType>();
  if (o == reinterpret_cast<PyObject*>(&PyFloat_Type)) return ScalarType::Float64;
  if (o == reinterpret_cast<PyObject*>(&PyLong_Type)) return ScalarType::Int64;
  if (o == reinterpret_cast<PyObject*>(&PyBool_Type)) return ScalarType::Bool;
  if (o == reinterpret_cast<PyObject*>(&PyComplex_Type)) return ScalarType::Complex128;
  fail<TypeError>(op, ": argument '", arg, "' must be flambeau.dtype, not ", py_type_name(o));
}

Device device_from_py(PyObject* o, const char* op, const char* arg) {
  if (is_device(o)) return py::handle(o).cast<Device>();
  // Strings and ints go through flambeau.device(...), which may load a plugin.
  py::object dev =
      py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(g_device_type))(py::handle(o));
  (void)op;
  (void)arg;
  return dev.cast<Device>();
}

Signature::Signature(const std::string& schema) {
  size_t open = schema.find('('), close = schema.rfind(')');
  FLB_CHECK(open != std::string::npos && close != std::string::npos, "bad schema ", schema);
  name_ = schema.substr(0, open);
  std::string body = schema.substr(open + 1, close - open - 1);
  bool kwonly = false;
  std::stringstream ss(body);
  std::string item;
  py::object literal_eval = py::module_::import("ast").attr("literal_eval");
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    // A default like [0, 1] contains commas: glue pieces back until brackets balance.
    while (std::count(item.begin(), item.end(), '[') > std::count(item.begin(), item.end(), ']')) {
      std::string more;
      if (!std::getline(ss, more, ',')) break;
      item += "," + more;
    }
    if (item == "*") {
      kwonly = true;
      continue;
    }
    Param p;
    std::string decl = item, def;
    size_t eq = item.find('=');
    if (eq != std::string::npos) {
      decl = trim(item.substr(0, eq));
      def = trim(item.substr(eq + 1));
    }
    size_t sp = decl.rfind(' ');
    std::string type = decl.substr(0, sp);
    p.name = decl.substr(sp + 1);
    if (!type.empty() && type.back() == '?') {
      p.optional = true;
      type.pop_back();
    }
    p.type = parse_type(type, &p.list_size, schema);
    p.none_elements = type == "Tensor?[]";
    p.kwonly = kwonly;
    if (!def.empty()) {
      p.has_default = true;
      if (p.type == ParamType::MemoryFormat && def != "None") {
        // A named default (contiguous_format): the singleton of that name.
        auto f = memory_format_from_name(def);
        FLB_CHECK(f.has_value(), "schema '", schema, "': unknown memory format ", def);
        p.default_value = py::reinterpret_borrow<py::object>(memory_format_object(*f));
      } else {
        p.default_value = def == "None" ? py::none() : literal_eval(py::str(def));
      }
      // OverloadSets are function-local statics, destroyed at exit after the
      // interpreter is gone: an extra reference keeps their destructors from
      // freeing Python objects then (a float default crashed every exit).
      p.default_value.inc_ref();
      if (def == "None") p.optional = true;
    }
    p.py_name = py::reinterpret_steal<py::object>(PyUnicode_InternFromString(p.name.c_str()));
    p.py_name.inc_ref();  // see default_value above
    if (!kwonly) ++max_positional_;
    params_.push_back(std::move(p));
  }
  FLB_CHECK(params_.size() <= kMaxParams, "schema ", schema, " has too many parameters");
}

std::string Signature::describe() const {
  std::ostringstream os;
  os << "(";
  bool star = false;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Param& p = params_[i];
    if (p.kwonly && !star) {
      os << (i ? ", " : "") << "*";
      star = true;
    }
    os << (i || star ? ", " : "") << type_name(p.type) << (p.optional ? "?" : "") << " " << p.name;
    if (p.has_default) os << "=" << py::str(py::repr(p.default_value)).cast<std::string>();
  }
  os << ")";
  return os.str();
}

// NumPy's keyword names PyTorch accepts for its own in every function (x.sum(axis=1,
// keepdims=True)).
static const char* numpy_alias_of(PyObject* key) {
  static constexpr std::pair<const char*, const char*> kAliases[] = {
      {"axis", "dim"}, {"keepdims", "keepdim"}, {"x", "input"},
      {"a", "input"},  {"x1", "input"},         {"x2", "other"},
  };
  for (const auto& [alias, name] : kAliases)
    if (PyUnicode_CompareWithASCIIString(key, alias) == 0) return name;
  return nullptr;
}

int Signature::find_param(PyObject* key) const {
  for (int i = 0; i < static_cast<int>(params_.size()); ++i) {
    if (params_[i].py_name.ptr() == key || PyUnicode_Compare(params_[i].py_name.ptr(), key) == 0)
      return i;
  }
  if (const char* name = numpy_alias_of(key)) {
    for (int i = 0; i < static_cast<int>(params_.size()); ++i)
      if (params_[i].name == name) return i;
  }
  return -1;
}

bool Signature::bind(PyObject* self, PyObject* args, PyObject* kwargs, PyObject** slots,
                     int* varargs_param, Py_ssize_t* varargs_start, std::string* why,
                     bool lenient) const {
  *varargs_param = -1;
  const int np = static_cast<int>(params_.size());
  for (int i = 0; i < np; ++i) slots[i] = nullptr;
  int next = 0;
  if (self) slots[next++] = self;
  Py_ssize_t nargs = args ? PyTuple_GET_SIZE(args) : 0;
  for (Py_ssize_t a = 0; a < nargs; ++a) {
    PyObject* arg = PyTuple_GET_ITEM(args, a);
    if (next >= max_positional_) {
      *why = str_cat("takes ", max_positional_ - (self ? 1 : 0), " positional arguments but ",
                     nargs, " were given");
      return false;
    }
    const Param& p = params_[next];
    // zeros(2, 3): a leading int[] may be spelled as separate ints.
    if (p.type == ParamType::IntList && p.list_size == 0 && is_int(arg) && nargs - a >= 1) {
      bool rest_ints = true;
      for (Py_ssize_t b = a; b < nargs; ++b)
        rest_ints = rest_ints && is_int(PyTuple_GET_ITEM(args, b));
      if (rest_ints) {
        *varargs_param = next;
        *varargs_start = a;
        slots[next++] = args;  // stands in for the list; collected by the caller
        break;
      }
    }
    // einsum('ij,jk', a, b): a trailing Tensor[] after other parameters may be spelled as
    // separate tensors.
    if (p.type == ParamType::TensorList && next > 0 && next == max_positional_ - 1 &&
        is_tensor(arg)) {
      bool rest_tensors = true;
      for (Py_ssize_t b = a; b < nargs; ++b)
        rest_tensors = rest_tensors && is_tensor(PyTuple_GET_ITEM(args, b));
      if (rest_tensors) {
        *varargs_param = next;
        *varargs_start = a;
        slots[next++] = args;  // replaced by the tuple args[a:] by the caller
        break;
      }
    }
    slots[next++] = arg;
  }
  if (kwargs) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      int found = find_param(key);
      if (found < 0) {
        *why =
            str_cat("got an unexpected keyword argument '", py::str(key).cast<std::string>(), "'");
        return false;
      }
      if (slots[found]) {
        *why = str_cat("got multiple values for argument '", params_[found].name, "'");
        return false;
      }
      slots[found] = value;
    }
  }
  for (int i = 0; i < np; ++i) {
    const Param& p = params_[i];
    if (!slots[i]) {
      if (!p.has_default) {
        *why = str_cat("missing required argument '", p.name, "' (position ", i + 1, ")");
        return false;
      }
      slots[i] = p.default_value.ptr();
      continue;
    }
    if (i == *varargs_param) continue;
    if (!matches(p, slots[i], lenient)) {
      *why = str_cat("argument '", p.name, "' (position ", i + 1, ") must be ", type_name(p.type),
                     (p.optional ? " or None" : ""), ", not ", py_type_name(slots[i]));
      return false;
    }
  }
  return true;
}

const std::vector<Signature>& OverloadSet::sigs() const {
  const std::vector<Signature>* parsed = sigs_.load(std::memory_order_acquire);
  if (FLB_LIKELY(parsed != nullptr)) return *parsed;
  auto* fresh = new std::vector<Signature>();
  for (const char* s : schemas_) fresh->emplace_back(s);
  const std::vector<Signature>* expected = nullptr;
  if (sigs_.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;  // another thread published first (this one yielded the lock meanwhile)
  return *expected;
}

namespace {
bool holds_tensor_like(PyObject* o) {
  if (PyList_Check(o) || PyTuple_Check(o)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject** items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; ++i)
      if (torch_function::is_tensor_like(items[i])) return true;
    return false;
  }
  return torch_function::is_tensor_like(o);
}

bool any_tensor_like(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (!torch_function::enabled()) return false;
  if (self && holds_tensor_like(self)) return true;
  for (Py_ssize_t i = 0; args && i < PyTuple_GET_SIZE(args); ++i)
    if (holds_tensor_like(PyTuple_GET_ITEM(args, i))) return true;
  if (!kwargs) return false;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(kwargs, &pos, &key, &value))
    if (holds_tensor_like(value)) return true;
  return false;
}
}  // namespace

ParsedArgs OverloadSet::parse(PyObject* self, PyObject* args, PyObject* kwargs,
                              bool defer_tensor_likes) const {
  const std::vector<Signature>& overloads = sigs();
  ParsedArgs parsed;
  std::string why;
  for (size_t k = 0; k < 2 * overloads.size(); ++k) {
    const size_t i = k % overloads.size();
    const bool lenient = k >= overloads.size();  // the second pass (see matches)
    std::string reason;
    int varargs_param;
    Py_ssize_t varargs_start;
    if (overloads[i].bind(self, args, kwargs, parsed.slots.data(), &varargs_param, &varargs_start,
                          &reason, lenient)) {
      parsed.overload = static_cast<int>(i);
      parsed.sig = &overloads[i];
      if (varargs_param >= 0 &&
          overloads[i].params()[varargs_param].type == ParamType::TensorList) {
        parsed.varargs_tuple = py::reinterpret_steal<py::object>(
            PyTuple_GetSlice(args, varargs_start, PyTuple_GET_SIZE(args)));
        parsed.slots[varargs_param] = parsed.varargs_tuple.ptr();
      } else if (varargs_param >= 0) {
        DimVector v;
        const Signature& s = overloads[i];
        for (Py_ssize_t a = varargs_start; a < PyTuple_GET_SIZE(args); ++a)
          v.push_back(list_item_int64(PyTuple_GET_ITEM(args, a), s.name(),
                                      s.params()[varargs_param].name, a - varargs_start));
        parsed.varargs_list = v;
        parsed.varargs_index = varargs_param;
      }
      return parsed;
    }
    if (!lenient) why = reason;  // the plain pass's reasons name the problem
  }
  if (!deprecated_.empty() && parse_deprecated(self, args, kwargs, parsed)) return parsed;
  if (defer_tensor_likes && any_tensor_like(self, args, kwargs)) {
    parsed.tensor_like = true;
    return parsed;
  }
  const std::string& name = overloads[0].name();
  if (overloads.size() == 1) fail<TypeError>(name, "(): ", why);
  std::ostringstream os;
  os << name << "() received an invalid combination of arguments; expected one of:";
  for (const Signature& s : overloads) os << "\n * " << s.describe();
  fail<TypeError>(os.str());
}

namespace {
// PyTorch's words for a parameter type in its deprecation warning ("Number alpha").
std::string warning_form(const Signature& sig, bool skip_self) {
  std::string text = sig.name() + sig.describe();
  if (skip_self) {  // a method's form: self is not written
    const std::string& first = sig.params()[0].name;
    for (const char* spelled : {"Tensor ", "Tensor? "}) {
      const std::string piece = std::string(spelled) + first;
      const size_t at = text.find(piece);
      if (at == std::string::npos) continue;
      const size_t end = at + piece.size();
      text.erase(at, end < text.size() && text[end] == ',' ? piece.size() + 2 : piece.size());
      break;
    }
  }
  for (size_t at; (at = text.find("Scalar ")) != std::string::npos;) text.replace(at, 6, "Number");
  return text;
}
}  // namespace

bool OverloadSet::parse_deprecated(PyObject* self, PyObject* args, PyObject* kwargs,
                                   ParsedArgs& parsed) const {
  Deprecated* forms = deprecated_sigs_.load(std::memory_order_acquire);
  if (forms == nullptr) {
    auto* fresh = new Deprecated();
    for (const DeprecatedForm& form : deprecated_) fresh->sigs.emplace_back(form.schema);
    fresh->warned.reset(new std::atomic<bool>[deprecated_.size()]());
    if (deprecated_sigs_.compare_exchange_strong(forms, fresh, std::memory_order_acq_rel))
      forms = fresh;
    else
      delete fresh;  // another thread published first
  }
  const std::vector<Signature>& overloads = sigs();
  for (size_t i = 0; i < deprecated_.size(); ++i) {
    const Signature& form = forms->sigs[i];
    std::array<PyObject*, kMaxParams> bound{};
    int varargs_param;
    Py_ssize_t varargs_start;
    std::string reason;
    if (!form.bind(self, args, kwargs, bound.data(), &varargs_param, &varargs_start, &reason) ||
        varargs_param >= 0)
      continue;
    const Signature& target = overloads[deprecated_[i].target];
    // The target's slots by parameter name; the ones the form lacks keep their defaults.
    for (size_t t = 0; t < target.params().size(); ++t) {
      const Param& want = target.params()[t];
      parsed.slots[t] = want.has_default ? want.default_value.ptr() : Py_None;
      for (size_t f = 0; f < form.params().size(); ++f)
        if (form.params()[f].name == want.name) parsed.slots[t] = bound[f];
    }
    parsed.overload = deprecated_[i].target;
    parsed.sig = &target;
    if (!forms->warned[i].exchange(true)) {
      const std::string message =
          str_cat("This overload of ", form.name(), " is deprecated:\n\t",
                  warning_form(form, self != nullptr),
                  "\nConsider using one of the following signatures instead:\n\t",
                  warning_form(target, self != nullptr));
      if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
    }
    return true;
  }
  return false;
}

void ParsedArgs::type_error(int i, const char* expected) const {
  fail<TypeError>(sig->name(), "(): argument '", sig->params()[i].name, "' must be ", expected,
                  ", not ", py_type_name(slots[i]));
}

Tensor ParsedArgs::tensor(int i) const {
  if (FLB_UNLIKELY(slots[i] == Py_None)) type_error(i, "Tensor");
  return tensor_from_py(slots[i], sig->name().c_str(), sig->params()[i].name.c_str());
}
Tensor ParsedArgs::tensor_or_null(int i) const {
  return slots[i] == Py_None ? Tensor() : tensor(i);
}
std::vector<Tensor> ParsedArgs::tensors(int i) const {
  py::sequence seq = py::reinterpret_borrow<py::sequence>(slots[i]);
  std::vector<Tensor> out;
  out.reserve(seq.size());
  for (py::handle h : seq) out.push_back(h.cast<Tensor>());
  return out;
}
std::vector<Tensor> ParsedArgs::optional_tensors(int i) const {
  py::sequence seq = py::reinterpret_borrow<py::sequence>(slots[i]);
  std::vector<Tensor> out;
  out.reserve(seq.size());
  for (py::handle h : seq) out.push_back(h.is_none() ? Tensor() : h.cast<Tensor>());
  return out;
}
Scalar ParsedArgs::scalar(int i) const {
  return scalar_from_py(slots[i], sig->name().c_str(), sig->params()[i].name.c_str());
}
std::optional<Scalar> ParsedArgs::scalar_opt(int i) const {
  if (slots[i] == Py_None) return std::nullopt;
  return scalar(i);
}
std::vector<Scalar> ParsedArgs::scalars(int i) const {
  py::sequence seq = py::reinterpret_borrow<py::sequence>(slots[i]);
  std::vector<Scalar> out;
  out.reserve(seq.size());
  for (py::handle h : seq)
    out.push_back(scalar_from_py(h.ptr(), sig->name().c_str(), sig->params()[i].name.c_str()));
  return out;
}
int64_t ParsedArgs::int64(int i) const {
  py::object idx = py::reinterpret_steal<py::object>(PyNumber_Index(slots[i]));
  if (!idx) throw py::error_already_set();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
  if (overflow)
    fail<ValueError>(sig->name(), "(): argument '", sig->params()[i].name,
                     "' is out of the int64 range");
  return v;
}
std::optional<int64_t> ParsedArgs::int64_opt(int i) const {
  if (slots[i] == Py_None) return std::nullopt;
  return int64(i);
}
DimVector ParsedArgs::intlist(int i) const {
  if (i == varargs_index) return *varargs_list;
  PyObject* o = slots[i];
  const Param& p = sig->params()[i];
  if (p.list_size > 0 && is_int(o)) return DimVector(static_cast<size_t>(p.list_size), int64(i));
  py::sequence seq = py::reinterpret_borrow<py::sequence>(o);
  DimVector v;
  Py_ssize_t pos = 0;
  for (py::handle h : seq) v.push_back(list_item_int64(h.ptr(), sig->name(), p.name, pos++));
  return v;
}
std::optional<DimVector> ParsedArgs::intlist_opt(int i) const {
  if (i != varargs_index && slots[i] == Py_None) return std::nullopt;
  return intlist(i);
}
double ParsedArgs::f64(int i) const {
  double d = PyFloat_AsDouble(slots[i]);
  if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
  return d;
}
std::optional<double> ParsedArgs::f64_opt(int i) const {
  if (slots[i] == Py_None) return std::nullopt;
  return f64(i);
}
bool ParsedArgs::boolean(int i) const { return slots[i] == Py_True; }
std::optional<bool> ParsedArgs::bool_opt(int i) const {
  if (slots[i] == Py_None) return std::nullopt;
  return boolean(i);
}
std::string ParsedArgs::string(int i) const { return py::str(slots[i]).cast<std::string>(); }
std::optional<std::string> ParsedArgs::string_opt(int i) const {
  if (slots[i] == Py_None) return std::nullopt;
  return string(i);
}
ScalarType ParsedArgs::dtype(int i) const {
  return dtype_from_py(slots[i], sig->name().c_str(), sig->params()[i].name.c_str());
}
std::optional<ScalarType> ParsedArgs::dtype_opt(int i) const {
  if (slots[i] == Py_None) return std::nullopt;
  return dtype(i);
}
std::optional<Device> ParsedArgs::device_opt(int i) const {
  if (slots[i] == Py_None) return std::nullopt;
  return device_from_py(slots[i], sig->name().c_str(), sig->params()[i].name.c_str());
}
Generator* ParsedArgs::generator(int i) const {
  if (slots[i] == Py_None) return &default_generator();
  return py::handle(slots[i]).cast<Generator*>();
}
MemoryFormat ParsedArgs::memory_format(int i) const {
  if (slots[i] == Py_None) return MemoryFormat::Preserve;
  return memory_format_from_py(slots[i], sig->name().c_str(), sig->params()[i].name.c_str());
}
OutArg ParsedArgs::out(int i) const {
  if (slots[i] == Py_None) return OutArg::none();
  FLB_CHECK_T(TypeError, is_tensor(slots[i]), sig->name(),
              "(): argument 'out' must be Tensor, not ", py_type_name(slots[i]));
  Tensor t = py::handle(slots[i]).cast<Tensor>();
  const StorageImpl* mem = t->storage().get();
  auto shares = [&](PyObject* o) {
    return is_tensor(o) && py::handle(o).cast<Tensor>()->storage().get() == mem;
  };
  bool aliases = false;
  // Only the chosen signature's slots: those past it hold what an overload tried before
  // it bound (the out= tensor itself, say).
  const int n = static_cast<int>(sig->params().size());
  for (int j = 0; j < n && !aliases; ++j) {
    PyObject* o = slots[j];
    if (j == i || o == nullptr) continue;
    if (PyList_Check(o) || PyTuple_Check(o)) {  // a tensor list (cat, stack, ...)
      for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(o) && !aliases; ++k)
        aliases = shares(PySequence_Fast_GET_ITEM(o, k));
    } else {
      aliases = shares(o);
    }
  }
  return OutArg::into(std::move(t), aliases);
}

}  // namespace flambeau::python
