// Generator state from Python: seeds over the whole uint64 range (negative
// seeds wrap, as in PyTorch) and the state as a 16-byte uint8 tensor
// (seed, then Philox offset, both little-endian uint64).
#include <pybind11/pybind11.h>

#include <cstring>

#include "python/binding_support.h"
#include "python/registry.h"

namespace flambeau::python {

namespace {

uint64_t seed_from_py(py::handle o) {
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(o.ptr()));
  if (!i) throw py::error_already_set();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow == 0) return static_cast<uint64_t>(v);  // negatives wrap modulo 2**64
  if (overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
    if (!PyErr_Occurred()) return u;
    PyErr_Clear();
  }
  fail<ValueError>(
      "manual_seed: seed must be in the range [-0x8000_0000_0000_0000, "
      "0xffff_ffff_ffff_ffff], got ",
      py::str(o).cast<std::string>());
}

Tensor state_tensor(const Generator& g) {
  Tensor t = flambeau::empty({16}, ScalarType::UInt8);
  uint64_t words[2] = {g.seed(), g.offset()};
  unsigned char* p = t->data_as<unsigned char>();
  for (int w = 0; w < 2; ++w)
    for (int b = 0; b < 8; ++b) p[w * 8 + b] = static_cast<unsigned char>(words[w] >> (8 * b));
  return t;
}

void set_state(Generator& g, py::handle state) {
  if (is_tensor(state.ptr())) {
    Tensor t = state.cast<Tensor>();
    FLB_CHECK_T(TypeError,
                t->dtype() == ScalarType::UInt8 && t->numel() == 16 && t->is_contiguous() &&
                    t->device().is_cpu(),
                "set_state: expected a contiguous uint8 CPU tensor of 16 elements (from "
                "get_state()), got ",
                dtype_name(t->dtype()), " with shape ", shape_str(t->sizes()));
    const unsigned char* p = t->data_as<unsigned char>();
    uint64_t words[2] = {0, 0};
    for (int w = 0; w < 2; ++w)
      for (int b = 0; b < 8; ++b) words[w] |= static_cast<uint64_t>(p[w * 8 + b]) << (8 * b);
    g.set_state(words[0], words[1]);
    return;
  }
  FLB_CHECK_T(TypeError, py::isinstance<py::tuple>(state) && py::len(state) == 2,
              "set_state: expected the uint8 tensor from get_state() or a (seed, offset) tuple, "
              "got ",
              Py_TYPE(state.ptr())->tp_name);
  py::tuple tup = py::reinterpret_borrow<py::tuple>(state);
  g.set_state(seed_from_py(tup[0]), tup[1].cast<uint64_t>());
}

void bind_random_state(py::module_& m, py::object) {
  auto cls = py::reinterpret_borrow<py::class_<Generator, Ref<Generator>>>(m.attr("Generator"));
  // Replace (not overload) module.cpp's versions of these methods.
  for (const char* name : {"manual_seed", "get_state", "set_state"}) py::delattr(cls, name);
  cls.def(
         "manual_seed",
         [](Ref<Generator> g, py::handle seed) {
           g->manual_seed(seed_from_py(seed));
           return g;
         },
         py::arg("seed"), "Seeds the generator (and resets its Philox offset); returns it.")
      .def("get_state", &state_tensor,
           "The state as a uint8 tensor of 16 bytes: seed and Philox offset, little-endian.")
      .def("set_state", &set_state, py::arg("new_state"),
           "Restores a state from get_state() (or a (seed, offset) tuple).")
      .def_property_readonly("_offset", [](const Generator& g) { return g.offset(); });
}

}  // namespace

FLB_BINDINGS(50, bind_random_state);

}  // namespace flambeau::python
