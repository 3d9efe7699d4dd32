// Which cuFFT plans an FFT primitive runs (fft_ops.cu), as plain C++ so that the
// tests check the layouts on the host (tests/host_kernels/print_fft_plans.cpp).
//
// The primitive works on dense buffers whose last k dims are the transformed ones
// (the half-spectrum dim of r2c/c2r last). cuFFT plans at most three dims at once:
// the last (up to) three run as one batched plan of the primitive's kind, any
// further dim as an in-place c2c over the complex buffer, one strided plan per
// block of the dims before it. c2r runs those c2c steps first (its plan wants the
// other dims already transformed back), r2c and c2c after.
#pragma once
#include <cstdint>
#include <vector>

namespace flambeau::cuda::kernels {

enum class FftKind { kC2C, kR2C, kC2R };

// One plan in cuFFT's advanced layout (element x of batch b at b * dist + x's
// offset in embed * stride), run `count` times, the e-th on the buffers shifted
// by e * in_step and e * out_step elements. c2c steps run in place on the complex
// buffer; r2c reads the real buffer into the complex one, c2r the reverse.
struct FftPlanStep {
  FftKind kind = FftKind::kC2C;
  int rank = 1;
  int64_t n[3] = {1, 1, 1};
  int64_t inembed[3] = {1, 1, 1};
  int64_t onembed[3] = {1, 1, 1};
  int64_t istride = 1, idist = 1, ostride = 1, odist = 1, batch = 1;
  int64_t count = 1, in_step = 0, out_step = 0;
};

inline int64_t fft_product(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

// The last g (<= 3) dims of a dense batch as one plan; `signal` the real sizes,
// the complex side of r2c/c2r holding signal.back() / 2 + 1 along the last dim.
inline FftPlanStep fft_group_step(FftKind kind, const std::vector<int64_t>& signal, size_t g) {
  FftPlanStep s;
  s.kind = kind;
  s.rank = static_cast<int>(g);
  const size_t first = signal.size() - g;
  int64_t in_points = 1, out_points = 1;
  for (size_t i = 0; i < g; ++i) {
    const int64_t n = signal[first + i];
    const bool last = i + 1 == g;
    s.n[i] = n;
    s.inembed[i] = last && kind == FftKind::kC2R ? n / 2 + 1 : n;
    s.onembed[i] = last && kind == FftKind::kR2C ? n / 2 + 1 : n;
    in_points *= s.inembed[i];
    out_points *= s.onembed[i];
  }
  s.idist = in_points;
  s.odist = out_points;
  s.batch = fft_product(signal, 0, first);
  return s;
}

// An in-place c2c along dim p of a dense complex buffer of `sizes`: one strided
// plan over the dims after p, run once per block of the dims before it.
inline FftPlanStep fft_along_step(const std::vector<int64_t>& sizes, size_t p) {
  FftPlanStep s;
  const int64_t n = sizes[p], inner = fft_product(sizes, p + 1, sizes.size());
  s.n[0] = s.inembed[0] = s.onembed[0] = n;
  s.istride = s.ostride = inner;
  s.idist = s.odist = 1;
  s.batch = inner;
  s.count = fft_product(sizes, 0, p);
  s.in_step = s.out_step = n * inner;
  return s;
}

// The steps transforming the last k dims of a dense buffer; `signal` the buffer's
// sizes on the real side (c2c: its sizes).
inline std::vector<FftPlanStep> fft_plan_steps(FftKind kind, const std::vector<int64_t>& signal,
                                               size_t k) {
  const size_t g = k < 3 ? k : 3, nd = signal.size();
  std::vector<int64_t> spectrum = signal;  // the complex buffer's sizes
  if (kind != FftKind::kC2C) spectrum[nd - 1] = signal[nd - 1] / 2 + 1;
  std::vector<FftPlanStep> steps;
  if (kind != FftKind::kC2R) steps.push_back(fft_group_step(kind, signal, g));
  for (size_t p = nd - k; p < nd - g; ++p) steps.push_back(fft_along_step(spectrum, p));
  if (kind == FftKind::kC2R) steps.push_back(fft_group_step(kind, signal, g));
  return steps;
}

// The order in which a primitive sees a tensor's dims: the untransformed ones in
// order, then `dims` as given (so the half-spectrum dim comes last).
inline std::vector<int> fft_permutation(int ndim, const std::vector<int>& dims) {
  std::vector<bool> used(static_cast<size_t>(ndim), false);
  for (int d : dims) used[static_cast<size_t>(d)] = true;
  std::vector<int> perm;
  for (int d = 0; d < ndim; ++d)
    if (!used[static_cast<size_t>(d)]) perm.push_back(d);
  perm.insert(perm.end(), dims.begin(), dims.end());
  return perm;
}

}  // namespace flambeau::cuda::kernels
