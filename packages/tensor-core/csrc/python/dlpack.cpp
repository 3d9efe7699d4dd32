// DLPack exchange: Tensor.__dlpack__ / __dlpack_device__ export a tensor
// without copying, and flambeau.from_dlpack imports another library's tensor
// (any object with __dlpack__, or a capsule) without copying.
//
// The ABI below is written from the DLPack specification (v1.0). A producer
// hands out a PyCapsule named "dltensor" (DLManagedTensor) or, when the
// consumer asks for max_version >= (1, 0), "dltensor_versioned"
// (DLManagedTensorVersioned). The consumer renames the capsule to
// "used_dltensor" / "used_dltensor_versioned" and becomes responsible for
// calling the deleter; an unconsumed capsule calls it when it dies.
#include <flambeau/dlpack.h>
#include <pybind11/pybind11.h>

#include <vector>

#include "generated/ops.h"
#include "plugin/backends.h"
#include "python/binding_support.h"
#include "python/registry.h"

namespace flambeau::python {

namespace {

using namespace flambeau::dlpack;  // NOLINT: the ABI's names, declared once

// ---- export ----

// What an exported capsule owns: the managed struct, a reference to the
// storage (the tensor itself may be re-pointed by set_ or `.data =`) and the
// shape/strides arrays.
template <class Managed>
struct Export {
  Managed managed{};
  Storage storage;
  std::vector<int64_t> shape, strides;
};

template <class Managed>
void export_deleter(Managed* self) {
  delete static_cast<Export<Managed>*>(self->manager_ctx);
}

DLDataType dl_dtype(ScalarType t) {
  uint8_t bits = static_cast<uint8_t>(itemsize(t) * 8);
  switch (t) {
    case ScalarType::Bool:
      return {kDLBool, 8, 1};
    case ScalarType::UInt8:
      return {kDLUInt, 8, 1};
    case ScalarType::BFloat16:
      return {kDLBfloat, 16, 1};
    case ScalarType::UInt16:
    case ScalarType::UInt32:
    case ScalarType::UInt64:
      return {kDLUInt, bits, 1};
    case ScalarType::Complex64:
    case ScalarType::Complex128:
    case ScalarType::ComplexHalf:
      return {kDLComplex, bits, 1};
    default:
      if (is_floating(t)) return {kDLFloat, bits, 1};
      if (is_integral(t, false)) return {kDLInt, bits, 1};
      throw py::buffer_error(str_cat("__dlpack__: DLPack has no type for dtype ", dtype_name(t)));
  }
}

DLDevice dl_device(Device d) {
  if (d.is_cpu()) return {kDLCPU, 0};
  if (d.type == kCUDA) return {kDLCUDA, std::max<int32_t>(d.index, 0)};
  fail<TypeError>("__dlpack__: device ", d.str(), " has no DLPack device type");
}

template <class Managed>
Managed* export_tensor(const Tensor& t) {
  auto* ctx = new Export<Managed>();
  ctx->storage = t->storage();
  ctx->storage->mark_exported();  // a reallocation (resize_) must keep this memory
  ctx->shape.assign(t->sizes().begin(), t->sizes().end());
  ctx->strides.assign(t->strides().begin(), t->strides().end());
  DLTensor& dl = ctx->managed.dl_tensor;
  dl.data = t->data();
  dl.device = dl_device(t->device());
  dl.ndim = static_cast<int32_t>(t->dim());
  dl.dtype = dl_dtype(t->dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = &export_deleter<Managed>;
  return &ctx->managed;
}

// Runs the deleter of a capsule nobody consumed.
template <class Managed>
void capsule_destructor(PyObject* capsule, const char* name) {
  if (!PyCapsule_IsValid(capsule, name)) return;  // consumed (renamed): not ours any more
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (m && m->deleter) m->deleter(m);
  PyErr_Restore(type, value, tb);
}
void legacy_capsule_destructor(PyObject* c) { capsule_destructor<DLManagedTensor>(c, kLegacyName); }
void versioned_capsule_destructor(PyObject* c) {
  capsule_destructor<DLManagedTensorVersioned>(c, kVersionedName);
}

py::object dlpack(const Tensor& self, py::handle stream, py::handle max_version,
                  py::handle dl_device_arg, py::handle copy) {
  if (self->requires_grad())  // PyTorch's BufferError, the DLPack protocol's "cannot export"
    throw py::buffer_error("Can't export tensors that require gradient, use tensor.detach()");
  FLB_CHECK_T(TypeError, stream.is_none() || PyLong_Check(stream.ptr()),
              "__dlpack__: stream must be an int or None, not ", Py_TYPE(stream.ptr())->tp_name);
  if (!dl_device_arg.is_none()) {
    auto dev = dl_device_arg.cast<std::pair<int32_t, int32_t>>();
    DLDevice mine = dl_device(self->device());
    if (dev.first != mine.device_type || dev.second != mine.device_id) {
      throw py::buffer_error(str_cat("__dlpack__: can't export a tensor on device ",
                                     self->device().str(), " to DLPack device (", dev.first, ", ",
                                     dev.second, ")"));
    }
  }
  const bool force_copy = !copy.is_none() && PyObject_IsTrue(copy.ptr());
  Tensor t = force_copy ? contiguous_copy(self) : self;
  bool versioned = false;
  if (!max_version.is_none()) {
    auto v = max_version.cast<std::pair<int64_t, int64_t>>();
    versioned = v.first >= 1;
  }
  if (versioned) {
    auto* m = export_tensor<DLManagedTensorVersioned>(t);
    m->version = {kMajorVersion, kMinorVersion};
    m->flags = force_copy ? kFlagIsCopied : 0;
    PyObject* cap = PyCapsule_New(m, kVersionedName, &versioned_capsule_destructor);
    if (!cap) {
      m->deleter(m);
      throw py::error_already_set();
    }
    return py::reinterpret_steal<py::object>(cap);
  }
  auto* m = export_tensor<DLManagedTensor>(t);
  PyObject* cap = PyCapsule_New(m, kLegacyName, &legacy_capsule_destructor);
  if (!cap) {
    m->deleter(m);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(cap);
}

// ---- import ----

ScalarType from_dl_dtype(DLDataType d) {
  FLB_CHECK_T(TypeError, d.lanes == 1, "from_dlpack(): vector dtypes (lanes=", d.lanes,
              ") are not supported");
  switch (d.code) {
    case kDLBool:
      if (d.bits == 8) return ScalarType::Bool;
      break;
    case kDLUInt:
      switch (d.bits) {
        case 8:
          return ScalarType::UInt8;
        case 16:
          return ScalarType::UInt16;
        case 32:
          return ScalarType::UInt32;
        case 64:
          return ScalarType::UInt64;
      }
      break;
    case kDLInt:
      switch (d.bits) {
        case 8:
          return ScalarType::Int8;
        case 16:
          return ScalarType::Int16;
        case 32:
          return ScalarType::Int32;
        case 64:
          return ScalarType::Int64;
      }
      break;
    case kDLFloat:
      switch (d.bits) {
        case 16:
          return ScalarType::Float16;
        case 32:
          return ScalarType::Float32;
        case 64:
          return ScalarType::Float64;
      }
      break;
    case kDLBfloat:
      if (d.bits == 16) return ScalarType::BFloat16;
      break;
    case kDLComplex:
      if (d.bits == 64) return ScalarType::Complex64;
      if (d.bits == 128) return ScalarType::Complex128;
      break;
  }
  fail<TypeError>("from_dlpack(): unsupported DLPack dtype (code=", int(d.code),
                  ", bits=", int(d.bits), ")");
}

// Calls a foreign deleter with the GIL held (NumPy's needs it).
template <class Managed>
void release_managed(void* ctx, void*) {
  if (!Py_IsInitialized()) return;
  py::gil_scoped_acquire gil;
  auto* m = static_cast<Managed*>(ctx);
  if (m->deleter) m->deleter(m);
}

// Wraps a DLTensor in a TensorImpl; nothing is taken over if this throws.
template <class Managed>
Tensor wrap(Managed* m) {
  const DLTensor& dl = m->dl_tensor;
  Device device{};  // CPU (and CUDA's pinned host memory)
  if (dl.device.device_type == kDLCUDA) {
    // Another library's CUDA memory, on the device of the CUDA backend plugin
    // (loaded now if nothing has named the device yet; it raises when missing).
    if (plugin::backend_for(kCUDA) == nullptr)
      py::module_::import("flambeau.backends").attr("load")("cuda");
    FLB_CHECK(plugin::backend_for(kCUDA) != nullptr,
              "from_dlpack(): the tensor is in CUDA memory, which needs flambeau's CUDA "
              "backend (pip install flambeau-tensor-cuda)");
    device = Device{kCUDA, static_cast<int16_t>(dl.device.device_id)};
  } else {
    FLB_CHECK(dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost,
              "from_dlpack(): only CPU and CUDA memory can be imported (got DLPack device "
              "type ",
              dl.device.device_type, ")");
  }
  ScalarType dtype = from_dl_dtype(dl.dtype);
  FLB_CHECK(dl.ndim >= 0, "from_dlpack(): negative ndim ", dl.ndim);
  const size_t nd = static_cast<size_t>(dl.ndim);
  DimVector sizes(IntList(dl.shape, nd));
  DimVector strides = dl.strides ? DimVector(IntList(dl.strides, nd)) : contiguous_strides(sizes);
  int64_t extent = 1;
  for (int32_t d = 0; d < dl.ndim; ++d) {
    FLB_CHECK(sizes[d] >= 0, "from_dlpack(): negative size in shape ", shape_str(sizes));
    if (sizes[d] == 0) extent = 0;
    FLB_CHECK(strides[d] >= 0 || sizes[d] <= 1,
              "from_dlpack(): tensors with negative strides are not supported (strides ",
              shape_str(strides), "); make a contiguous copy first");
    if (sizes[d] <= 1) strides[d] = std::max<int64_t>(strides[d], 0);
  }
  if (extent) {
    for (int32_t d = 0; d < dl.ndim; ++d) extent += (sizes[d] - 1) * strides[d];
  }
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  DataPtr ptr{data, m, &release_managed<Managed>};
  auto storage = make_ref<StorageImpl>(ptr, static_cast<size_t>(extent) * itemsize(dtype), device);
  return make_ref<TensorImpl>(storage, sizes, strides, 0, dtype);
}

Tensor from_capsule(PyObject* cap) {
  if (PyCapsule_IsValid(cap, kVersionedName)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, kVersionedName));
    if (m->version.major != kMajorVersion) {
      throw py::buffer_error(str_cat("from_dlpack(): unsupported DLPack major version ",
                                     m->version.major, " (this library reads ", kMajorVersion,
                                     ")"));
    }
    Tensor t = wrap(m);
    PyCapsule_SetName(cap, kVersionedUsed);
    return t;
  }
  if (PyCapsule_IsValid(cap, kLegacyName)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kLegacyName));
    Tensor t = wrap(m);
    PyCapsule_SetName(cap, kLegacyUsed);
    return t;
  }
  fail<ValueError>(
      "from_dlpack(): the capsule is not an unconsumed DLPack tensor (a capsule "
      "can be consumed only once)");
}

Tensor from_dlpack(py::handle obj) {
  if (PyCapsule_CheckExact(obj.ptr())) return from_capsule(obj.ptr());
  FLB_CHECK_T(TypeError, py::hasattr(obj, "__dlpack__"),
              "from_dlpack(): expected an object with __dlpack__ or a DLPack capsule, got ",
              Py_TYPE(obj.ptr())->tp_name);
  if (py::hasattr(obj, "__dlpack_device__")) {
    auto dev = obj.attr("__dlpack_device__")().cast<std::pair<int32_t, int32_t>>();
    if (dev.first == kDLCUDA)  // loads the CUDA backend plugin, or says it is missing
      py::module_::import("flambeau.backends").attr("load")("cuda");
    FLB_CHECK(dev.first == kDLCPU || dev.first == kDLCUDAHost || dev.first == kDLCUDA,
              "from_dlpack(): only CPU and CUDA memory can be imported (the object is on "
              "DLPack device type ",
              dev.first, ")");
  }
  py::object cap;
  try {
    cap = obj.attr("__dlpack__")(py::arg("max_version") =
                                     py::make_tuple(kMajorVersion, kMinorVersion));
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    cap = obj.attr("__dlpack__")();  // a producer from before DLPack 1.0
  }
  FLB_CHECK_T(TypeError, PyCapsule_CheckExact(cap.ptr()), "from_dlpack(): __dlpack__ returned ",
              Py_TYPE(cap.ptr())->tp_name, ", not a capsule");
  return from_capsule(cap.ptr());
}

void bind_dlpack(py::module_& m, py::object cls_obj) {
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, Tensor>>(cls_obj);
  cls.def("__dlpack__", &dlpack, py::kw_only(), py::arg("stream") = py::none(),
          py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
          py::arg("copy") = py::none(),
          "A DLPack capsule viewing this tensor's memory (a copy with copy=True). With "
          "max_version >= (1, 0) the capsule is 'dltensor_versioned', else 'dltensor'.");
  cls.def(
      "__dlpack_device__",
      [](const Tensor& t) {
        DLDevice d = dl_device(t->device());
        return py::make_tuple(d.device_type, d.device_id);
      },
      "(DLPack device type, device id): (1, 0) for the CPU.");
  m.def("from_dlpack", &from_dlpack, py::arg("ext_tensor"),
        "A tensor sharing the memory of ext_tensor: an object with __dlpack__ (a NumPy array, "
        "another library's tensor) or a DLPack capsule, which is consumed. The producer's "
        "memory stays alive as long as the tensor does.\n\n"
        ">>> import numpy as np\n"
        ">>> a = np.arange(3.0)\n"
        ">>> t = flambeau.from_dlpack(a)\n"
        ">>> a[1] = 10.0\n"
        ">>> t\n"
        "tensor([ 0., 10.,  2.], dtype=flambeau.float64)\n");
}

}  // namespace

FLB_BINDINGS(30, bind_dlpack);

}  // namespace flambeau::python
