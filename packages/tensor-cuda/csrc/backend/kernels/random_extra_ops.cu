// The samplers beyond uniform_/normal_/random_/bernoulli_, on the core's Philox
// generator and reading its counters as the CPU kernels do (random_extra_sampling.h),
// so a seeded program draws the same numbers on both devices:
//   exponential_, geometric_, cauchy_, log_normal_ (ctx the DistributionOp):
//       tensors [out] (contiguous), scalars [a, b]; log_normal_ is normal_'s
//       numbers (random_ops.cu), rounded to out's dtype, then exponentiated;
//   poisson: tensors [out (a floating dtype), rates (float64, checked >= 0 and
//       finite by the frontend)], both contiguous;
//   multinomial: tensors [samples (rows, n) int64, probs (rows, cats) float64
//       (checked by the frontend)], ints [replacement];
//   randperm: tensors [out] (int64, contiguous).
// Each call reserves as many Philox blocks as the CPU's, so the generator's
// offset moves alike on both devices.
#include <cuda_runtime_api.h>

#include <climits>
#include <cstdint>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <limits>
#include <string>
#include <type_traits>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/kernels.h"
#include "backend/kernels/random_extra_sampling.h"
#include "backend/state.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

// A grid-stride loop over [0, n).
#define FLB_FOR_EACH(i, n)                                                               \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

flb_status cuda_status(const char* op, cudaError_t err) {
  if (err == cudaSuccess) return FLB_OK;
  return kernel_fail(FLB_ERROR, op, std::string("CUDA error: ") + cudaGetErrorString(err));
}

// v (a sample in double) as a T: through the compute type for floats; integers
// (geometric_'s) saturate at `top`, T's maximum, as the CPU's.
template <class T>
__device__ T sample_as(double v, double top) {
  using A = acc_t<T>;
  if constexpr (std::is_integral_v<A>)
    return static_cast<T>(v < top ? v : top);
  else
    return convert<T>(static_cast<A>(v));
}

// Element i reads lanes i * k .. i * k + k - 1: one thread per Philox block
// writes the block's 4 / k elements.
template <class T>
__global__ void distribution_kernel(T* out, int64_t n, uint64_t key, uint64_t base, int k,
                                    DistributionOp d, double a, double b, double top) {
  const int per = 4 / k;
  FLB_FOR_EACH(j, (n + per - 1) / per) {
    const PhiloxBlock blk = philox4x32(key, base + static_cast<uint64_t>(j));
    for (int e = 0; e < per; ++e) {
      const int64_t i = j * per + e;
      if (i < n)
        out[i] =
            sample_as<T>(distribution_transform(d, open_unit_from(blk, e * k, k == 2), a, b), top);
    }
  }
}

// log_normal_: out holds normal_'s numbers in out's dtype; exp of each, in double.
template <class T>
__global__ void exp_in_place_kernel(T* out, int64_t n) {
  FLB_FOR_EACH(i, n) {
    out[i] = convert<T>(static_cast<acc_t<T>>(exp(static_cast<double>(convert<acc_t<T>>(out[i])))));
  }
}

template <class T>
__global__ void poisson_kernel(T* out, const double* rates, int64_t n, uint64_t key,
                               uint64_t base) {
  FLB_FOR_EACH(i, n) {
    out[i] = convert<T>(static_cast<acc_t<T>>(poisson_sample(key, base, i, rates[i])));
  }
}

// The running sums of each row, left to right (the CPU's partial_sum order).
__global__ void row_cdf_kernel(double* cdf, const double* p, int64_t rows, int64_t cats) {
  FLB_FOR_EACH(r, rows) {
    double total = 0;
    for (int64_t c = 0; c < cats; ++c) {
      total += p[r * cats + c];
      cdf[r * cats + c] = total;
    }
  }
}

__global__ void multinomial_with_replacement_kernel(int64_t* out, const double* p,
                                                    const double* cdf, int64_t rows, int64_t cats,
                                                    int64_t n, uint64_t key, uint64_t base) {
  FLB_FOR_EACH(i, rows * n) {
    const int64_t r = i / n;
    out[i] = multinomial_pick(p + r * cats, cdf + r * cats, cats,
                              lane_at(key, base, static_cast<uint64_t>(i)));
  }
}

__global__ void multinomial_keys_kernel(double* keys, int64_t* index, const double* p, int64_t rows,
                                        int64_t cats, uint64_t key, uint64_t base) {
  FLB_FOR_EACH(i, rows * cats) {
    keys[i] = multinomial_key(lane_at(key, base, static_cast<uint64_t>(i)), p[i]);
    index[i] = i % cats;
  }
}

__global__ void segment_offsets_kernel(int* offsets, int64_t segments, int64_t size) {
  FLB_FOR_EACH(s, segments + 1) { offsets[s] = static_cast<int>(s * size); }
}

// The first n of each sorted row of cats.
__global__ void take_leading_kernel(int64_t* out, const int64_t* sorted, int64_t rows, int64_t cats,
                                    int64_t n) {
  FLB_FOR_EACH(i, rows * n) { out[i] = sorted[(i / n) * cats + i % n]; }
}

// randperm: perm = 0..n-1 and each step's target H[i] (step 0 swaps nothing).
__global__ void randperm_init_kernel(int64_t* perm, int64_t* target, int64_t* pending, int64_t n,
                                     uint64_t key, uint64_t base) {
  FLB_FOR_EACH(i, n) {
    perm[i] = i;
    target[i] =
        i == 0 ? 0 : randperm_target(philox4x32(key, base + static_cast<uint64_t>(i / 2)), i);
    if (i > 0) pending[i - 1] = i;
  }
}

// The Fisher-Yates steps run in rounds (deterministic reservations, Shun et al.,
// "Sequential random permutation, list contraction and tree contraction are highly
// parallel", SODA 2015): step i swaps positions i and H[i] <= i after every earlier
// step (a larger index) that touches either position. Each pending step reserves
// both positions with its index (the largest wins); a step holding both has no
// pending earlier step in its way, the steps that hold theirs touch disjoint
// positions, and so they swap in parallel with the sequential loop's result. The
// largest pending step always holds both, so every round makes progress; the
// rounds number O(log n) with high probability.
using Reservation = unsigned long long;  // NOLINT(runtime/int): atomicMax's 64-bit type

__global__ void randperm_reserve_kernel(Reservation* res, const int64_t* target,
                                        const int64_t* pending, int64_t m) {
  FLB_FOR_EACH(t, m) {
    const int64_t i = pending[t];
    atomicMax(res + i, static_cast<Reservation>(i));
    atomicMax(res + target[i], static_cast<Reservation>(i));
  }
}

__global__ void randperm_commit_kernel(int64_t* perm, const Reservation* res, const int64_t* target,
                                       const int64_t* pending, int64_t m, int64_t* next,
                                       Reservation* next_count) {
  FLB_FOR_EACH(t, m) {
    const int64_t i = pending[t], j = target[i];
    const auto mine = static_cast<Reservation>(i);
    if (res[i] == mine && res[j] == mine) {
      const int64_t v = perm[i];
      perm[i] = perm[j];
      perm[j] = v;
    } else {
      next[atomicAdd(next_count, Reservation{1})] = i;
    }
  }
}

__global__ void randperm_release_kernel(Reservation* res, const int64_t* target,
                                        const int64_t* pending, int64_t m) {
  FLB_FOR_EACH(t, m) {
    const int64_t i = pending[t];
    res[i] = 0;
    res[target[i]] = 0;
  }
}

#undef FLB_FOR_EACH

// The generator's seed and first counter for `blocks` Philox blocks.
void reserve(const flb_kernel_call* c, uint64_t blocks, uint64_t* key, uint64_t* base) {
  *key = 0;
  *base = 0;
  backend::g_core->generator_reserve(c->generator, blocks, key, base);
}

const RandomOp kNormalOp = RandomOp::kNormal;

}  // namespace

flb_status distribution_fill(void* ctx, const flb_kernel_call* c) {
  const DistributionOp d = *static_cast<const DistributionOp*>(ctx);
  if (c->n_tensors != 1 || c->n_scalars != 2 || c->generator == nullptr)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected [out], [a, b] and a generator");
  const flb_tensor& out = c->tensors[0];
  if (!dense(out)) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected a contiguous output");
  const int64_t n = numel(out);
  if (d == DistributionOp::kLogNormal) {
    return with_float_dtype(c, out.dtype, [&](auto tag) -> flb_status {
      using T = decltype(tag);
      if (flb_status s = random_fill(const_cast<RandomOp*>(&kNormalOp), c); s != FLB_OK) return s;
      if (n == 0) return FLB_OK;
      runtime::DeviceGuard guard(c->device_index);
      exp_in_place_kernel<T><<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
          static_cast<T*>(out.data), n);
      return launch_status(c->op);
    });
  }
  const double a = c->scalars[0].real, b = c->scalars[1].real;
  flb_status status = FLB_OK;
  const bool known = dispatch(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      status = unsupported_dtypes(c);
    } else {
      const int k = std::is_same_v<T, double> ? 2 : 1;
      double top = 0;  // integers only
      if constexpr (std::is_integral_v<T>) top = static_cast<double>(std::numeric_limits<T>::max());
      uint64_t key, base;
      reserve(c, blocks_for_lanes(static_cast<uint64_t>(n) * k), &key, &base);
      if (n == 0) return;
      runtime::DeviceGuard guard(c->device_index);
      const int64_t blocks = (n + 4 / k - 1) / (4 / k);
      distribution_kernel<T>
          <<<blocks_for(blocks), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
              static_cast<T*>(out.data), n, key, base, k, d, a, b, top);
      status = launch_status(c->op);
    }
  });
  return known ? status : unsupported_dtypes(c);
}

flb_status poisson(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 2 || c->generator == nullptr)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected [out, rates] and a generator");
  const flb_tensor &out = c->tensors[0], &rates = c->tensors[1];
  if (rates.dtype != FLB_FLOAT64 || !dense(out) || !dense(rates) || numel(rates) != numel(out))
    return unsupported_dtypes(c);
  const int64_t n = numel(out);
  return with_float_dtype(c, out.dtype, [&](auto tag) -> flb_status {
    using T = decltype(tag);
    uint64_t key, base;
    reserve(c, static_cast<uint64_t>(n), &key, &base);  // one counter per element
    if (n == 0) return FLB_OK;
    runtime::DeviceGuard guard(c->device_index);
    poisson_kernel<T><<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
        static_cast<T*>(out.data), static_cast<const double*>(rates.data), n, key, base);
    return launch_status(c->op);
  });
}

flb_status multinomial(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 2 || c->n_ints != 1 || c->generator == nullptr)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op,
                       "expected [samples, probs], [replacement] and a generator");
  const flb_tensor &samples = c->tensors[0], &probs = c->tensors[1];
  if (samples.dtype != FLB_INT64 || probs.dtype != FLB_FLOAT64 || samples.ndim != 2 ||
      probs.ndim != 2 || samples.sizes[0] != probs.sizes[0] || !dense(samples) || !dense(probs))
    return unsupported_dtypes(c);
  const bool replacement = c->ints[0] != 0;
  const int64_t rows = probs.sizes[0], cats = probs.sizes[1], n = samples.sizes[1];
  if (!replacement && n > cats)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "more samples than categories");
  uint64_t key, base;
  reserve(c, blocks_for_lanes(static_cast<uint64_t>(rows * (replacement ? n : cats))), &key, &base);
  if (rows * n == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  const auto* p = static_cast<const double*>(probs.data);
  auto* out = static_cast<int64_t*>(samples.data);
  if (replacement) {
    DeviceBuffer cdf;
    if (flb_status s =
            cdf.allocate(c->device_index, static_cast<size_t>(rows * cats) * 8, stream, c->op);
        s != FLB_OK)
      return s;
    row_cdf_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(cdf.get<double>(), p, rows, cats);
    multinomial_with_replacement_kernel<<<blocks_for(rows * n), kThreads, 0, stream>>>(
        out, p, cdf.get<const double>(), rows, cats, n, key, base);
    return launch_status(c->op);
  }
  // Without replacement: each row's keys sorted (a stable radix sort, so equal keys
  // keep the lower category first), the first n categories taken.
  if (rows * cats > INT_MAX)
    return kernel_fail(FLB_NOT_IMPLEMENTED, c->op,
                       "more than 2**31 - 1 weights without replacement on CUDA");
  const size_t items = static_cast<size_t>(rows * cats);
  DeviceBuffer keys, keys_sorted, index, index_sorted, offsets;
  for (DeviceBuffer* b : {&keys, &keys_sorted, &index, &index_sorted})
    if (flb_status s = b->allocate(c->device_index, items * 8, stream, c->op); s != FLB_OK)
      return s;
  if (flb_status s = offsets.allocate(c->device_index, static_cast<size_t>(rows + 1) * sizeof(int),
                                      stream, c->op);
      s != FLB_OK)
    return s;
  multinomial_keys_kernel<<<blocks_for(rows * cats), kThreads, 0, stream>>>(
      keys.get<double>(), index.get<int64_t>(), p, rows, cats, key, base);
  segment_offsets_kernel<<<blocks_for(rows + 1), kThreads, 0, stream>>>(offsets.get<int>(), rows,
                                                                        cats);
  const int* begin = offsets.get<const int>();
  size_t bytes = 0;
  cub::DeviceSegmentedRadixSort::SortPairs(nullptr, bytes, keys.get<const double>(),
                                           keys_sorted.get<double>(), index.get<const int64_t>(),
                                           index_sorted.get<int64_t>(), static_cast<int>(items),
                                           static_cast<int>(rows), begin, begin + 1, 0, 64, stream);
  DeviceBuffer temp;
  if (flb_status s = temp.allocate(c->device_index, bytes, stream, c->op); s != FLB_OK) return s;
  cub::DeviceSegmentedRadixSort::SortPairs(temp.get(), bytes, keys.get<const double>(),
                                           keys_sorted.get<double>(), index.get<const int64_t>(),
                                           index_sorted.get<int64_t>(), static_cast<int>(items),
                                           static_cast<int>(rows), begin, begin + 1, 0, 64, stream);
  take_leading_kernel<<<blocks_for(rows * n), kThreads, 0, stream>>>(
      out, index_sorted.get<const int64_t>(), rows, cats, n);
  return launch_status(c->op);
}

flb_status randperm(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 1 || c->generator == nullptr)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected [out] and a generator");
  const flb_tensor& out = c->tensors[0];
  if (out.dtype != FLB_INT64 || !dense(out)) return unsupported_dtypes(c);
  const int64_t n = numel(out);
  if (n == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  auto* perm = static_cast<int64_t*>(out.data);
  uint64_t key = 0, base = 0;
  if (n >= 2) reserve(c, blocks_for_lanes(static_cast<uint64_t>(n) * 2), &key, &base);
  DeviceBuffer target, res, pending[2], count;
  for (DeviceBuffer* b : {&target, &res, &pending[0], &pending[1]})
    if (flb_status s = b->allocate(c->device_index, static_cast<size_t>(n) * 8, stream, c->op);
        s != FLB_OK)
      return s;
  if (flb_status s = count.allocate(c->device_index, sizeof(Reservation), stream, c->op);
      s != FLB_OK)
    return s;
  if (flb_status s =
          cuda_status(c->op, cudaMemsetAsync(res.get(), 0, static_cast<size_t>(n) * 8, stream));
      s != FLB_OK)
    return s;
  randperm_init_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      perm, target.get<int64_t>(), pending[0].get<int64_t>(), n, key, base);
  if (flb_status s = launch_status(c->op); s != FLB_OK) return s;
  int64_t m = n - 1;  // pending steps
  for (int cur = 0; m > 0; cur ^= 1) {
    const int64_t* now = pending[cur].get<const int64_t>();
    cudaError_t err = cudaMemsetAsync(count.get(), 0, sizeof(Reservation), stream);
    if (err != cudaSuccess) return cuda_status(c->op, err);
    const unsigned grid = blocks_for(m);
    randperm_reserve_kernel<<<grid, kThreads, 0, stream>>>(res.get<Reservation>(),
                                                           target.get<const int64_t>(), now, m);
    randperm_commit_kernel<<<grid, kThreads, 0, stream>>>(
        perm, res.get<const Reservation>(), target.get<const int64_t>(), now, m,
        pending[cur ^ 1].get<int64_t>(), count.get<Reservation>());
    randperm_release_kernel<<<grid, kThreads, 0, stream>>>(res.get<Reservation>(),
                                                           target.get<const int64_t>(), now, m);
    if (flb_status s = launch_status(c->op); s != FLB_OK) return s;
    Reservation left = 0;
    err = cudaMemcpyAsync(&left, count.get(), sizeof(left), cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess) return cuda_status(c->op, err);
    if (static_cast<int64_t>(left) >= m)
      return kernel_fail(FLB_ERROR, c->op, "internal error: a round made no progress");
    m = static_cast<int64_t>(left);
  }
  return FLB_OK;
}

}  // namespace flambeau::cuda::kernels
