// Checks the convolution kernels' im2col/col2im arithmetic (csrc/backend/kernels/
// im2col_math.h, __host__ __device__ code) on the host against the CPU kernel's
// segment walks (cpu/im2col.h, restated here) over many small geometries:
// - im2col_source gives, for every column-matrix element, the input element the
//   CPU's im2col copies there (or -1 where it writes 0);
// - col2im_column gathers, for every input element, exactly the column-matrix
//   elements the CPU's col2im_add adds into it, in the same order.
// Prints "ok <cases>" or the first failure.
#include <flambeau/backend_abi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "backend/kernels/im2col_math.h"

using namespace flambeau::cuda::kernels;

namespace {

long long cases = 0;

int64_t ceil_div(int64_t a, int64_t b) { return a <= 0 ? 0 : (a - 1) / b + 1; }

// The CPU's walk: for row r, calls f(column, input offset or -1) for every column.
template <class F>
void cpu_row_walk(const flb_conv_geometry& g, int64_t r, const F& f) {
  const int64_t kvol = conv_kernel_volume(g), ow_n = g.out[2], w = g.in[2];
  const int64_t c = r / kvol, k = r % kvol;
  const int64_t kd = k / (g.kernel[1] * g.kernel[2]), kh = (k / g.kernel[2]) % g.kernel[1],
                kw = k % g.kernel[2];
  const int64_t off = kw * g.dilation[2] - g.pad[2], sw = g.stride[2];
  int64_t lo = std::min(ow_n, ceil_div(-off, sw));
  int64_t hi = std::max(lo, std::min(ow_n, ceil_div(w - off, sw)));
  for (int64_t od = 0; od < g.out[0]; ++od) {
    const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
      const bool valid = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1];
      const int64_t seg = od * g.out[1] + oh;
      const int64_t src_row = valid ? (c * g.in[0] + id) * g.in[1] + ih : -1;
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        const bool inside = src_row >= 0 && ow >= lo && ow < hi;
        f(seg * ow_n + ow, inside ? src_row * w + off + ow * sw : -1);
      }
    }
  }
}

bool check(const flb_conv_geometry& g, int64_t channels) {
  const int64_t kvol = conv_kernel_volume(g), cols = conv_out_plane(g), plane = conv_in_plane(g);
  const int64_t rows = channels * kvol;
  // The CPU's col2im_add: channel by channel, kernel position by position, adds
  // column-matrix element (c * kvol + k) * cols + j into its input element.
  std::vector<std::vector<int64_t>> adds(static_cast<size_t>(channels * plane));
  for (int64_t r = 0; r < rows; ++r) {
    bool ok = true;
    cpu_row_walk(g, r, [&](int64_t j, int64_t src) {
      ++cases;
      if (im2col_source(g, r, j) != src) ok = false;
      if (src >= 0) adds[src].push_back(r * cols + j);
    });
    if (!ok) {
      std::printf("FAIL im2col_source: row %lld\n", static_cast<long long>(r));
      return false;
    }
  }
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t p = 0; p < plane; ++p) {
      const int64_t ipos[3] = {p / (g.in[1] * g.in[2]), (p / g.in[2]) % g.in[1], p % g.in[2]};
      std::vector<int64_t> got;
      for (int64_t k = 0; k < kvol; ++k) {
        int64_t j;
        if (col2im_column(g, k, ipos, &j)) got.push_back((c * kvol + k) * cols + j);
      }
      ++cases;
      if (got != adds[c * plane + p]) {
        std::printf("FAIL col2im_column: channel %lld position %lld\n", static_cast<long long>(c),
                    static_cast<long long>(p));
        return false;
      }
    }
  return true;
}

// The output size of one axis, as the frontend computes it (0 when the padded
// input is shorter than the dilated kernel).
int64_t out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

}  // namespace

int main() {
  flb_conv_geometry g{};
  g.batch = 1;
  g.groups = 1;
  // 1-d and 2-d sweeps over W (and H), then a few 3-d geometries.
  for (int64_t in = 1; in <= 7; ++in)
    for (int64_t kernel = 1; kernel <= 3; ++kernel)
      for (int64_t stride = 1; stride <= 3; ++stride)
        for (int64_t pad = 0; pad <= 2; ++pad)
          for (int64_t dilation = 1; dilation <= 2; ++dilation)
            for (int dims = 1; dims <= 2; ++dims) {
              for (int a = 0; a < 3; ++a) {
                const bool used = a >= 3 - dims;
                g.in[a] = used ? in + a : 1;
                g.kernel[a] = used ? kernel : 1;
                g.stride[a] = used ? stride : 1;
                g.pad[a] = used ? pad : 0;
                g.dilation[a] = used ? dilation : 1;
                g.out[a] = out_size(g.in[a], g.kernel[a], g.stride[a], g.pad[a], g.dilation[a]);
              }
              if (!check(g, 2)) return 1;
            }
  const int64_t shapes[][5] = {// in, kernel, stride, pad, dilation (every axis)
                               {4, 2, 1, 0, 1},
                               {5, 3, 2, 1, 1},
                               {6, 2, 2, 1, 2},
                               {3, 3, 1, 2, 1}};
  for (const auto& s : shapes) {
    for (int a = 0; a < 3; ++a) {
      g.in[a] = s[0] + a;
      g.kernel[a] = s[1];
      g.stride[a] = s[2];
      g.pad[a] = s[3];
      g.dilation[a] = s[4];
      g.out[a] = out_size(g.in[a], s[1], s[2], s[3], s[4]);
    }
    if (!check(g, 3)) return 1;
  }
  std::printf("ok %lld\n", cases);
  return 0;
}
