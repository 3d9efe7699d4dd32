// Scans along one dim:
//   cumsum, cumprod: tensors [out, in]; ints [dim] (out contiguous, in strided, one dtype)
//   logcumsumexp:    tensors [out, in] as contiguous [rows, n]
//   cummax:          tensors [values, indices, in] as contiguous [rows, n]; ints [is_max]
// Each line along the dim is scanned with an associative operator (index_math.h):
// one thread per line when lines are short or many, else one block per line,
// tile by tile, with CUB's block scan carrying the running prefix. The order of
// operations depends on the shape only, so results are the same run after run.
// Sums and products accumulate as the CPU's: int64 (wrapping) for integers and
// bool, double for the floats; logcumsumexp in double.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cub/block/block_scan.cuh>
#include <cuda/std/limits>
#include <type_traits>

#include "backend/kernels/dtypes.cuh"
#include "backend/kernels/index_math.h"
#include "backend/kernels/kernels.h"
#include "backend/kernels/launch.cuh"
#include "backend/kernels/strided_index.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

constexpr int kScanBlock = 256;

// The lines of a scan: operands 0..N-2 are outputs, N-1 the input; `outer` walks
// the line starts (the shape without the scanned dim), step[k] is operand k's
// byte stride along it.
template <int N>
struct Lines {
  StridedIndex<N> outer;
  int64_t step[N];
  int64_t count;
  int64_t len;
};

template <int N>
struct OutPtrs {
  char* p[N];
};

template <int N>
flb_status make_lines(const flb_kernel_call* c, int64_t dim, const int64_t (&item)[N],
                      Lines<N>* lines) {
  if (c->n_tensors < N) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "too few tensors");
  const flb_tensor& in = c->tensors[N - 1];
  if (in.ndim < 1 || in.ndim > 64 || dim < 0 || dim >= in.ndim)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "bad scan dim");
  int64_t shape[64];
  const int64_t* strides[N];
  for (int k = 0; k < N; ++k) {
    if (c->tensors[k].ndim != in.ndim)
      return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "ranks differ");
    strides[k] = c->tensors[k].strides;
    lines->step[k] = c->tensors[k].strides[dim] * item[k];
  }
  for (int d = 0; d < in.ndim; ++d) shape[d] = d == dim ? 1 : in.sizes[d];
  if (!make_index<N>(in.ndim, shape, strides, item, &lines->outer))
    return kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 16 non-mergeable dimensions");
  lines->len = in.sizes[dim];
  lines->count = lines->len == 0 ? 0 : numel(in) / lines->len;
  return FLB_OK;
}

// ---- the operators ----------------------------------------------------------

// cumsum (IsSum) and cumprod.
template <class T, bool IsSum>
struct ArithScan {
  using S = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
  __device__ S identity() const { return S(IsSum ? 0 : 1); }
  __device__ S load(const char* x, int64_t) const {
    return convert<S>(*reinterpret_cast<const T*>(x));
  }
  __device__ S operator()(const S& a, const S& b) const {
    if constexpr (std::is_integral_v<S>)
      return IsSum ? wrapping_add(a, b) : wrapping_mul(a, b);
    else
      return IsSum ? a + b : a * b;
  }
  __device__ void store(const S& s, char* const (&out)[1]) const {
    *reinterpret_cast<T*>(out[0]) = convert<T>(s);
  }
};

template <class T>
struct LogCumSumExpScan {
  using S = double;
  __device__ S identity() const { return -INFINITY; }
  __device__ S load(const char* x, int64_t) const {
    return static_cast<double>(convert<acc_t<T>>(*reinterpret_cast<const T*>(x)));
  }
  __device__ S operator()(const S& a, const S& b) const { return log_add_exp(a, b); }
  __device__ void store(const S& s, char* const (&out)[1]) const {
    *reinterpret_cast<T*>(out[0]) = convert<T>(static_cast<acc_t<T>>(s));
  }
};

// cummax (is_max) and cummin: values and int64 indices.
template <class T>
struct ExtremeScan {
  using A = acc_t<T>;
  using S = Extreme<A>;
  bool is_max;
  __device__ S identity() const {
    // Below (above) every number, so that combining it with an element gives the element.
    if constexpr (std::is_floating_point_v<A>)
      return S{is_max ? A(-INFINITY) : A(INFINITY), -1};
    else
      return S{
          is_max ? ::cuda::std::numeric_limits<A>::lowest() : ::cuda::std::numeric_limits<A>::max(),
          -1};
  }
  __device__ S load(const char* x, int64_t j) const {
    return S{convert<A>(*reinterpret_cast<const T*>(x)), j};
  }
  __device__ S operator()(const S& a, const S& b) const { return combine_extreme(a, b, is_max); }
  __device__ void store(const S& s, char* const (&out)[2]) const {
    *reinterpret_cast<T*>(out[0]) = convert<T>(s.value);
    *reinterpret_cast<int64_t*>(out[1]) = s.index;
  }
};

// ---- the kernels --------------------------------------------------------------

template <int NOUT, class Op>
__device__ inline void store_at(const Op& op, const typename Op::S& s, const OutPtrs<NOUT>& outs,
                                const int64_t (&off)[NOUT + 1], const int64_t (&step)[NOUT + 1],
                                int64_t j) {
  char* dst[NOUT];
  for (int k = 0; k < NOUT; ++k) dst[k] = outs.p[k] + off[k] + j * step[k];
  op.store(s, dst);
}

// One thread per line, in order.
template <int NOUT, class Op>
__global__ void scan_serial_kernel(Lines<NOUT + 1> lines, OutPtrs<NOUT> outs, const char* in,
                                   Op op) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; l < lines.count;
       l += stride) {
    int64_t off[NOUT + 1];
    lines.outer.offsets(l, off);
    const char* x = in + off[NOUT];
    typename Op::S s = op.identity();
    for (int64_t j = 0; j < lines.len; ++j) {
      s = op(s, op.load(x + j * lines.step[NOUT], j));
      store_at<NOUT>(op, s, outs, off, lines.step, j);
    }
  }
}

// Hands CUB each tile's prefix (the combination of the tiles before it).
template <class Op>
struct RunningPrefix {
  typename Op::S running;
  Op op;
  __device__ typename Op::S operator()(const typename Op::S& tile_total) {
    const typename Op::S before = running;
    running = op(running, tile_total);
    return before;
  }
};

// One block per line, kScanBlock elements per tile.
template <int NOUT, class Op>
__global__ void scan_block_kernel(Lines<NOUT + 1> lines, OutPtrs<NOUT> outs, const char* in,
                                  Op op) {
  using S = typename Op::S;
  using BlockScan = cub::BlockScan<S, kScanBlock>;
  __shared__ typename BlockScan::TempStorage temp;
  for (int64_t l = blockIdx.x; l < lines.count; l += gridDim.x) {
    int64_t off[NOUT + 1];
    lines.outer.offsets(l, off);
    const char* x = in + off[NOUT];
    RunningPrefix<Op> prefix{op.identity(), op};
    for (int64_t base = 0; base < lines.len; base += kScanBlock) {
      const int64_t j = base + threadIdx.x;
      // Past the end: the identity (only later, discarded, outputs see it).
      const S v = j < lines.len ? op.load(x + j * lines.step[NOUT], j) : op.identity();
      S r;
      BlockScan(temp).InclusiveScan(v, r, op, prefix);
      if (j < lines.len) store_at<NOUT>(op, r, outs, off, lines.step, j);
      __syncthreads();  // temp is reused by the next tile
    }
  }
}

template <int NOUT, class Op>
flb_status launch_scan(const flb_kernel_call* c, const Lines<NOUT + 1>& lines, const Op& op) {
  if (lines.count == 0) return FLB_OK;
  OutPtrs<NOUT> outs{};
  for (int k = 0; k < NOUT; ++k) outs.p[k] = static_cast<char*>(c->tensors[k].data);
  const char* in = static_cast<const char*>(c->tensors[NOUT].data);
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  if (lines.len <= 32 || lines.count >= 16384) {
    scan_serial_kernel<NOUT, Op>
        <<<blocks_for(lines.count), kThreads, 0, stream>>>(lines, outs, in, op);
  } else {
    const int64_t cap = 65535LL * 32;
    const unsigned blocks = static_cast<unsigned>(lines.count < cap ? lines.count : cap);
    scan_block_kernel<NOUT, Op><<<blocks, kScanBlock, 0, stream>>>(lines, outs, in, op);
  }
  return launch_status(c->op);
}

}  // namespace

flb_status cumulative(void* ctx, const flb_kernel_call* c) {
  const bool is_sum = *static_cast<const ScanOp*>(ctx) == ScanOp::kCumsum;
  if (c->n_tensors < 2 || c->n_ints < 1)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or dim");
  if (c->tensors[1].dtype != c->tensors[0].dtype) return unsupported_dtypes(c);
  flb_status status = FLB_OK;
  const bool ok = dispatch(c->tensors[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t item[2] = {sizeof(T), sizeof(T)};
    Lines<2> lines;
    status = make_lines<2>(c, c->ints[0], item, &lines);
    if (status != FLB_OK) return;
    status = is_sum ? launch_scan<1>(c, lines, ArithScan<T, true>{})
                    : launch_scan<1>(c, lines, ArithScan<T, false>{});
  });
  return ok ? status : unsupported_dtypes(c);
}

flb_status logcumsumexp(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 2 || c->tensors[1].dtype != c->tensors[0].dtype) return unsupported_dtypes(c);
  flb_status status = FLB_OK;
  const bool ok = dispatch(c->tensors[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<acc_t<T>>) {
      const int64_t item[2] = {sizeof(T), sizeof(T)};
      Lines<2> lines;
      status = make_lines<2>(c, c->tensors[1].ndim - 1, item, &lines);
      if (status == FLB_OK) status = launch_scan<1>(c, lines, LogCumSumExpScan<T>{});
    } else {
      status = unsupported_dtypes(c);
    }
  });
  return ok ? status : unsupported_dtypes(c);
}

flb_status cummax(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 3 || c->n_ints < 1)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or is_max");
  if (c->tensors[2].dtype != c->tensors[0].dtype || c->tensors[1].dtype != FLB_INT64)
    return unsupported_dtypes(c);
  flb_status status = FLB_OK;
  const bool ok = dispatch(c->tensors[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t item[3] = {sizeof(T), 8, sizeof(T)};
    Lines<3> lines;
    status = make_lines<3>(c, c->tensors[2].ndim - 1, item, &lines);
    if (status == FLB_OK) status = launch_scan<2>(c, lines, ExtremeScan<T>{c->ints[0] != 0});
  });
  return ok ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
