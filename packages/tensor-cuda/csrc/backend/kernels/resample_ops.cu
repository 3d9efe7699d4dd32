// Resampling through per-axis taps (padding modes and interpolate), over
// contiguous float32/float64 (planes, D, H, W) with structs
// [flb_resample_geometry], as the CPU's (cpu/nn_resize_kernels.cpp):
//   resample:          tensors [out, input]: every output blends, with the
//                      depth and height taps, the input rows it reads, then
//                      samples that blend with the width taps; arithmetic in T,
//                      rounded step by step in the CPU's order;
//   resample_backward: tensors [grad_input, grad_output]: the adjoint. Each
//                      input element gathers (no atomics) the outputs whose taps
//                      read it, in the CPU's scatter order (outputs row-major,
//                      then the depth, height and width taps), each term
//                      computed in double and added in T as the CPU adds it.
// The tap tables go to the device once per call; the backward's inverse tables
// (for each input index, the (output, tap) pairs that read it, in order) are
// built on the host.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/kernels.h"
#include "backend/kernels/resample_math.h"
#include "backend/kernels/rn_arith.cuh"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

// One axis's taps on the device. index/weight: out * taps entries, tap t of
// output o at o * taps + t. starts/entries (backward): the positions o * taps + t
// reading input index i are entries[starts[i] .. starts[i + 1]), by o then t.
template <class T>
struct AxisTable {
  int64_t taps;
  bool unit;  // one tap of weight 1: a pure gather
  const int64_t* index;
  const T* weight;
  const double* weight_d;
  const int64_t* starts;
  const int64_t* entries;
};

template <class T>
struct Tables {
  AxisTable<T> axis[3];
};

template <class T>
__device__ inline T blend_rows(const T* xp, const Tables<T>& t, int64_t od, int64_t oh, int64_t H,
                               int64_t W, int64_t i) {
  const AxisTable<T>&td = t.axis[0], &th = t.axis[1];
  if (td.unit && th.unit) return xp[(td.index[od] * H + th.index[oh]) * W + i];
  T acc = T(0);
  bool first = true;
  for (int64_t a = 0; a < td.taps; ++a)
    for (int64_t b = 0; b < th.taps; ++b) {
      const int64_t id = td.index[od * td.taps + a], ih = th.index[oh * th.taps + b];
      const T wgt = mul_rn(td.weight[od * td.taps + a], th.weight[oh * th.taps + b]);
      const T term = mul_rn(wgt, xp[(id * H + ih) * W + i]);
      acc = first ? term : add_rn(acc, term);
      first = false;
    }
  return acc;
}

template <class T>
__global__ void resample_kernel(T* out, const T* x, Tables<T> t, int64_t planes, int64_t D,
                                int64_t H, int64_t W, int64_t oD, int64_t oH, int64_t oW) {
  const int64_t total = planes * oD * oH * oW;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const AxisTable<T>& tw = t.axis[2];
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step) {
    const int64_t ow = e % oW, oh = (e / oW) % oH, od = (e / (oW * oH)) % oD;
    const int64_t p = e / (oW * oH * oD);
    const T* xp = x + p * D * H * W;
    const int64_t* ix = tw.index + ow * tw.taps;
    const T* wt = tw.weight + ow * tw.taps;
    T y;
    if (tw.unit) {
      y = blend_rows(xp, t, od, oh, H, W, ix[0]);
    } else if (tw.taps == 2) {
      y = add_rn(mul_rn(wt[0], blend_rows(xp, t, od, oh, H, W, ix[0])),
                 mul_rn(wt[1], blend_rows(xp, t, od, oh, H, W, ix[1])));
    } else {
      y = mul_rn(wt[0], blend_rows(xp, t, od, oh, H, W, ix[0]));
      for (int64_t c = 1; c < tw.taps; ++c)
        y = add_rn(y, mul_rn(wt[c], blend_rows(xp, t, od, oh, H, W, ix[c])));
    }
    out[e] = y;
  }
}

template <class T>
__global__ void resample_backward_kernel(T* gi, const T* go, Tables<T> t, int64_t planes, int64_t D,
                                         int64_t H, int64_t W, int64_t oD, int64_t oH, int64_t oW) {
  const int64_t total = planes * D * H * W;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const AxisTable<T>&td = t.axis[0], &th = t.axis[1], &tw = t.axis[2];
  AxisInverse inv[3];
  for (int a = 0; a < 3; ++a)
    inv[a] = AxisInverse{t.axis[a].taps, t.axis[a].starts, t.axis[a].entries};
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step) {
    const int64_t iw = e % W, ih = (e / W) % H, id = (e / (W * H)) % D, p = e / (W * H * D);
    const T* op = go + p * oD * oH * oW;
    T acc = T(0);
    for_each_resample_source(
        inv[0], inv[1], inv[2], id, ih, iw,
        [&](int64_t od, int64_t oh, int64_t ow, int64_t pd, int64_t ph, int64_t pw) {
          const double v = static_cast<double>(op[(od * oH + oh) * oW + ow]);
          const double wdh = __dmul_rn(__dmul_rn(v, td.weight_d[pd]), th.weight_d[ph]);
          acc = add_rn(acc, static_cast<T>(__dmul_rn(wdh, tw.weight_d[pw])));
        });
    gi[e] = acc;
  }
}

// The host side of the tables, packed into one upload: 8-byte words.
class TableBuilder {
 public:
  // Appends n words (int64 or double bit patterns); returns their word offset.
  template <class W>
  int64_t append(const W* data, int64_t n) {
    static_assert(sizeof(W) == 8, "8-byte words");
    const int64_t at = static_cast<int64_t>(words_.size());
    words_.resize(words_.size() + static_cast<size_t>(n));
    if (n > 0) std::memcpy(words_.data() + at, data, static_cast<size_t>(n) * 8);
    return at;
  }
  int64_t append_float(const double* data, int64_t n) {  // n floats, padded to words
    std::vector<float> f(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) f[i] = static_cast<float>(data[i]);
    const int64_t at = static_cast<int64_t>(words_.size());
    words_.resize(words_.size() + static_cast<size_t>((n + 1) / 2));
    if (n > 0) std::memcpy(words_.data() + at, f.data(), static_cast<size_t>(n) * 4);
    return at;
  }
  const std::vector<uint64_t>& words() const { return words_; }

 private:
  std::vector<uint64_t> words_;
};

// Word offsets of one axis's arrays in the upload.
struct AxisOffsets {
  int64_t index, weight, weight_d, starts, entries;
};

template <class T>
flb_status run(const flb_kernel_call* c, bool backward) {
  const auto& g = *static_cast<const flb_resample_geometry*>(c->structs[0]);
  const int64_t planes = g.planes, D = g.in[0], H = g.in[1], W = g.in[2];
  const int64_t oD = g.out[0], oH = g.out[1], oW = g.out[2];
  const int64_t total = backward ? planes * D * H * W : planes * oD * oH * oW;
  if (total == 0) return FLB_OK;
  TableBuilder b;
  AxisOffsets at[3];
  bool unit[3];
  for (int a = 0; a < 3; ++a) {
    const flb_axis_taps& ax = g.axes[a];
    const int64_t out = g.out[a], in = g.in[a], n = out * ax.taps;
    if (ax.taps < 1 || ax.n_index != n || ax.n_weight != n)
      return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "tap tables of the wrong size");
    unit[a] = ax.taps == 1;
    for (int64_t k = 0; k < n; ++k) {
      if (ax.weight[k] != 1.0) unit[a] = false;
      if (ax.index[k] < 0 || ax.index[k] >= in)
        return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "a tap outside the input");
    }
    at[a].index = b.append(ax.index, n);
    if constexpr (sizeof(T) == 8)
      at[a].weight = b.append(ax.weight, n);
    else
      at[a].weight = b.append_float(ax.weight, n);
    at[a].weight_d = b.append(ax.weight, n);
    std::vector<int64_t> starts, entries;  // the backward's inverse table
    build_axis_inverse(ax.index, n, in, &starts, &entries);
    at[a].starts = b.append(starts.data(), in + 1);
    at[a].entries = b.append(entries.data(), n);
  }
  auto stream = static_cast<cudaStream_t>(c->stream);
  runtime::DeviceGuard guard(c->device_index);
  DeviceBuffer tables;
  const size_t bytes = b.words().size() * 8;
  if (flb_status s = tables.allocate(c->device_index, bytes, stream, c->op); s != FLB_OK) return s;
  // From pageable memory: staged before the call returns, so the vector may go.
  if (cudaMemcpyAsync(tables.get(), b.words().data(), bytes, cudaMemcpyHostToDevice, stream) !=
      cudaSuccess)
    return launch_status(c->op);
  const uint64_t* base = tables.get<uint64_t>();
  Tables<T> t{};
  for (int a = 0; a < 3; ++a) {
    t.axis[a].taps = g.axes[a].taps;
    t.axis[a].unit = unit[a];
    t.axis[a].index = reinterpret_cast<const int64_t*>(base + at[a].index);
    t.axis[a].weight = reinterpret_cast<const T*>(base + at[a].weight);
    t.axis[a].weight_d = reinterpret_cast<const double*>(base + at[a].weight_d);
    t.axis[a].starts = reinterpret_cast<const int64_t*>(base + at[a].starts);
    t.axis[a].entries = reinterpret_cast<const int64_t*>(base + at[a].entries);
  }
  T* dst = static_cast<T*>(c->tensors[0].data);
  const T* src = static_cast<const T*>(c->tensors[1].data);
  if (backward)
    resample_backward_kernel<T>
        <<<blocks_for(total), kThreads, 0, stream>>>(dst, src, t, planes, D, H, W, oD, oH, oW);
  else
    resample_kernel<T>
        <<<blocks_for(total), kThreads, 0, stream>>>(dst, src, t, planes, D, H, W, oD, oH, oW);
  return launch_status(c->op);
}

flb_status dispatch_resample(const flb_kernel_call* c, bool backward) {
  if (c->n_tensors != 2 || c->n_structs < 1 || c->structs == nullptr)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected two tensors and the geometry");
  const flb_tensor &a = c->tensors[0], &b = c->tensors[1];
  if (a.dtype != b.dtype || !dense(a) || !dense(b)) return unsupported_dtypes(c);
  if (a.dtype == FLB_FLOAT32) return run<float>(c, backward);
  if (a.dtype == FLB_FLOAT64) return run<double>(c, backward);
  return unsupported_dtypes(c);
}

}  // namespace

flb_status resample(void*, const flb_kernel_call* c) { return dispatch_resample(c, false); }

flb_status resample_backward(void*, const flb_kernel_call* c) { return dispatch_resample(c, true); }

}  // namespace flambeau::cuda::kernels
