// Checks the resampling backward's gather order (csrc/backend/kernels/
// resample_math.h, __host__ __device__ code) on the host against the CPU kernel's
// scatter (cpu/nn_resize_kernels.cpp, restated here): for every input element, the
// inverse tables visit exactly the (output, depth tap, height tap, width tap)
// contributions the CPU adds into it, in the same order. The tap tables are those of
// nearest (one tap), linear (two taps, clamped at the edges so that both read one
// index), cubic (four clamped taps) and identity axes, over sizes up and down.
// Prints "ok <cases>" or the first failure.
#include <algorithm>
#include <array>
#include <cstdio>
#include <vector>

#include "backend/kernels/resample_math.h"

using namespace flambeau::cuda::kernels;

namespace {

long long cases = 0;

struct Axis {
  int64_t in, out, taps;
  std::vector<int64_t> index;  // out * taps
};

int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); }

// Tap tables shaped like interpolate's: kind 0 nearest, 1 linear, 2 cubic, 3 identity.
Axis make_axis(int kind, int64_t in, int64_t out) {
  Axis a{in, kind == 3 ? in : out, kind == 1 ? 2 : kind == 2 ? 4 : 1, {}};
  for (int64_t o = 0; o < a.out; ++o) {
    const int64_t src = kind == 3 ? o : (o * in) / a.out;
    for (int64_t t = 0; t < a.taps; ++t) {
      const int64_t at = kind == 2 ? src - 1 + t : src + t;
      a.index.push_back(clamp(at, 0, in - 1));
    }
  }
  return a;
}

// One contribution: output (od, oh, ow) and the tap positions of each axis.
using Term = std::array<int64_t, 6>;

bool check(const std::array<Axis, 3>& ax) {
  const int64_t D = ax[0].in, H = ax[1].in, W = ax[2].in;
  // The CPU's scatter order, per input element.
  std::vector<std::vector<Term>> want(static_cast<size_t>(D * H * W));
  for (int64_t od = 0; od < ax[0].out; ++od)
    for (int64_t oh = 0; oh < ax[1].out; ++oh)
      for (int64_t ow = 0; ow < ax[2].out; ++ow)
        for (int64_t a = 0; a < ax[0].taps; ++a)
          for (int64_t b = 0; b < ax[1].taps; ++b)
            for (int64_t c = 0; c < ax[2].taps; ++c) {
              const int64_t pd = od * ax[0].taps + a, ph = oh * ax[1].taps + b,
                            pw = ow * ax[2].taps + c;
              const int64_t at = (ax[0].index[pd] * H + ax[1].index[ph]) * W + ax[2].index[pw];
              want[at].push_back({od, oh, ow, pd, ph, pw});
            }
  std::vector<int64_t> starts[3], entries[3];
  AxisInverse inv[3];
  for (int k = 0; k < 3; ++k) {
    build_axis_inverse(ax[k].index.data(), static_cast<int64_t>(ax[k].index.size()), ax[k].in,
                       &starts[k], &entries[k]);
    inv[k] = AxisInverse{ax[k].taps, starts[k].data(), entries[k].data()};
  }
  for (int64_t id = 0; id < D; ++id)
    for (int64_t ih = 0; ih < H; ++ih)
      for (int64_t iw = 0; iw < W; ++iw) {
        std::vector<Term> got;
        for_each_resample_source(inv[0], inv[1], inv[2], id, ih, iw,
                                 [&](int64_t od, int64_t oh, int64_t ow, int64_t pd, int64_t ph,
                                     int64_t pw) { got.push_back({od, oh, ow, pd, ph, pw}); });
        ++cases;
        if (got != want[(id * H + ih) * W + iw]) {
          std::printf("FAIL gather order at input (%lld, %lld, %lld)\n", static_cast<long long>(id),
                      static_cast<long long>(ih), static_cast<long long>(iw));
          return false;
        }
      }
  return true;
}

}  // namespace

int main() {
  const int64_t sizes[][2] = {{1, 1}, {1, 3}, {3, 1}, {4, 7}, {7, 4}, {5, 5}, {2, 9}};
  for (int kd = 0; kd < 4; ++kd)
    for (int kh = 0; kh < 4; ++kh)
      for (int kw = 0; kw < 4; ++kw)
        for (const auto& sd : sizes)
          for (const auto& sw : sizes) {
            const std::array<Axis, 3> ax = {make_axis(kd, sd[0], sd[1]),
                                            make_axis(kh, sw[1], sw[0]),
                                            make_axis(kw, sw[0], sd[1])};
            if (!check(ax)) return 1;
          }
  std::printf("ok %lld\n", cases);
  return 0;
}
