// The FFT primitives on cuFFT (complex64/complex128 and their real dtypes), with
// the CPU kernels' meaning (ops/fft_kernels.h in the core): out gets the DFT of
// `in` over `dims` (exp(-2 pi i jk / n) forward), scaled by 1, 1/sqrt(n) or 1/n
// (normalization 0, 1, 2; n the product of the signal's sizes over dims).
//
// The input, of any strides, is first packed into a dense buffer whose dims are
// the untransformed ones (in order) followed by `dims` (in the order given, so the
// half-spectrum dim of r2c/c2r comes last); cuFFT then runs the plans of
// fft_plan.h (the last three dims as one batched plan, any further dim one at a
// time in place). The result is scaled, and copied into out unless out itself was
// the buffer (dims already last and in order). Two-sided r2c runs c2c on the input
// made complex. Complex elements move through the copy_ kernel as pairs of reals.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/cufft_plans.h"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/fft_plan.h"
#include "backend/kernels/kernels.h"
#include "backend/kernels/linalg_fft_kernels.h"
#include "backend/kernels/strided_index.h"
#include "backend/state.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

#define FLB_TRY(expr)                                    \
  do {                                                   \
    if (flb_status s_ = (expr); s_ != FLB_OK) return s_; \
  } while (0)

// A strided view of reals (a complex tensor's elements as (re, im) pairs along an
// extra last dim of size 2), for the copy_ kernel.
struct Layout {
  void* data = nullptr;
  int32_t dtype = FLB_FLOAT32;
  std::vector<int64_t> sizes, strides;
};

// t's elements with its dims in `perm`'s order, as reals of dtype `real`.
Layout strided_view(const flb_tensor& t, const std::vector<int>& perm, bool complex, int32_t real) {
  Layout l;
  l.data = t.data;
  l.dtype = real;
  for (int d : perm) {
    l.sizes.push_back(t.sizes[d]);
    l.strides.push_back(t.strides[d] * (complex ? 2 : 1));
  }
  if (complex) {
    l.sizes.push_back(2);
    l.strides.push_back(1);
  }
  return l;
}

// A dense buffer of (permuted) sizes as reals; real_part_only: the real parts of
// its complex elements.
Layout dense_view(void* data, const std::vector<int64_t>& sizes, bool complex, int32_t real,
                  bool real_part_only = false) {
  Layout l;
  l.data = data;
  l.dtype = real;
  l.sizes = sizes;
  l.strides.assign(sizes.size(), 1);
  int64_t step = complex ? 2 : 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    l.strides[i] = step;
    step *= sizes[i];
  }
  if (complex && !real_part_only) {
    l.sizes.push_back(2);
    l.strides.push_back(1);
  }
  return l;
}

// dst = src through the copy_ kernel on the call's stream.
flb_status copy_view(const flb_kernel_call* c, const Layout& dst, const Layout& src) {
  flb_tensor pair[2] = {c->tensors[0], c->tensors[0]};
  const Layout* views[2] = {&dst, &src};
  for (int i = 0; i < 2; ++i) {
    pair[i].data = views[i]->data;
    pair[i].dtype = views[i]->dtype;
    pair[i].ndim = static_cast<int32_t>(views[i]->sizes.size());
    pair[i].sizes = views[i]->sizes.data();
    pair[i].strides = views[i]->strides.data();
  }
  flb_kernel_call copy_call = *c;
  copy_call.n_tensors = 2;
  copy_call.tensors = pair;
  copy_call.n_scalars = 0;
  copy_call.n_ints = 0;
  return copy(nullptr, &copy_call);
}

template <class R>
__global__ void scale_kernel(R* data, int64_t count, R factor) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step)
    data[i] *= factor;
}

template <class R>
struct FftTypes;
template <>
struct FftTypes<float> {
  using Complex = cufftComplex;
  static constexpr int32_t real = FLB_FLOAT32;
  static constexpr cufftType c2c = CUFFT_C2C, r2c = CUFFT_R2C, c2r = CUFFT_C2R;
};
template <>
struct FftTypes<double> {
  using Complex = cufftDoubleComplex;
  static constexpr int32_t real = FLB_FLOAT64;
  static constexpr cufftType c2c = CUFFT_Z2Z, r2c = CUFFT_D2Z, c2r = CUFFT_Z2D;
};

// One transform's work on the call's stream.
template <class R>
class Fft {
 public:
  using Complex = typename FftTypes<R>::Complex;

  explicit Fft(const flb_kernel_call* c) : c_(c), stream_(static_cast<cudaStream_t>(c->stream)) {}

  flb_status allocate(DeviceBuffer* buffer, size_t bytes) const {
    return buffer->allocate(c_->device_index, bytes, stream_, c_->op);
  }

  // Runs plan g `count` times, the k-th on in + k * step and out + k * step
  // (elements of each side's type); direction for c2c.
  flb_status exec(const FftGeometry& g, void* in, void* out, int direction, int64_t count = 1,
                  int64_t in_step = 0, int64_t out_step = 0) const {
    CufftLease lease;
    std::string error;
    if (!cufft_plan(c_->device_index, stream_, g, &lease, &error))
      return kernel_fail(FLB_ERROR, c_->op, error);
    DeviceBuffer work;
    FLB_TRY(allocate(&work, lease.work_bytes));
    const CufftApi& api = *lease.api;
    cufftResult r = api.set_work_area(lease.plan, work.get());
    for (int64_t k = 0; k < count && r == CUFFT_SUCCESS; ++k) {
      if (g.type == FftTypes<R>::c2c) {
        Complex* i = static_cast<Complex*>(in) + k * in_step;
        Complex* o = static_cast<Complex*>(out) + k * out_step;
        if constexpr (std::is_same_v<R, float>)
          r = api.exec_c2c(lease.plan, i, o, direction);
        else
          r = api.exec_z2z(lease.plan, i, o, direction);
      } else if (g.type == FftTypes<R>::r2c) {
        R* i = static_cast<R*>(in) + k * in_step;
        Complex* o = static_cast<Complex*>(out) + k * out_step;
        if constexpr (std::is_same_v<R, float>)
          r = api.exec_r2c(lease.plan, i, o);
        else
          r = api.exec_d2z(lease.plan, i, o);
      } else {
        Complex* i = static_cast<Complex*>(in) + k * in_step;
        R* o = static_cast<R*>(out) + k * out_step;
        if constexpr (std::is_same_v<R, float>)
          r = api.exec_c2r(lease.plan, i, o);
        else
          r = api.exec_z2d(lease.plan, i, o);
      }
    }
    if (r != CUFFT_SUCCESS) return kernel_fail(FLB_ERROR, c_->op, cufft_error("cufftExec", r));
    return launch_status(c_->op);
  }

  // Runs fft_plan.h's steps: c2c in place on `spectrum`, r2c from `real` into
  // `spectrum`, c2r from `spectrum` into `real`.
  flb_status run(const std::vector<FftPlanStep>& steps, void* real, void* spectrum,
                 int direction) const {
    for (const FftPlanStep& step : steps) {
      FftGeometry g;
      g.type = step.kind == FftKind::kC2C   ? FftTypes<R>::c2c
               : step.kind == FftKind::kR2C ? FftTypes<R>::r2c
                                            : FftTypes<R>::c2r;
      g.rank = step.rank;
      for (int i = 0; i < 3; ++i) {
        g.n[i] = step.n[i];
        g.inembed[i] = step.inembed[i];
        g.onembed[i] = step.onembed[i];
      }
      g.istride = step.istride;
      g.idist = step.idist;
      g.ostride = step.ostride;
      g.odist = step.odist;
      g.batch = step.batch;
      void* in = step.kind == FftKind::kR2C ? real : spectrum;
      void* out = step.kind == FftKind::kC2R ? real : spectrum;
      FLB_TRY(exec(g, in, out, direction, step.count, step.in_step, step.out_step));
    }
    return FLB_OK;
  }

  flb_status scale(void* data, int64_t count, double factor) const {
    if (factor == 1.0 || count == 0) return FLB_OK;
    scale_kernel<R><<<blocks_for(count), kThreads, 0, stream_>>>(static_cast<R*>(data), count,
                                                                 static_cast<R>(factor));
    return launch_status(c_->op);
  }

 private:
  const flb_kernel_call* c_;
  cudaStream_t stream_;
};

// The dims and scaling of a call: ints [normalization, (flag,) dims...].
struct FftCall {
  int64_t normalization = 0;
  bool flag = false;
  std::vector<int> dims;  // transformed, in the order given
  std::vector<int> perm;  // untransformed dims, then dims
  bool identity = false;  // perm is 0, 1, ..., ndim - 1
};

flb_status parse(const flb_kernel_call* c, bool has_flag, FftCall* f) {
  if (c->n_tensors != 2) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected [out, in]");
  const int first_dim = has_flag ? 2 : 1;
  if (c->n_ints <= first_dim)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected [normalization, dims...]");
  f->normalization = c->ints[0];
  f->flag = has_flag && c->ints[1] != 0;
  const int ndim = c->tensors[1].ndim;
  std::vector<bool> used(static_cast<size_t>(ndim), false);
  for (int i = first_dim; i < c->n_ints; ++i) {
    const int64_t d = c->ints[i];
    if (d < 0 || d >= ndim || used[d])
      return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "bad transform dims");
    used[d] = true;
    f->dims.push_back(static_cast<int>(d));
  }
  f->perm = fft_permutation(ndim, f->dims);
  f->identity = true;
  for (int d = 0; d < ndim; ++d) f->identity = f->identity && f->perm[d] == d;
  return FLB_OK;
}

// The factor of a normalization for n signal points.
double norm_factor(int64_t normalization, double n) {
  if (normalization == 1) return 1.0 / std::sqrt(n);
  if (normalization == 2) return 1.0 / n;
  return 1.0;
}

std::vector<int64_t> permuted(const flb_tensor& t, const std::vector<int>& perm) {
  std::vector<int64_t> s;
  for (int d : perm) s.push_back(t.sizes[d]);
  return s;
}

template <class R>
flb_status c2c_typed(const flb_kernel_call* c, const FftCall& f) {
  using Types = FftTypes<R>;
  const flb_tensor &out = c->tensors[0], &in = c->tensors[1];
  Fft<R> fft(c);
  const std::vector<int64_t> sizes = permuted(in, f.perm);
  const size_t k = f.dims.size();
  const int64_t count = numel(in);
  const bool direct = f.identity && dense(out);
  DeviceBuffer scratch;
  if (!direct) FLB_TRY(fft.allocate(&scratch, static_cast<size_t>(count) * 2 * sizeof(R)));
  void* work = direct ? out.data : scratch.get();
  FLB_TRY(copy_view(c, dense_view(work, sizes, true, Types::real),
                    strided_view(in, f.perm, true, Types::real)));
  FLB_TRY(fft.run(fft_plan_steps(FftKind::kC2C, sizes, k), nullptr, work,
                  f.flag ? CUFFT_FORWARD : CUFFT_INVERSE));
  const double n = static_cast<double>(fft_product(sizes, sizes.size() - k, sizes.size()));
  FLB_TRY(fft.scale(work, 2 * count, norm_factor(f.normalization, n)));
  if (direct) return FLB_OK;
  return copy_view(c, strided_view(out, f.perm, true, Types::real),
                   dense_view(work, sizes, true, Types::real));
}

template <class R>
flb_status r2c_typed(const flb_kernel_call* c, const FftCall& f) {
  using Types = FftTypes<R>;
  const flb_tensor &out = c->tensors[0], &in = c->tensors[1];
  Fft<R> fft(c);
  const std::vector<int64_t> in_sizes = permuted(in, f.perm), out_sizes = permuted(out, f.perm);
  const size_t k = f.dims.size();
  const int64_t out_count = numel(out);
  const bool direct = f.identity && dense(out);
  DeviceBuffer scratch, real_buffer;
  if (!direct) FLB_TRY(fft.allocate(&scratch, static_cast<size_t>(out_count) * 2 * sizeof(R)));
  void* work = direct ? out.data : scratch.get();
  if (!f.flag) {
    // Two-sided: the full spectrum of the input made complex.
    if (cudaMemsetAsync(work, 0, static_cast<size_t>(out_count) * 2 * sizeof(R),
                        static_cast<cudaStream_t>(c->stream)) != cudaSuccess)
      return launch_status(c->op);
    FLB_TRY(copy_view(c, dense_view(work, in_sizes, true, Types::real, true),
                      strided_view(in, f.perm, false, Types::real)));
    FLB_TRY(fft.run(fft_plan_steps(FftKind::kC2C, out_sizes, k), nullptr, work, CUFFT_FORWARD));
  } else {
    FLB_TRY(fft.allocate(&real_buffer, static_cast<size_t>(numel(in)) * sizeof(R)));
    FLB_TRY(copy_view(c, dense_view(real_buffer.get(), in_sizes, false, Types::real),
                      strided_view(in, f.perm, false, Types::real)));
    FLB_TRY(fft.run(fft_plan_steps(FftKind::kR2C, in_sizes, k), real_buffer.get(), work,
                    CUFFT_FORWARD));
  }
  const double n = static_cast<double>(fft_product(in_sizes, in_sizes.size() - k, in_sizes.size()));
  FLB_TRY(fft.scale(work, 2 * out_count, norm_factor(f.normalization, n)));
  if (direct) return FLB_OK;
  return copy_view(c, strided_view(out, f.perm, true, Types::real),
                   dense_view(work, out_sizes, true, Types::real));
}

template <class R>
flb_status c2r_typed(const flb_kernel_call* c, const FftCall& f) {
  using Types = FftTypes<R>;
  const flb_tensor &out = c->tensors[0], &in = c->tensors[1];
  Fft<R> fft(c);
  const std::vector<int64_t> in_sizes = permuted(in, f.perm), out_sizes = permuted(out, f.perm);
  const size_t k = f.dims.size();
  const int64_t out_count = numel(out);
  // cuFFT's c2r overwrites its input: always a copy.
  DeviceBuffer spectrum, scratch;
  FLB_TRY(fft.allocate(&spectrum, static_cast<size_t>(numel(in)) * 2 * sizeof(R)));
  FLB_TRY(copy_view(c, dense_view(spectrum.get(), in_sizes, true, Types::real),
                    strided_view(in, f.perm, true, Types::real)));
  const bool direct = f.identity && dense(out);
  if (!direct) FLB_TRY(fft.allocate(&scratch, static_cast<size_t>(out_count) * sizeof(R)));
  void* work = direct ? out.data : scratch.get();
  FLB_TRY(
      fft.run(fft_plan_steps(FftKind::kC2R, out_sizes, k), work, spectrum.get(), CUFFT_INVERSE));
  const double n =
      static_cast<double>(fft_product(out_sizes, out_sizes.size() - k, out_sizes.size()));
  FLB_TRY(fft.scale(work, out_count, norm_factor(f.normalization, n)));
  if (direct) return FLB_OK;
  return copy_view(c, strided_view(out, f.perm, false, Types::real),
                   dense_view(work, out_sizes, false, Types::real));
}

// Runs body(R{}) for the real type of `real_dtype` or `complex_dtype` pairs.
template <class Body>
flb_status with_fft_types(const flb_kernel_call* c, int32_t out_dtype, int32_t in_dtype,
                          bool out_complex, bool in_complex, Body&& body) {
  auto matches = [&](int32_t real, int32_t complex) {
    return out_dtype == (out_complex ? complex : real) && in_dtype == (in_complex ? complex : real);
  };
  runtime::DeviceGuard guard(c->device_index);
  if (matches(FLB_FLOAT32, FLB_COMPLEX64)) return body(float{});
  if (matches(FLB_FLOAT64, FLB_COMPLEX128)) return body(double{});
  return unsupported_dtypes(c);
}

}  // namespace

flb_status fft_c2c(void*, const flb_kernel_call* c) {
  FftCall f;
  FLB_TRY(parse(c, true, &f));
  return with_fft_types(c, c->tensors[0].dtype, c->tensors[1].dtype, true, true,
                        [&](auto tag) { return c2c_typed<decltype(tag)>(c, f); });
}

flb_status fft_r2c(void*, const flb_kernel_call* c) {
  FftCall f;
  FLB_TRY(parse(c, true, &f));
  return with_fft_types(c, c->tensors[0].dtype, c->tensors[1].dtype, true, false,
                        [&](auto tag) { return r2c_typed<decltype(tag)>(c, f); });
}

flb_status fft_c2r(void*, const flb_kernel_call* c) {
  FftCall f;
  FLB_TRY(parse(c, false, &f));
  return with_fft_types(c, c->tensors[0].dtype, c->tensors[1].dtype, false, true,
                        [&](auto tag) { return c2r_typed<decltype(tag)>(c, f); });
}

}  // namespace flambeau::cuda::kernels
