// Helpers of flambeau.serialization: the ZIP checksum (CRC-32) of a buffer, and
// a record read from a file straight into a tensor's memory, checksummed chunk
// by chunk while the bytes are still in cache, over our threads.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "cpu/crc32.h"
#include "cpu/parallel.h"
#include "python/binding_support.h"
#include "python/registry.h"

namespace flambeau::python {

namespace {

// A contiguous buffer (bytes, bytearray, memoryview, NumPy array), held for the scope.
class ByteBuffer {
 public:
  ByteBuffer(py::handle obj, bool writable) {
    if (PyObject_GetBuffer(obj.ptr(), &view_, writable ? PyBUF_WRITABLE : PyBUF_SIMPLE) != 0)
      throw py::error_already_set();
  }
  ~ByteBuffer() { PyBuffer_Release(&view_); }
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  char* data() const { return static_cast<char*>(view_.buf); }
  size_t size() const { return static_cast<size_t>(view_.len); }

 private:
  Py_buffer view_{};
};

uint32_t crc32_of(py::handle data, uint32_t value) {
  ByteBuffer b(data, false);
  py::gil_scoped_release unlocked;
  return crc32_parallel(value, b.data(), b.size());
}

// Reads len(dest) bytes of file descriptor fd from `offset` into dest.
// Returns (bytes read, their CRC-32): fewer bytes than asked means the file
// ends early, and the CRC is then meaningless.
py::tuple read_crc32(int fd, int64_t offset, py::handle dest) {
  ByteBuffer b(dest, true);
  const int64_t n = static_cast<int64_t>(b.size());
  constexpr int64_t kChunk = 1 << 20, kPiece = 1 << 20;
  const int64_t pieces = std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), n / kPiece));
  std::vector<uint32_t> crc(static_cast<size_t>(pieces), 0);
  std::vector<int64_t> got(static_cast<size_t>(pieces), 0), error(static_cast<size_t>(pieces), 0);
  auto bound = [&](int64_t i) { return n / pieces * i + std::min(i, n % pieces); };
  {
    py::gil_scoped_release unlocked;
    parallel_for(0, pieces, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        int64_t pos = bound(i);
        while (pos < bound(i + 1)) {
          const size_t len = static_cast<size_t>(std::min(kChunk, bound(i + 1) - pos));
          const ssize_t r = pread(fd, b.data() + pos, len, static_cast<off_t>(offset + pos));
          if (r < 0 && errno == EINTR) continue;
          if (r <= 0) {
            error[i] = r < 0 ? errno : 0;
            break;
          }
          crc[i] = crc32_update(crc[i], b.data() + pos, static_cast<size_t>(r));
          pos += r;
        }
        got[i] = pos - bound(i);
      }
    });
  }
  int64_t total = 0;
  uint32_t value = 0;
  for (int64_t i = 0; i < pieces; ++i) {
    if (error[i] != 0) {
      errno = static_cast<int>(error[i]);
      PyErr_SetFromErrno(PyExc_OSError);
      throw py::error_already_set();
    }
    value = i == 0 ? crc[0] : crc32_combine(value, crc[i], static_cast<uint64_t>(got[i]));
    total += got[i];
    if (got[i] < bound(i + 1) - bound(i)) break;  // the file ends early
  }
  return py::make_tuple(total, value);
}

void bind_serialization(py::module_& m, py::object) {
  m.def("_crc32", &crc32_of, py::arg("data"), py::arg("value") = 0,
        "CRC-32 of a contiguous buffer, continuing from value (same as zlib.crc32).");
  m.def("_read_crc32", &read_crc32, py::arg("fd"), py::arg("offset"), py::arg("dest"),
        "Reads len(dest) bytes of file descriptor fd at offset into dest: (bytes read, CRC-32).");
}

}  // namespace

FLB_BINDINGS(60, bind_serialization);

}  // namespace flambeau::python
