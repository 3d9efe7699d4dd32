// The resampling backward's gather order (resample_ops.cu), plain C++ marked
// __host__ __device__ so the tests check it with g++ against the CPU kernel's
// scatter (tests/host_kernels/check_resample_math.cpp).
//
// The CPU adds grad_output into grad_input output by output (row-major over
// (od, oh, ow)), and within an output over its depth, height and width taps
// (a, b, c). The CUDA kernel gives each input element its own thread, which
// walks the same contributions in the same order: per axis, the inverse table
// lists the (output, tap) positions o * taps + t that read each input index,
// sorted by o then t; runs of one output in the three lists, nested depth,
// height, width, then the taps within the runs, are exactly the CPU's order.
#pragma once
#include <cstdint>
#include <vector>

#include "backend/kernels/strided_index.h"  // FLB_HD

namespace flambeau::cuda::kernels {

// One axis's inverse table: the positions reading input index i are
// entries[starts[i] .. starts[i + 1]).
struct AxisInverse {
  int64_t taps;
  const int64_t* starts;
  const int64_t* entries;
};

// starts (in + 1) and entries (n = out * taps) of the positions of `index` (tap t of
// output o at o * taps + t) by input index: a stable counting sort.
inline void build_axis_inverse(const int64_t* index, int64_t n, int64_t in,
                               std::vector<int64_t>* starts, std::vector<int64_t>* entries) {
  starts->assign(static_cast<size_t>(in + 1), 0);
  entries->assign(static_cast<size_t>(n), 0);
  for (int64_t k = 0; k < n; ++k) ++(*starts)[index[k] + 1];
  for (int64_t i = 0; i < in; ++i) (*starts)[i + 1] += (*starts)[i];
  std::vector<int64_t> fill(starts->begin(), starts->end() - 1);
  for (int64_t k = 0; k < n; ++k) (*entries)[fill[index[k]]++] = k;
}

// The end of the run of entries [k, end) that share entry k's output.
FLB_HD inline int64_t inverse_run_end(const AxisInverse& a, int64_t k, int64_t end) {
  const int64_t o = a.entries[k] / a.taps;
  int64_t r = k + 1;
  while (r < end && a.entries[r] / a.taps == o) ++r;
  return r;
}

// Calls f(od, oh, ow, pd, ph, pw) (pX: the tap positions o * taps + t of each axis)
// for every contribution to input element (id, ih, iw), in the CPU's order.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable  // f may be a device lambda
#endif
template <class F>
FLB_HD void for_each_resample_source(const AxisInverse& d, const AxisInverse& h,
                                     const AxisInverse& w, int64_t id, int64_t ih, int64_t iw,
                                     F&& f) {
  const int64_t d1 = d.starts[id + 1], h1 = h.starts[ih + 1], w1 = w.starts[iw + 1];
  for (int64_t rd = d.starts[id]; rd < d1;) {
    const int64_t rd_end = inverse_run_end(d, rd, d1), od = d.entries[rd] / d.taps;
    for (int64_t rh = h.starts[ih]; rh < h1;) {
      const int64_t rh_end = inverse_run_end(h, rh, h1), oh = h.entries[rh] / h.taps;
      for (int64_t rw = w.starts[iw]; rw < w1;) {
        const int64_t rw_end = inverse_run_end(w, rw, w1), ow = w.entries[rw] / w.taps;
        for (int64_t a = rd; a < rd_end; ++a)
          for (int64_t b = rh; b < rh_end; ++b)
            for (int64_t c = rw; c < rw_end; ++c)
              f(od, oh, ow, d.entries[a], h.entries[b], w.entries[c]);
        rw = rw_end;
      }
      rh = rh_end;
    }
    rd = rd_end;
  }
}

}  // namespace flambeau::cuda::kernels
