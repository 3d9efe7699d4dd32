// Operators that cut a tensor into a tuple of views: unbind, split, chunk, tensor_split.
#include <vector>

#include "generated/ops.h"
#include "ops/shape_util.h"

namespace flambeau::ops {

namespace {
int64_t split_dim(const Tensor& t, int64_t dim, const char* op) {
  FLB_CHECK(t->dim() > 0, op, " expects at least a 1-dimensional tensor");
  return wrap_dim(dim, t->dim(), op);
}
}  // namespace

std::vector<Tensor> unbind(const Tensor& input, int64_t dim) {
  FLB_CHECK_T(IndexError, input->dim() > 0, "Dimension specified as ", dim,
              " but tensor has no dimensions");
  int64_t d = wrap_dim(dim, input->dim(), "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < input->sizes()[d]; ++i) out.push_back(select(input, d, i));
  return out;
}

std::vector<Tensor> split(const Tensor& tensor, int64_t split_size, int64_t dim) {
  int64_t d = split_dim(tensor, dim, "split");
  int64_t size = tensor->sizes()[d];
  FLB_CHECK(split_size >= 0,
            "split expects split_size be non-negative, but got split_size=", split_size);
  FLB_CHECK(split_size > 0 || size == 0,
            "split_size can only be 0 if dimension size is 0, but got dimension size of ", size);
  int64_t n = split_size == 0 ? 1 : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < n; ++i) {
    int64_t start = i * split_size;
    out.push_back(narrow(tensor, d, start, std::min(split_size, size - start)));
  }
  return out;
}

std::vector<Tensor> split_sizes(const Tensor& tensor, IntList sizes, int64_t dim) {
  int64_t d = split_dim(tensor, dim, "split_with_sizes");
  int64_t size = tensor->sizes()[d], total = 0;
  for (int64_t s : sizes) {
    FLB_CHECK(s >= 0, "split_with_sizes expects split_sizes have only non-negative entries, ",
              "but got split_sizes=", shape_str(sizes));
    total += s;
  }
  FLB_CHECK(total == size, "split_with_sizes expects split_sizes to sum exactly to ", size,
            " (input tensor's size at dimension ", d, "), but got split_sizes=", shape_str(sizes));
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(narrow(tensor, d, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& input, int64_t chunks, int64_t dim) {
  FLB_CHECK(input->dim() > 0, "chunk expects at least a 1-dimensional tensor");
  FLB_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  int64_t d = wrap_dim(dim, input->dim(), "chunk");
  int64_t size = input->sizes()[d];
  int64_t split_size = size / chunks + (size % chunks != 0);  // ceil, for any chunks
  // All-empty chunks: keep their number, as PyTorch does.
  if (split_size == 0 && size == 0) return split_sizes(input, DimVector(chunks, 0), d);
  return split(input, split_size, d);
}

std::vector<Tensor> tensor_split(const Tensor& input, int64_t sections, int64_t dim) {
  FLB_CHECK(input->dim() > 0,
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  FLB_CHECK(sections > 0, "number of sections must be larger than 0, got ", sections);
  int64_t d = wrap_dim(dim, input->dim(), "tensor_split");
  int64_t size = input->sizes()[d];
  int64_t base = size / sections, extra = size % sections, start = 0;
  std::vector<Tensor> out;
  for (int64_t i = 0; i < sections; ++i) {
    int64_t len = base + (i < extra ? 1 : 0);
    out.push_back(narrow(input, d, start, len));
    start += len;
  }
  return out;
}

std::vector<Tensor> tensor_split_indices(const Tensor& input, IntList indices, int64_t dim) {
  FLB_CHECK(input->dim() > 0,
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  int64_t d = wrap_dim(dim, input->dim(), "tensor_split");
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t end : indices) {
    out.push_back(slice_view(input, d, start, end, 1));
    start = end;
  }
  out.push_back(slice_view(input, d, start, input->sizes()[d], 1));
  return out;
}

}  // namespace flambeau::ops
