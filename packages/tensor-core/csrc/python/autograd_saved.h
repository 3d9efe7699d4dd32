// What a call recorded in C++ keeps for its backward (autograd_record.h): its
// arguments (or, for a tensor whose value no wanted gradient reads, its geometry
// only), their versions, and its outputs. The engine and the native formulas
// read it directly; Python reads it through SavedCall.unpack.
#pragma once
#include <pybind11/pybind11.h>

#include <cstdint>
#include <vector>

#include "python/arg_parser.h"
#include "python/autograd_record.h"

namespace flambeau::python::autograd_record {

// A tensor argument the formula does not read: its geometry only.
struct ArgMeta {
  int index = 0;  // the argument's position
  DimVector sizes;
  ScalarType dtype = ScalarType::Float32;
  Device device{};
};

struct SavedOutput {
  // A C++ alias of the output (holding its Python object would keep the node alive),
  // taken at the call: an in-place view op (y.t_()) or set_ on the output later does
  // not change what the formula reads.
  Tensor tensor;
  uint64_t version = 0;
  py::object value;  // a non-tensor output
};

struct SavedData {
  const Plan* plan = nullptr;
  PyObject* args[kMaxParams] = {};  // owned
  uint64_t versions[kMaxParams] = {};
  uint64_t geometry[kMaxParams] = {};   // tensor args' metadata versions
  std::vector<uint64_t> list_geometry;  // tensor lists' elements' metadata versions, in order
  uint32_t tensors = 0;                 // bit i: args[i] was a tensor at the call
  uint32_t checked = 0;                 // bit i: args[i]'s version is checked at backward
  std::vector<ArgMeta> dropped;         // tensor arguments not kept (args[i] is then None)
  bool tuple_output = false;
  std::vector<SavedOutput> outputs;

  const ArgMeta* dropped_meta(int i) const {
    for (const ArgMeta& m : dropped)
      if (m.index == i) return &m;
    return nullptr;
  }
};

// The recorded call o holds (o is a node's _saved), or nullptr when o is not one.
SavedData* saved_data(PyObject* o);

// Raises the package's error when an argument the formula reads was modified in
// place, or a tensor argument's geometry changed, since the call.
void check_saved(const SavedData& d, PyObject* op);

// The package's TensorMeta for a tensor argument that was not kept.
py::object meta_object(const ArgMeta& m);

}  // namespace flambeau::python::autograd_record
