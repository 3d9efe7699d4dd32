// Frontends of PyTorch's torch.fft functions (fft_fft, fft_rfft2, ...), composed
// on the three primitives as aten composes them: promote the input's dtype,
// pick the dims and signal sizes from n / s and dim, crop or zero-pad the
// input to them, map norm to a normalization, run the primitive.
#include <algorithm>

#include "generated/ops_complex.h"
#include "generated/ops_fft.h"
#include "generated/ops_nn_resize.h"
#include "ops/common.h"
#include "ops/fft_kernels.h"
#include "ops/fft_util.h"
#include "ops/reduce_util.h"

namespace flambeau {

namespace fft {

DimVector wrap_fft_dims(IntList dims, int64_t ndim, const char* op) {
  DimVector out;
  for (int64_t d : dims) {
    FLB_CHECK_T(IndexError, ndim > 0, "Dimension specified as ", d,
                " but tensor has no dimensions");
    out.push_back(wrap_dim(d, ndim, op));
  }
  DimVector sorted = out;
  std::sort(sorted.begin(), sorted.end());
  FLB_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(),
            "FFT dims must be unique");
  return out;
}

void check_points(int64_t n) {
  FLB_CHECK(n >= 1, "Invalid number of data points (", n, ") specified");
}

void check_supported(ScalarType t) {
  FLB_CHECK(t != ScalarType::Float16 && t != ScalarType::BFloat16, "Unsupported dtype ",
            torch_type_name(t));
}

}  // namespace fft

namespace ops {

namespace {

// Which primitive a public function runs, and how.
enum class Kind : int8_t { C2C, R2C, C2R };
struct Transform {
  Kind kind;
  bool forward;  // a forward transform: norm="backward" leaves it unscaled
  bool conj;     // hfft conjugates its input, ihfft its output
};

constexpr Transform kFft{Kind::C2C, true, false};
constexpr Transform kIfft{Kind::C2C, false, false};
constexpr Transform kRfft{Kind::R2C, true, false};
constexpr Transform kIrfft{Kind::C2R, false, false};
constexpr Transform kHfft{Kind::C2R, true, true};
constexpr Transform kIhfft{Kind::R2C, false, true};

// The dims to transform and the signal size along each (-1: the default).
struct Plan {
  DimVector dims;
  DimVector sizes;
};

Plan plan_1d(const Tensor& x, std::optional<int64_t> n, int64_t dim, const char* op) {
  Plan p{fft::wrap_fft_dims(DimVector{dim}, x->dim(), op), {}};
  if (n) fft::check_points(*n);
  p.sizes.push_back(n.value_or(-1));
  return p;
}

// torch.fft's n-D rule: dim given, or else the last len(s) dims when s is
// given, or else every dim; s (when given) as long as dim.
Plan plan_nd(const Tensor& x, const std::optional<DimVector>& s,
             const std::optional<DimVector>& dim, const char* op) {
  const int64_t ndim = x->dim();
  Plan p;
  if (dim) p.dims = fft::wrap_fft_dims(*dim, ndim, op);
  if (s) {
    const int64_t k = static_cast<int64_t>(s->size());
    if (dim) {
      FLB_CHECK(s->size() == p.dims.size(),
                "When given, dim and shape arguments must have the same length");
    } else {
      FLB_CHECK(k <= ndim, "Got shape with ", k, " values but input tensor only has ", ndim,
                " dimensions.");
      for (int64_t d = ndim - k; d < ndim; ++d) p.dims.push_back(d);
    }
    for (int64_t v : *s) {
      if (v != -1) fft::check_points(v);
    }
    p.sizes = *s;
  } else {
    if (!dim) {
      for (int64_t d = 0; d < ndim; ++d) p.dims.push_back(d);
    }
    p.sizes.assign(p.dims.size(), -1);
  }
  return p;
}

Plan plan_2d(const Tensor& x, const std::optional<DimVector>& s, IntList dim, const char* op) {
  return plan_nd(x, s, DimVector(dim), op);
}

int64_t normalization(const std::optional<std::string>& norm, bool forward) {
  if (!norm || *norm == "backward") return forward ? kFftNormNone : kFftNormByN;
  if (*norm == "forward") return forward ? kFftNormByN : kFftNormNone;
  FLB_CHECK(*norm == "ortho", "Invalid normalization mode: \"", *norm, "\"");
  return kFftNormByRootN;
}

// x cropped or zero-padded at the end of each dims[i] to sizes[i].
Tensor resize_to(const Tensor& x, IntList dims, IntList sizes) {
  DimVector pad(2 * static_cast<size_t>(x->dim()), 0);
  bool changed = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i], grow = sizes[i] - x->sizes()[d];
    pad[2 * static_cast<size_t>(x->dim() - 1 - d) + 1] = grow;
    changed |= grow != 0;
  }
  return changed ? constant_pad_nd(x, pad, Scalar(int64_t(0))) : x;
}

void check_out_dtype(const Transform& t, const OutArg& out, const char* op) {
  if (!out.given()) return;
  const ScalarType o = out.tensor->dtype();
  if (t.kind == Kind::C2R) {
    FLB_CHECK(is_floating(o), op, " expects a floating point output tensor, but got ",
              torch_type_name(o));
  } else {
    FLB_CHECK(is_complex(o), op, " expects a complex output tensor, but got ", torch_type_name(o));
  }
}

Tensor run(const Transform& t, const char* op, const Tensor& input, Plan p,
           const std::optional<std::string>& norm, const OutArg& out) {
  if (t.kind != Kind::C2C) FLB_CHECK(!p.dims.empty(), op, " must transform at least one axis");
  ScalarType dtype = input->dtype();
  if (t.kind == Kind::R2C) {
    FLB_CHECK(!is_complex(dtype), op, " expects a real input tensor, but got ",
              torch_type_name(dtype));
  }
  check_out_dtype(t, out, op);
  // Integers and bool compute in the default float type, as in PyTorch.
  if (is_integral(dtype, true)) dtype = default_dtype();
  fft::check_supported(dtype);
  if (t.kind != Kind::R2C && !is_complex(dtype)) dtype = to_complex(dtype);
  Tensor x = to_dtype(input, dtype);

  for (size_t i = 0; i < p.dims.size(); ++i) {
    if (p.sizes[i] != -1) continue;
    const int64_t here = x->sizes()[p.dims[i]];
    const bool half_spectrum = t.kind == Kind::C2R && i + 1 == p.dims.size();
    p.sizes[i] = half_spectrum ? 2 * (here - 1) : here;
    fft::check_points(p.sizes[i]);
  }
  const int64_t scale = normalization(norm, t.forward);
  Tensor y;
  if (t.kind == Kind::C2C) {
    y = _fft_c2c(resize_to(x, p.dims, p.sizes), p.dims, scale, t.forward);
  } else if (t.kind == Kind::R2C) {
    y = _fft_r2c(resize_to(x, p.dims, p.sizes), p.dims, scale, true);
    if (t.conj) y = conj(y);
  } else {
    const int64_t last_dim_size = p.sizes.back();
    DimVector in_sizes = p.sizes;
    in_sizes[in_sizes.size() - 1] = last_dim_size / 2 + 1;
    x = resize_to(x, p.dims, in_sizes);
    if (t.conj) x = conj(x);
    y = _fft_c2r(x, p.dims, scale, last_dim_size);
  }
  return write_out(out, y, op);
}

}  // namespace

// 1-D transforms.
Tensor fft_fft(const Tensor& input, std::optional<int64_t> n, int64_t dim,
               const std::optional<std::string>& norm, const OutArg& out) {
  return run(kFft, "fft", input, plan_1d(input, n, dim, "fft"), norm, out);
}
Tensor fft_ifft(const Tensor& input, std::optional<int64_t> n, int64_t dim,
                const std::optional<std::string>& norm, const OutArg& out) {
  return run(kIfft, "ifft", input, plan_1d(input, n, dim, "ifft"), norm, out);
}
Tensor fft_rfft(const Tensor& input, std::optional<int64_t> n, int64_t dim,
                const std::optional<std::string>& norm, const OutArg& out) {
  return run(kRfft, "rfft", input, plan_1d(input, n, dim, "rfft"), norm, out);
}
Tensor fft_irfft(const Tensor& input, std::optional<int64_t> n, int64_t dim,
                 const std::optional<std::string>& norm, const OutArg& out) {
  return run(kIrfft, "irfft", input, plan_1d(input, n, dim, "irfft"), norm, out);
}
Tensor fft_hfft(const Tensor& input, std::optional<int64_t> n, int64_t dim,
                const std::optional<std::string>& norm, const OutArg& out) {
  return run(kHfft, "hfft", input, plan_1d(input, n, dim, "hfft"), norm, out);
}
Tensor fft_ihfft(const Tensor& input, std::optional<int64_t> n, int64_t dim,
                 const std::optional<std::string>& norm, const OutArg& out) {
  return run(kIhfft, "ihfft", input, plan_1d(input, n, dim, "ihfft"), norm, out);
}

// 2-D transforms (dims default to the last two).
Tensor fft_fft2(const Tensor& input, const std::optional<DimVector>& s, IntList dim,
                const std::optional<std::string>& norm, const OutArg& out) {
  return run(kFft, "fft2", input, plan_2d(input, s, dim, "fft2"), norm, out);
}
Tensor fft_ifft2(const Tensor& input, const std::optional<DimVector>& s, IntList dim,
                 const std::optional<std::string>& norm, const OutArg& out) {
  return run(kIfft, "ifft2", input, plan_2d(input, s, dim, "ifft2"), norm, out);
}
Tensor fft_rfft2(const Tensor& input, const std::optional<DimVector>& s, IntList dim,
                 const std::optional<std::string>& norm, const OutArg& out) {
  return run(kRfft, "rfft2", input, plan_2d(input, s, dim, "rfft2"), norm, out);
}
Tensor fft_irfft2(const Tensor& input, const std::optional<DimVector>& s, IntList dim,
                  const std::optional<std::string>& norm, const OutArg& out) {
  return run(kIrfft, "irfft2", input, plan_2d(input, s, dim, "irfft2"), norm, out);
}
Tensor fft_hfft2(const Tensor& input, const std::optional<DimVector>& s, IntList dim,
                 const std::optional<std::string>& norm, const OutArg& out) {
  return run(kHfft, "hfft2", input, plan_2d(input, s, dim, "hfft2"), norm, out);
}
Tensor fft_ihfft2(const Tensor& input, const std::optional<DimVector>& s, IntList dim,
                  const std::optional<std::string>& norm, const OutArg& out) {
  return run(kIhfft, "ihfft2", input, plan_2d(input, s, dim, "ihfft2"), norm, out);
}

// N-D transforms.
Tensor fft_fftn(const Tensor& input, const std::optional<DimVector>& s,
                const std::optional<DimVector>& dim, const std::optional<std::string>& norm,
                const OutArg& out) {
  return run(kFft, "fftn", input, plan_nd(input, s, dim, "fftn"), norm, out);
}
Tensor fft_ifftn(const Tensor& input, const std::optional<DimVector>& s,
                 const std::optional<DimVector>& dim, const std::optional<std::string>& norm,
                 const OutArg& out) {
  return run(kIfft, "ifftn", input, plan_nd(input, s, dim, "ifftn"), norm, out);
}
Tensor fft_rfftn(const Tensor& input, const std::optional<DimVector>& s,
                 const std::optional<DimVector>& dim, const std::optional<std::string>& norm,
                 const OutArg& out) {
  return run(kRfft, "rfftn", input, plan_nd(input, s, dim, "rfftn"), norm, out);
}
Tensor fft_irfftn(const Tensor& input, const std::optional<DimVector>& s,
                  const std::optional<DimVector>& dim, const std::optional<std::string>& norm,
                  const OutArg& out) {
  return run(kIrfft, "irfftn", input, plan_nd(input, s, dim, "irfftn"), norm, out);
}
Tensor fft_hfftn(const Tensor& input, const std::optional<DimVector>& s,
                 const std::optional<DimVector>& dim, const std::optional<std::string>& norm,
                 const OutArg& out) {
  return run(kHfft, "hfftn", input, plan_nd(input, s, dim, "hfftn"), norm, out);
}
Tensor fft_ihfftn(const Tensor& input, const std::optional<DimVector>& s,
                  const std::optional<DimVector>& dim, const std::optional<std::string>& norm,
                  const OutArg& out) {
  return run(kIhfft, "ihfftn", input, plan_nd(input, s, dim, "ihfftn"), norm, out);
}

}  // namespace ops

}  // namespace flambeau
