// The batched matrix product kernel on OpenBLAS. Operands whose last two dims
// are neither row- nor column-major are copied first; integer and 16-bit float
// products run in plain loops / through float, as BLAS has no such types.
#include "core/scratch.h"
#include "cpu/blas.h"
#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/common.h"

namespace flambeau {

namespace {

// How BLAS should read a (B, rows, cols) operand: its leading dimension and
// whether it is transposed, or nullopt when it must be copied first.
struct MatrixLayout {
  bool ok = false;
  bool transposed = false;
  int64_t ld = 0;
};

MatrixLayout layout_of(const Tensor& t) {
  int64_t rows = t->sizes()[1], cols = t->sizes()[2];
  int64_t rs = t->strides()[1], cs = t->strides()[2];
  if ((cs == 1 || cols == 1) && rs >= std::max<int64_t>(cols, 1)) return {true, false, rs};
  if ((rs == 1 || rows == 1) && cs >= std::max<int64_t>(rows, 1)) return {true, true, cs};
  return {};
}

template <class T>
void blas_bmm(const Tensor& out, Tensor a, Tensor b) {
  auto usable = [](Tensor& t) {
    MatrixLayout l = layout_of(t);
    if (l.ok) return l;
    Tensor packed = empty(t->sizes(), t->dtype());
    copy_into(packed, t);
    t = packed;
    return layout_of(t);
  };
  MatrixLayout la = usable(a), lb = usable(b);
  const int64_t batch = out->sizes()[0], m = out->sizes()[1], n = out->sizes()[2];
  const int64_t k = a->sizes()[2];
  gemm<T>(batch, la.transposed, lb.transposed, m, n, k, T(1), a->data_as<T>(), la.ld,
          a->strides()[0], b->data_as<T>(), lb.ld, b->strides()[0], T(0), out->data_as<T>(), n,
          m * n);
}

template <class T>
void loop_bmm(const Tensor& out, const Tensor& a, const Tensor& b) {
  using C = compute_t<T>;
  const int64_t batch = out->sizes()[0], m = out->sizes()[1], n = out->sizes()[2];
  const int64_t k = a->sizes()[2];
  IntList sa = a->strides(), sb = b->strides();
  parallel_for(0, batch * m, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * k, 1)),
               [&](int64_t lo, int64_t hi) {
                 Scratch<C> row(static_cast<size_t>(n));
                 for (int64_t r = lo; r < hi; ++r) {
                   int64_t bi = r / m, i = r % m;
                   std::fill(row.begin(), row.end(), C(0));
                   for (int64_t p = 0; p < k; ++p) {
                     C av = static_cast<C>(a->data_as<T>()[bi * sa[0] + i * sa[1] + p * sa[2]]);
                     const T* brow = b->data_as<T>() + bi * sb[0] + p * sb[1];
                     for (int64_t j = 0; j < n; ++j) row[j] += av * static_cast<C>(brow[j * sb[2]]);
                   }
                   T* orow = out->data_as<T>() + r * n;
                   for (int64_t j = 0; j < n; ++j) orow[j] = static_cast<T>(row[j]);
                 }
               });
}

void bmm_kernel(const Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t k = a->sizes()[2];
  if (k == 0) {
    visit_dtype<kAllTypes>(out->dtype(), "bmm", [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill(out->data_as<T>(), out->data_as<T>() + out->numel(), T(0));
    });
    return;
  }
  switch (out->dtype()) {
    case ScalarType::Float32:
      return blas_bmm<float>(out, a, b);
    case ScalarType::Float64:
      return blas_bmm<double>(out, a, b);
    case ScalarType::Complex64:
      return blas_bmm<c64>(out, a, b);
    case ScalarType::Complex128:
      return blas_bmm<c128>(out, a, b);
    case ScalarType::Float16:
    case ScalarType::BFloat16: {  // through float32 GEMM
      Tensor fa = to_dtype(a, ScalarType::Float32), fb = to_dtype(b, ScalarType::Float32);
      Tensor fo = empty(out->sizes(), ScalarType::Float32);
      blas_bmm<float>(fo, fa, fb);
      copy_into(out, fo);
      return;
    }
    default:
      visit_dtype<kIntTypes>(out->dtype(), "bmm",
                             [&](auto tag) { loop_bmm<typename decltype(tag)::type>(out, a, b); });
  }
}

}  // namespace

FLB_REGISTER_KERNEL(bmm, kCPU, bmm_kernel);

}  // namespace flambeau
