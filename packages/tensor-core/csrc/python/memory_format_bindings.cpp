// flambeau.memory_format and its four singletons (contiguous_format, preserve_format,
// channels_last, channels_last_3d), as torch.memory_format; Tensor.is_contiguous(memory_format).
#include <pybind11/pybind11.h>

#include "ops/memory_format.h"
#include "python/binding_support.h"
#include "python/registry.h"

namespace flambeau::python {

namespace {

struct MemoryFormatObject {
  MemoryFormat value;
};

void bind_memory_formats(py::module_& m, py::object tensor_cls) {
  py::class_<MemoryFormatObject> cls(m, "memory_format");
  cls.def(py::init([]() -> MemoryFormatObject* {
       throw py::type_error("cannot create 'flambeau.memory_format' instances");
     }))
      .def("__repr__",
           [](const MemoryFormatObject& f) {
             return std::string("flambeau.") + memory_format_name(f.value);
           })
      // Pickles (and copies) by name: the singleton comes back.
      .def("__reduce__",
           [](const MemoryFormatObject& f) { return std::string(memory_format_name(f.value)); });
  cls.attr("__module__") = "flambeau";
  for (int i = 0; i < kNumMemoryFormats; ++i) {
    auto f = static_cast<MemoryFormat>(i);
    py::object obj = py::cast(MemoryFormatObject{f});
    m.attr(memory_format_name(f)) = obj;
    set_memory_format_object(f, obj.release().ptr());  // kept for the process's lifetime
  }

  auto tensor = py::reinterpret_borrow<py::class_<TensorImpl, Tensor>>(tensor_cls);
  tensor.def(
      "is_contiguous",
      [](py::handle self, py::args args, py::kwargs kwargs) {
        static const OverloadSet sigs(
            {"is_contiguous(Tensor self, *, MemoryFormat memory_format=contiguous_format)"});
        ParsedArgs p = sigs.parse(self.ptr(), args.ptr(), kwargs.ptr());
        return is_contiguous_in(p.tensor(0), p.memory_format(1));
      },
      "is_contiguous(*, memory_format=flambeau.contiguous_format) -> bool\n\n"
      "True if self's strides are those of memory_format (row-major by default).");
}

}  // namespace

FLB_BINDINGS(5, bind_memory_formats);

}  // namespace flambeau::python
