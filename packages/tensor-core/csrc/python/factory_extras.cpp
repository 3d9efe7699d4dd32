// PyTorch's factory keywords (layout=, pin_memory=, out=, empty's memory_format=),
// applied around the factory operators, whose frontends never see them. See
// binding_support.h.
#include "python/binding_support.h"

namespace flambeau::python {

using namespace pybind11::literals;

namespace {

// By bit of FactoryExtra.
constexpr const char* kNames[] = {"layout", "pin_memory", "out", "memory_format"};

}  // namespace

bool has_factory_extras(PyObject* kwargs, unsigned accepted) {
  for (unsigned i = 0; i < 4; ++i)
    if ((accepted >> i) & 1u) {
      PyObject* v = PyDict_GetItemString(kwargs, kNames[i]);  // borrowed
      if (v != nullptr) return true;
    }
  return false;
}

py::object call_with_factory_extras(const char* name, py::args args, py::kwargs kwargs,
                                    unsigned accepted) {
  py::dict kw;
  for (auto item : kwargs) kw[item.first] = item.second;
  // Only the keywords this factory takes; any other goes on to the parser's error.
  auto take = [&](FactoryExtra e, const char* key) -> py::object {
    return (accepted & e) ? kw.attr("pop")(key, py::none()) : py::none();
  };
  py::object layout = take(kFactory_layout, "layout");
  py::object pin = take(kFactory_pin_memory, "pin_memory");
  py::object out = take(kFactory_out, "out");
  py::object memory_format = take(kFactory_memory_format, "memory_format");
  py::module_ flambeau = py::module_::import("flambeau");
  if (!layout.is_none() && !layout.is(flambeau.attr("strided")))
    throw py::value_error(std::string(name) + "(): layout=" + py::str(layout).cast<std::string>() +
                          " is not supported here; sparse tensors are made with "
                          "flambeau.sparse_coo_tensor and its siblings");
  if (!out.is_none()) {
    if (!py::isinstance(out, flambeau.attr("Tensor")))
      throw py::type_error(std::string(name) + "(): argument 'out' must be Tensor, not " +
                           std::string(Py_TYPE(out.ptr())->tp_name));
    py::object dtype = kw.contains("dtype") ? py::object(kw["dtype"]) : py::none();
    if (!dtype.is_none() && !dtype.is(out.attr("dtype")))
      throw std::runtime_error("dtype " + py::str(dtype).cast<std::string>() +
                               " does not match dtype of out parameter (" +
                               py::str(out.attr("dtype")).cast<std::string>() + ")");
    kw["dtype"] = out.attr("dtype");
    if (!kw.contains("device") || kw["device"].is_none()) kw["device"] = out.attr("device");
  }
  py::object result = py::module_::import("flambeau._C").attr(name)(*args, **kw);
  if (!memory_format.is_none())
    result = result.attr("contiguous")("memory_format"_a = memory_format);
  if (!pin.is_none() && pin.cast<bool>()) result = result.attr("pin_memory")();
  if (out.is_none()) return result;
  py::object shape = result.attr("shape");
  if (!py::object(out.attr("shape")).equal(shape)) out.attr("resize_")(shape);
  out.attr("copy_")(result);
  return out;
}

}  // namespace flambeau::python
