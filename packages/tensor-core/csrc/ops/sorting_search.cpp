// Frontends of searching and counting: searchsorted, bucketize, bincount, histc.
#include <cmath>

#include "generated/kernels.h"
#include "generated/ops_shape.h"
#include "generated/ops_sorting.h"
#include "generated/ops_tensor.h"
#include "ops/sorting_kernels.h"
#include "plugin/foreign_call.h"

namespace flambeau::ops {

namespace {

Tensor search(const char* name, const Tensor& seq, const Tensor& input, bool out_int32, bool right,
              const Tensor& sorter, const OutArg& out) {
  FLB_CHECK(!is_complex(seq->dtype()) && !is_complex(input->dtype()), name,
            "(): does not support complex inputs");
  FLB_CHECK(seq->dim() >= 1, name, "(): boundaries tensor should have at least one dimension");
  const bool scalar = input->is_wrapped_number();
  FLB_CHECK(!scalar || seq->dim() == 1, name,
            "(): input value can be a scalar only when boundaries tensor dimension is 1, but we "
            "got boundaries tensor dim(",
            seq->dim(), ")");
  if (seq->dim() > 1) {
    bool fits = input->dim() == seq->dim();
    for (int64_t i = 0; fits && i + 1 < seq->dim(); ++i)
      fits = input->sizes()[i] == seq->sizes()[i];
    FLB_CHECK(fits, name,
              "(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
              "boundaries tensor and input value tensor must match, but we got boundaries tensor ",
              shape_str(seq->sizes()), " and input value tensor ", shape_str(input->sizes()));
  }
  if (sorter) {
    FLB_CHECK(sorter->dtype() == ScalarType::Int64, name, "(): sorter must be a tensor of int64");
    FLB_CHECK(sorter->sizes() == seq->sizes(), name,
              "(): boundary and sorter must have the same size, but got boundary tensor ",
              shape_str(seq->sizes()), " and sorter tensor ", shape_str(sorter->sizes()));
  }
  // A Python number as input is a 0-dim CPU tensor: the work goes where the sequence is.
  const Device dev = common_device({&seq, &input, &sorter}, name);
  const ScalarType t = result_type({&seq, &input});
  const int64_t s = seq->sizes()[seq->dim() - 1];
  int64_t seq_rows = 1;
  for (int64_t i = 0; i + 1 < seq->dim(); ++i) seq_rows *= seq->sizes()[i];
  const int64_t m =
      seq->dim() == 1 ? input->numel() : (input->dim() ? input->sizes()[input->dim() - 1] : 1);
  const int64_t rows = seq->dim() == 1 ? 1 : seq_rows;
  Tensor sq = ops::reshape(ops::contiguous(to_dtype(seq, t)), DimVector{seq_rows, s});
  Tensor vals = ops::reshape(ops::contiguous(to_dtype(input, t)), DimVector{rows, m});
  vals = copy_to(vals, dev);
  Tensor srt = sorter ? ops::reshape(ops::contiguous(sorter), DimVector{seq_rows, s}) : Tensor();
  const ScalarType rt = out_int32 ? ScalarType::Int32 : ScalarType::Int64;
  Tensor r = empty(DimVector{rows, m}, rt, dev);
  if (r->numel() > 0) kernel<kernels::searchsorted>(dev)(r, sq, vals, srt, right);
  Tensor result = ops::reshape(r, input->sizes());
  if (!out.given()) return result;
  FLB_CHECK(out.tensor->dtype() == rt, name, "(): output tensor's dtype is wrong, it should be ",
            dtype_name(rt), " (out_int32=", out_int32 ? "True" : "False", "), got ",
            dtype_name(out.tensor->dtype()));
  return write_out(out, result, name);
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& input, bool out_int32, bool right,
                    const std::optional<std::string>& side, const Tensor& sorter,
                    const OutArg& out) {
  if (side) {
    FLB_CHECK(*side == "left" || *side == "right",
              "searchsorted(): side can only be 'left' or 'right' but got '", *side, "'");
    FLB_CHECK(!(right && *side == "left"),
              "searchsorted(): side and right can't be set to opposites, got side of left while "
              "right was True");
    right = *side == "right";
  }
  return search("searchsorted", sorted_sequence, input, out_int32, right, sorter, out);
}

Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32, bool right,
                 const OutArg& out) {
  FLB_CHECK(boundaries->dim() == 1,
            "bucketize(): boundaries tensor must be 1 dimension, but got dim(", boundaries->dim(),
            ")");
  return search("bucketize", boundaries, input, out_int32, right, Tensor(), out);
}

Tensor bincount(const Tensor& input, const Tensor& weights, int64_t minlength) {
  FLB_CHECK(input->dim() == 1 && is_integral(input->dtype(), false),
            "bincount(): only supports 1-d non-negative integral inputs, got a ",
            dtype_name(input->dtype()), " tensor of shape ", shape_str(input->sizes()));
  FLB_CHECK(minlength >= 0, "bincount(): minlength should be >= 0, got ", minlength);
  if (weights) {
    FLB_CHECK(weights->dim() == 1 && weights->sizes()[0] == input->sizes()[0],
              "bincount(): weights should be 1-d and have the same length as input, got ",
              shape_str(weights->sizes()), " and ", shape_str(input->sizes()));
    FLB_CHECK(!is_complex(weights->dtype()), "bincount(): weights must be real");
  }
  Tensor idx = ops::contiguous(to_dtype(input, ScalarType::Int64));
  // The output's length is read from the values: a device's are copied to the host.
  Tensor host = ops::cpu(idx);
  const int64_t* p = host->data_as<int64_t>();
  int64_t top = -1;
  for (int64_t i = 0; i < idx->numel(); ++i) {
    FLB_CHECK(p[i] >= 0, "bincount(): only supports 1-d non-negative integral inputs, got ", p[i]);
    top = std::max(top, p[i]);
  }
  const int64_t length = std::max(top + 1, minlength);
  ScalarType rt = ScalarType::Int64;
  Tensor w;
  if (weights) {
    rt = weights->dtype() == ScalarType::Float32 ? ScalarType::Float32 : ScalarType::Float64;
    w = ops::contiguous(to_dtype(weights, rt));
  }
  Tensor out = empty(DimVector{length}, rt, input->device());
  kernel<kernels::bincount>(input->device())(out, idx, w);
  return out;
}

Tensor histc(const Tensor& input, int64_t bins, const Scalar& min, const Scalar& max,
             const OutArg& out) {
  FLB_CHECK(is_floating(input->dtype()), "histc(): expected a floating point input, got ",
            dtype_name(input->dtype()));
  FLB_CHECK(bins > 0, "histc(): bins must be > 0, but got ", bins);
  Tensor x = ops::contiguous(to_dtype(input, ScalarType::Float64));
  double lo = min.to_double(), hi = max.to_double();
  if (lo == hi && x->numel() > 0 && x->device().has_data()) {  // the data's range (NaN ignored)
    Tensor host = ops::cpu(x);                                 // the range is read on the host
    const double* p = host->data_as<double>();
    double a = INFINITY, b = -INFINITY;
    for (int64_t i = 0; i < x->numel(); ++i) {
      if (std::isnan(p[i])) continue;
      a = std::min(a, p[i]);
      b = std::max(b, p[i]);
    }
    if (a <= b) lo = a, hi = b;
  }
  if (lo == hi) lo -= 1, hi += 1;
  FLB_CHECK(std::isfinite(lo) && std::isfinite(hi), "histc(): range of [", lo, ", ", hi,
            "] is not finite");
  FLB_CHECK(lo < hi, "histc(): max must be larger than min, got min ", lo, " and max ", hi);
  Tensor r = empty(DimVector{bins}, input->dtype(), input->device());
  kernel<kernels::histc>(input->device())(r, x, lo, hi);
  return write_out(out, r, "histc");
}

}  // namespace flambeau::ops
