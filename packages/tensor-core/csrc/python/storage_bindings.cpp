// flambeau.UntypedStorage: a tensor's storage as a Python object (bytes, no dtype), as
// PyTorch's. Beside the public methods it carries the primitives shared memory is built
// on (flambeau/_shared_memory.py): a storage over a Python buffer's memory, moving a
// storage's bytes into such memory in place, and an atomic counter inside a buffer.
#include <pybind11/pybind11.h>

#include <cstring>

#include "generated/ops.h"
#include "python/binding_support.h"
#include "python/registry.h"

namespace flambeau::python {

namespace {

Device device_from_py(const py::object& device) {
  if (device.is_none()) return Device{};
  return py::module_::import("flambeau").attr("device")(device).cast<Device>();
}

// A writable, C-contiguous view of a Python buffer; the caller keeps `owner` (which
// holds the buffer) alive for as long as the memory is used.
py::buffer_info writable_bytes(const py::buffer& buffer, const char* op) {
  py::buffer_info info = buffer.request(/*writable=*/true);
  FLB_CHECK_T(ValueError, info.ndim <= 1 && (info.ndim == 0 || info.strides[0] == info.itemsize),
              op, ": the buffer must be C-contiguous");
  return info;
}

// Memory that a Python object keeps alive: the storage holds a reference to `owner`.
DataPtr borrowed(void* ptr, const py::object& owner) {
  Py_INCREF(owner.ptr());
  return DataPtr{ptr, owner.ptr(), &release_py_owner};
}

void bind_storage(py::module_& m, py::object tensor_cls) {
  py::class_<StorageImpl, Storage> cls(
      m, "UntypedStorage",
      "A block of bytes that tensors view (PyTorch's "
      "torch.UntypedStorage).\n\n"
      ">>> s = flambeau.UntypedStorage([1, 2, 255])\n"
      ">>> s.nbytes(), s[2]\n"
      "(3, 255)\n"
      ">>> flambeau.tensor([1.0, 2.0]).untyped_storage().nbytes()\n"
      "8\n");
  cls.def(py::init([](py::object size, py::object device) {
            Device d = device_from_py(device);
            if (py::isinstance<py::int_>(size)) {
              const int64_t n = size.cast<int64_t>();
              FLB_CHECK(n >= 0, "UntypedStorage(): size must be non-negative, got ", n);
              return make_ref<StorageImpl>(static_cast<size_t>(n), d, allocator_for(d.type));
            }
            // A sequence of byte values, as torch.UntypedStorage([1, 2, 3]).
            FLB_CHECK_T(TypeError, py::isinstance<py::sequence>(size),
                        "UntypedStorage(): expected an int size or a sequence of bytes, got ",
                        std::string(py::str(py::type::of(size).attr("__name__"))));
            auto values = size.cast<py::sequence>();
            const size_t n = values.size();
            auto cpu = make_ref<StorageImpl>(n, Device{}, cpu_allocator());
            auto* bytes = static_cast<uint8_t*>(cpu->data());
            for (size_t i = 0; i < n; ++i) {
              const int64_t v = values[i].cast<int64_t>();
              FLB_CHECK_T(ValueError, v >= 0 && v <= 255,
                          "UntypedStorage(): byte values must be in [0, 255], got ", v);
              bytes[i] = static_cast<uint8_t>(v);
            }
            if (d.is_cpu()) return cpu;
            auto out = make_ref<StorageImpl>(n, d, allocator_for(d.type));
            Tensor from =
                make_ref<TensorImpl>(cpu, IntList{int64_t(n)}, IntList{1}, 0, ScalarType::UInt8);
            Tensor to =
                make_ref<TensorImpl>(out, IntList{int64_t(n)}, IntList{1}, 0, ScalarType::UInt8);
            copy_into(to, from);
            return out;
          }),
          py::arg("size") = 0, py::kw_only(), py::arg("device") = py::none())
      .def("nbytes", &StorageImpl::nbytes)
      .def("size", &StorageImpl::nbytes)
      .def("__len__", &StorageImpl::nbytes)
      .def("data_ptr", [](const Storage& s) { return reinterpret_cast<uintptr_t>(s->data()); })
      .def_property_readonly("device", &StorageImpl::device)
      .def("resizable", &StorageImpl::resizable)
      .def("is_shared", &StorageImpl::shared)
      .def("_cdata", [](const Storage& s) { return reinterpret_cast<uintptr_t>(s.get()); })
      .def(
          "_view",
          [](const Storage& s, py::handle dtype, int64_t offset, std::vector<int64_t> sizes,
             std::vector<int64_t> strides) {
            // A tensor of `dtype` over these bytes; it must fit (views never grow a storage).
            ScalarType t = dtype_from_py(dtype.ptr(), "UntypedStorage._view", "dtype");
            FLB_CHECK(sizes.size() == strides.size(), "_view: unequal size and stride lengths");
            FLB_CHECK(offset >= 0, "_view: negative offset ", offset);
            int64_t end = offset + 1;
            bool empty = false, overflow = false;
            for (size_t i = 0; i < sizes.size(); ++i) {
              FLB_CHECK(sizes[i] >= 0 && strides[i] >= 0, "_view: negative size or stride");
              int64_t span = 0;
              empty |= sizes[i] == 0;
              overflow |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &span) ||
                          __builtin_add_overflow(end, span, &end);
            }
            uint64_t nbytes = 0;
            overflow |= __builtin_mul_overflow(static_cast<uint64_t>(end), itemsize(t), &nbytes);
            FLB_CHECK(!overflow && (empty || nbytes <= s->nbytes()), "_view: the geometry reaches ",
                      "past the storage's ", s->nbytes(), " bytes");
            return make_ref<TensorImpl>(s, IntList(sizes), IntList(strides), offset, t);
          },
          py::arg("dtype"), py::arg("offset"), py::arg("size"), py::arg("stride"))
      .def_static(
          "_from_buffer",
          [](const py::buffer& buffer, const py::object& owner, bool shared) {
            // A storage over a buffer's memory (no copy), keeping `owner` alive; a shared
            // one (memory another process maps) cannot be resized, as in PyTorch.
            py::buffer_info info = writable_bytes(buffer, "UntypedStorage._from_buffer");
            const auto nbytes = static_cast<size_t>(info.size * info.itemsize);
            auto s = make_ref<StorageImpl>(borrowed(info.ptr, owner), nbytes, Device{});
            if (shared) s->mark_shared();
            return s;
          },
          py::arg("buffer"), py::arg("owner"), py::arg("shared"))
      .def(
          "_move_to",
          [](const Storage& s, const py::buffer& buffer, const py::object& owner) {
            // Copies the bytes into the buffer's memory and keeps using that memory from
            // now on: every tensor viewing this storage follows (share_memory_).
            FLB_CHECK(s->device().is_cpu(), "_move_to: only CPU storages move to shared memory");
            py::buffer_info info = writable_bytes(buffer, "UntypedStorage._move_to");
            const auto nbytes = static_cast<size_t>(info.size * info.itemsize);
            FLB_CHECK(nbytes >= s->nbytes(), "_move_to: the buffer holds ", nbytes,
                      " bytes, the storage ", s->nbytes());
            if (s->nbytes() > 0) std::memcpy(info.ptr, s->data(), s->nbytes());
            s->adopt(borrowed(info.ptr, owner), /*shared=*/true);
          },
          py::arg("buffer"), py::arg("owner"))
      .def(
          "_slice",
          [](const Storage& s, int64_t start, int64_t stop) {
            // Bytes [start, stop) as a storage of their own that shares this one's memory.
            FLB_CHECK_T(IndexError,
                        0 <= start && start <= stop && stop <= static_cast<int64_t>(s->nbytes()),
                        "storage slice [", start, ", ", stop, ") is out of range for ", s->nbytes(),
                        " bytes");
            auto* parent = new Storage(s);
            DataPtr data{static_cast<char*>(s->data()) + start, parent,
                         [](void* ctx, void*) { delete static_cast<Storage*>(ctx); }};
            return make_ref<StorageImpl>(data, static_cast<size_t>(stop - start), s->device());
          },
          py::arg("start"), py::arg("stop"))
      .def(
          "_resize_bytes",
          [](const Storage& s, int64_t nbytes) {
            // New memory of `nbytes` holding the old bytes that fit (PyTorch's resize_).
            FLB_CHECK(nbytes >= 0, "resize_: size must be non-negative, got ", nbytes);
            FLB_CHECK(s->resizable(), "Trying to resize storage that is not resizable");
            auto fresh =
                make_ref<StorageImpl>(static_cast<size_t>(nbytes), s->device(), s->allocator());
            const int64_t keep = std::min<int64_t>(nbytes, static_cast<int64_t>(s->nbytes()));
            if (keep > 0) {
              Tensor from =
                  make_ref<TensorImpl>(s, IntList{keep}, IntList{1}, 0, ScalarType::UInt8);
              Tensor to =
                  make_ref<TensorImpl>(fresh, IntList{keep}, IntList{1}, 0, ScalarType::UInt8);
              copy_into(to, from);
            }
            s->take_memory(*fresh);
          },
          py::arg("nbytes"))
      .def("_owner", [](const Storage& s) -> py::object {
        // The Python object a borrowed storage keeps alive (None for allocator memory).
        if (!s->borrowed_from(&release_py_owner)) return py::none();
        return py::reinterpret_borrow<py::object>(static_cast<PyObject*>(s->context()));
      });

  auto tensor = py::reinterpret_borrow<py::class_<TensorImpl, Tensor>>(tensor_cls);
  tensor.def(
      "untyped_storage", [](const Tensor& t) { return t->storage(); },
      "The storage this tensor views.");

  m.def(
      "_atomic_add_int64",
      [](const py::buffer& buffer, int64_t offset, int64_t delta) {
        // Adds to the 8-byte counter at `offset` in a buffer (shared memory that other
        // processes update too) and returns the new value.
        py::buffer_info info = writable_bytes(buffer, "_atomic_add_int64");
        const int64_t nbytes = info.size * info.itemsize;
        FLB_CHECK_T(IndexError, offset >= 0 && offset % 8 == 0 && offset + 8 <= nbytes,
                    "_atomic_add_int64: offset ", offset, " is not an aligned counter in ", nbytes,
                    " bytes");
        auto* counter = reinterpret_cast<int64_t*>(static_cast<char*>(info.ptr) + offset);
        return __atomic_add_fetch(counter, delta, __ATOMIC_ACQ_REL);
      },
      py::arg("buffer"), py::arg("offset"), py::arg("delta"));
}

// _shared_memory.Block's finalizer, in C++. A finalizer written in Python runs bytecode,
// and a Ctrl-C that arrives meanwhile is raised inside it and dropped (an exception
// cannot leave a finalizer): a DataLoader frees blocks at every batch, so its main
// loop missed about one Ctrl-C in a hundred. Run as C, the interrupt stays pending
// until the program's own next bytecode. It drops the block's reference count and
// hands a block of a segment this process allocates from to the arena's `returned`
// deque (set once by _shared_memory); errors (modules torn down at exit) are ignored.
PyObject* g_block_returns = nullptr;  // never freed: finalizers may run at exit

PyObject* release_shared_block(PyObject* /*unused*/, PyObject* block) {
  PyObject* err_type;
  PyObject* err_value;
  PyObject* err_tb;
  PyErr_Fetch(&err_type, &err_value, &err_tb);  // a finalizer keeps the current error
  try {
    py::handle b(block);
    py::object segment = b.attr("segment");
    py::object offset = b.attr("offset");
    py::buffer view = segment.attr("view");
    py::buffer_info info = writable_bytes(view, "Block.__del__");
    const int64_t at = offset.cast<int64_t>();
    const int64_t nbytes = info.size * info.itemsize;
    if (at >= 0 && at % 8 == 0 && at + 8 <= nbytes) {
      auto* counter = reinterpret_cast<int64_t*>(static_cast<char*>(info.ptr) + at);
      const int64_t left = __atomic_add_fetch(counter, -1, __ATOMIC_ACQ_REL);
      const bool reusable =
          segment.attr("owned").cast<bool>() && !segment.attr("dedicated").cast<bool>();
      if (reusable && g_block_returns != nullptr)
        py::handle(g_block_returns)
            .attr("append")(py::make_tuple(segment, offset, b.attr("nbytes"), left));
    }
  } catch (...) {
    PyErr_Clear();
  }
  PyErr_Restore(err_type, err_value, err_tb);
  Py_RETURN_NONE;
}

PyMethodDef g_release_shared_block_def = {"__del__", release_shared_block, METH_O,
                                          "Releases this block (see storage_bindings.cpp)."};

// Calls fn(arg) when it dies, from C++: the owner of a borrowed storage that must hand
// something back when the storage dies (a DataLoader's ring slot: `returned.append(slot)`
// with a deque's C method runs no bytecode, so, as for blocks above, a Ctrl-C is never
// lost in it). `keep` stays alive until then (the ring whose memory the storage views).
class ReleaseCall {
 public:
  ReleaseCall(py::object fn, py::object arg, py::object keep)
      : fn_(std::move(fn)), arg_(std::move(arg)), keep_(std::move(keep)) {}
  ReleaseCall(const ReleaseCall&) = delete;
  ReleaseCall& operator=(const ReleaseCall&) = delete;
  ~ReleaseCall() {
    PyObject* err_type;
    PyObject* err_value;
    PyObject* err_tb;
    PyErr_Fetch(&err_type, &err_value, &err_tb);
    PyObject* result = PyObject_CallOneArg(fn_.ptr(), arg_.ptr());
    if (result == nullptr) PyErr_Clear();  // interpreter shutdown: nothing to give back to
    Py_XDECREF(result);
    PyErr_Restore(err_type, err_value, err_tb);
  }

 private:
  py::object fn_, arg_, keep_;
};

void bind_shared_blocks(py::module_& m, py::object /*tensor_cls*/) {
  py::class_<ReleaseCall>(m, "_ReleaseCall",
                          "fn(arg) when this object dies, run from C++ (storage_bindings.cpp).")
      .def(py::init<py::object, py::object, py::object>(), py::arg("fn"), py::arg("arg"),
           py::arg("keep") = py::none());
  // A method (instancemethod binds self), to be set as Block.__del__.
  py::object fn =
      py::reinterpret_steal<py::object>(PyCFunction_New(&g_release_shared_block_def, nullptr));
  m.attr("_shared_block_finalizer") =
      py::reinterpret_steal<py::object>(PyInstanceMethod_New(fn.ptr()));
  m.def("_set_shared_block_returns", [](py::handle deque) {
    Py_XDECREF(g_block_returns);
    g_block_returns = deque.inc_ref().ptr();
  });
}

FLB_BINDINGS(20, bind_storage);
FLB_BINDINGS(21, bind_shared_blocks);

}  // namespace

}  // namespace flambeau::python
