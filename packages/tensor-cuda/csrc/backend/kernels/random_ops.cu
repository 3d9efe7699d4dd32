// Random samplers on the core's Philox generator, reading its counters exactly as
// the CPU kernels do (random_sampling.h): uniform_ and normal_ (tensors [out],
// scalars [from, to] / [mean, std], floating dtypes), random_ (tensors [out],
// ints [from, range], real dtypes and bool) and bernoulli_ (tensors [out, p], p
// float64 with one element or out's numel). out is contiguous (the core's
// frontends sample into a contiguous tensor and copy). Each thread computes one
// Philox block and writes the elements whose lanes it holds, so the numbers do
// not depend on the launch geometry.
#include <type_traits>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/dtypes.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/launch.cuh"
#include "backend/kernels/random_sampling.h"
#include "backend/state.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

template <class T>
__host__ __device__ constexpr UnitKind unit_kind() {
  if constexpr (std::is_same_v<T, double>)
    return UnitKind::kFloat64;
  else if constexpr (std::is_same_v<T, __half>)
    return UnitKind::kFloat16;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return UnitKind::kBFloat16;
  else
    return UnitKind::kFloat32;
}

// What one element is, from its block: the sampler's parameters and kind.
struct Sampler {
  RandomOp op;
  double a = 0, b = 0;  // uniform: from, to - from; normal: mean, std
  int64_t from = 0;     // random_
  uint64_t range = 1;
  const double* p = nullptr;  // bernoulli_
  bool one_p = true;
};

template <class T>
__device__ T sample(const Sampler& s, const PhiloxBlock& blk, int64_t i, int q, int k) {
  using A = acc_t<T>;
  switch (s.op) {
    case RandomOp::kUniform:
      if constexpr (std::is_floating_point_v<A>)
        return convert<T>(static_cast<A>(s.a + unit_from(blk, q, unit_kind<T>()) * s.b));
      break;
    case RandomOp::kNormal:
      if constexpr (std::is_floating_point_v<A>)
        return convert<T>(static_cast<A>(s.a + s.b * normal_from(blk, i, k)));
      break;
    case RandomOp::kRandom:
      return convert<T>(random_from(blk, q, k, s.from, s.range));
    case RandomOp::kBernoulli:
      return convert<T>(bernoulli_unit(blk, q) < s.p[s.one_p ? 0 : i]);
  }
  return T{};
}

// Block j of the call's counters gives elements j * per .. j * per + per - 1,
// element e reading words from (e % per) * k.
template <class T>
__global__ void random_kernel(T* out, int64_t n, uint64_t key, uint64_t base, int k, Sampler s) {
  const int per = 4 / k;
  const int64_t blocks = (n + per - 1) / per;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < blocks;
       j += step) {
    const PhiloxBlock blk = philox4x32(key, base + static_cast<uint64_t>(j));
    for (int e = 0; e < per; ++e) {
      const int64_t i = j * per + e;
      if (i < n) out[i] = sample<T>(s, blk, i, e * k, k);
    }
  }
}

}  // namespace

flb_status random_fill(void* ctx, const flb_kernel_call* c) {
  Sampler s;
  s.op = *static_cast<const RandomOp*>(ctx);
  if (c->n_tensors < 1 || c->generator == nullptr)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected an output and a generator");
  const flb_tensor& out = c->tensors[0];
  if (!dense(out)) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected a contiguous output");
  const int64_t n = numel(out);
  switch (s.op) {
    case RandomOp::kUniform:
    case RandomOp::kNormal:
      if (c->n_scalars != 2) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected 2 scalars");
      s.a = c->scalars[0].real;
      s.b =
          s.op == RandomOp::kUniform ? c->scalars[1].real - c->scalars[0].real : c->scalars[1].real;
      break;
    case RandomOp::kRandom:
      if (c->n_ints != 2) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected 2 ints");
      s.from = c->ints[0];
      s.range = static_cast<uint64_t>(c->ints[1]);
      if (s.range == 0) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "empty range");
      break;
    case RandomOp::kBernoulli: {
      if (c->n_tensors != 2 || c->tensors[1].dtype != FLB_FLOAT64 || !dense(c->tensors[1]))
        return unsupported_dtypes(c);
      const int64_t np = numel(c->tensors[1]);
      if (np != 1 && np != n)
        return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "p must have one element or out's");
      s.p = static_cast<const double*>(c->tensors[1].data);
      s.one_p = np == 1;
      break;
    }
  }
  flb_status status = FLB_OK;
  bool known = dispatch(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    const bool floating = std::is_floating_point_v<A>;
    if (!floating && (s.op == RandomOp::kUniform || s.op == RandomOp::kNormal)) {
      status = unsupported_dtypes(c);
      return;
    }
    int k = 1;
    uint64_t lanes = static_cast<uint64_t>(n);
    if (s.op == RandomOp::kUniform) {
      k = lanes_per_uniform(unit_kind<T>());
      lanes *= k;
    } else if (s.op == RandomOp::kNormal) {
      k = lanes_per_uniform(unit_kind<T>());
      lanes = (lanes + 1) / 2 * 2 * k;
    } else if (s.op == RandomOp::kRandom) {
      k = s.range > (uint64_t(1) << 32) ? 2 : 1;
      lanes *= k;
    }
    // As many blocks as the CPU reserves (none for an empty tensor): the generator's
    // offset then moves alike on both devices.
    uint64_t key = 0, base = 0;
    backend::g_core->generator_reserve(c->generator, blocks_for_lanes(lanes), &key, &base);
    if (n == 0) return;
    runtime::DeviceGuard guard(c->device_index);
    const int64_t blocks = (n + (4 / k) - 1) / (4 / k);
    random_kernel<T><<<blocks_for(blocks), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
        static_cast<T*>(out.data), n, key, base, k, s);
    status = launch_status(c->op);
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
