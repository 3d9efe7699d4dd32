// The reduction engine for CPU kernels.
//
// An AccBuffer<Acc> holds one accumulator per output element, laid out like the
// output with the reduced dims kept as size 1. reduce_into<In, Acc>(buf, in,
// combine, merge) folds `in` into it; reduce_into2 folds two operands (a value
// and an index, or a value and a per-output statistic broadcast over the
// reduced dims). The walk follows the first input's memory order: when the
// innermost dim is reduced, runs fold into one accumulator with 32 independent
// lanes (so the loop pipelines/vectorizes); when it is kept, each input row
// folds elementwise into the accumulator row. Threads split the outermost dim:
// disjoint outputs when it is kept, private accumulators merged in order when it
// is reduced. finish() maps the accumulators into the output tensor.
#pragma once
#include <memory>
#include <type_traits>
#include <vector>

#include "cpu/sum_f32.h"
#include "cpu/tensor_iterator.h"
#include "ops/common.h"

namespace flambeau {

// Accumulators shaped like the kept-dims output; `view(shape)` is a byte-strided
// uint8 view broadcast to the input shape, for the iterator.
template <class Acc>
class AccBuffer {
 public:
  static_assert(std::is_trivially_copyable_v<Acc>, "accumulators are raw memory");
  AccBuffer(IntList keep_shape, Acc init) : keep_(keep_shape) {
    n_ = numel_of(keep_shape);
    storage_ =
        empty({std::max<int64_t>(1, n_) * static_cast<int64_t>(sizeof(Acc))}, ScalarType::UInt8);
    init_ = init;
    for (int64_t i = 0; i < n_; ++i) data()[i] = init;
  }
  Acc* data() const { return reinterpret_cast<Acc*>(storage_->data()); }
  int64_t numel() const { return n_; }
  Acc init() const { return init_; }
  Tensor view(IntList shape) const {
    DimVector strides = contiguous_strides(keep_);
    for (auto& s : strides) s *= static_cast<int64_t>(sizeof(Acc));
    return expand_to(make_view(storage_, keep_, strides, 0), shape, "reduce");
  }

 private:
  DimVector keep_;
  int64_t n_ = 0;
  Tensor storage_;
  Acc init_;
};

namespace detail {

// Runs `run(data, strides, n)` over the iterator whose last operand is the
// accumulator view, splitting the work across threads.
template <class Acc, class Run, class Merge>
void reduce_engine(const TensorIterator& it, const AccBuffer<Acc>& buf, const Run& run,
                   const Merge& merge) {
  const int64_t numel = it.numel();
  const int threads = get_num_threads();
  const int last = it.ntensors() - 1;
  if (numel <= kGrainSize || it.ndim() == 0 || omp_in_parallel()) {
    it.serial_for_each(run, 0, numel);
    return;
  }
  ReleaseInterpreterLock unlocked;  // long enough to let other Python threads run
  if (threads <= 1) {
    it.serial_for_each(run, 0, numel);
    return;
  }
  const int64_t outer = it.shape()[0];
  const int64_t row = numel / outer;
  if (it.stride(last, 0) != 0) {
    // Outermost dim is kept: each thread owns a slice of the outputs.
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / row),
                 [&](int64_t lo, int64_t hi) { it.serial_for_each(run, lo * row, hi * row); });
    return;
  }
  // Outermost dim is reduced: private accumulators, merged in order.
  const int64_t chunks = std::min<int64_t>(threads, outer);
  const int64_t acc_n = buf.numel();
  std::unique_ptr<Acc[]> partial(new Acc[static_cast<size_t>(chunks * acc_n)]);
  for (int64_t j = 0; j < chunks * acc_n; ++j) partial[j] = buf.init();
  const char* acc_base = reinterpret_cast<const char*>(buf.data());
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    char* mine = reinterpret_cast<char*>(partial.get() + c * acc_n);
    auto run_private = [&](char** d, const int64_t* s, int64_t n) {
      char* local[TensorIterator::kMaxOperands];
      for (int t = 0; t < last; ++t) local[t] = d[t];
      local[last] = mine + (d[last] - acc_base);
      run(local, s, n);
    };
    int64_t lo = outer * c / chunks, hi = outer * (c + 1) / chunks;
    it.serial_for_each(run_private, lo * row, hi * row);
  }
  Acc* a = buf.data();
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t j = 0; j < acc_n; ++j) a[j] = merge(a[j], partial[c * acc_n + j]);
}

template <class In, class Acc, class Combine, class Merge>
void reduce_run(char** data, const int64_t* s, int64_t n, Acc init, const Combine& combine,
                const Merge& merge) {
  const char* x = data[0];
  char* a = data[1];
  if constexpr (std::is_same_v<Combine, SumF32>) {
    if (s[1] == 0 && s[0] == sizeof(float)) {
      *reinterpret_cast<double*>(a) += sum_contiguous_f32(reinterpret_cast<const float*>(x), n);
      return;
    }
  }
  if (s[1] == 0) {
    // kLanes independent accumulators: a plain (not unrolled) loop over them is
    // what GCC's loop vectorizer handles, NaN-propagating selects included.
    constexpr int kLanes = 32;
    Acc r[kLanes];
    for (int k = 0; k < kLanes; ++k) r[k] = init;
    int64_t i = 0;
    if (s[0] == sizeof(In)) {
      const In* p = reinterpret_cast<const In*>(x);
      for (; i + kLanes <= n; i += kLanes) {
#pragma GCC unroll 1
        for (int k = 0; k < kLanes; ++k) r[k] = combine(r[k], p[i + k]);
      }
      for (; i < n; ++i) r[0] = combine(r[0], p[i]);
    } else {
      for (; i < n; ++i) r[0] = combine(r[0], *reinterpret_cast<const In*>(x + i * s[0]));
    }
    Acc total = *reinterpret_cast<Acc*>(a);
    for (int k = 0; k < kLanes; ++k) total = merge(total, r[k]);
    *reinterpret_cast<Acc*>(a) = total;
    return;
  }
  if (s[0] == sizeof(In) && s[1] == sizeof(Acc)) {
    const In* __restrict__ p = reinterpret_cast<const In*>(x);
    Acc* __restrict__ q = reinterpret_cast<Acc*>(a);
    for (int64_t i = 0; i < n; ++i) q[i] = combine(q[i], p[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    Acc& q = *reinterpret_cast<Acc*>(a + i * s[1]);
    q = combine(q, *reinterpret_cast<const In*>(x + i * s[0]));
  }
}

template <class In0, class In1, class Acc, class Combine, class Merge>
void reduce_run2(char** data, const int64_t* s, int64_t n, Acc init, const Combine& combine,
                 const Merge& merge) {
  auto x0 = [&](int64_t i) { return *reinterpret_cast<const In0*>(data[0] + i * s[0]); };
  auto x1 = [&](int64_t i) { return *reinterpret_cast<const In1*>(data[1] + i * s[1]); };
  char* a = data[2];
  if (s[2] == 0) {
    Acc r[8] = {init, init, init, init, init, init, init, init};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) r[k] = combine(r[k], x0(i + k), x1(i + k));
    for (; i < n; ++i) r[0] = combine(r[0], x0(i), x1(i));
    Acc total = *reinterpret_cast<Acc*>(a);
    for (int k = 0; k < 8; ++k) total = merge(total, r[k]);
    *reinterpret_cast<Acc*>(a) = total;
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    Acc& q = *reinterpret_cast<Acc*>(a + i * s[2]);
    q = combine(q, x0(i), x1(i));
  }
}

// Row sums of float32 (sum(dim=-1) of a matrix with contiguous rows): sum_rows_f32
// reads four rows side by side; the rows are split across threads. False when the
// iteration is not that shape.
inline bool sum_f32_rows(const TensorIterator& it) {
  if (it.ndim() != 2 || it.stride(0, 1) != sizeof(float) || it.stride(1, 1) != 0 ||
      it.stride(1, 0) <= 0 || it.stride(1, 0) % sizeof(double) != 0 || it.stride(0, 0) <= 0)
    return false;
  const int64_t rows = it.shape()[0], n = it.shape()[1];
  const int64_t ld = it.stride(0, 0) / static_cast<int64_t>(sizeof(float));
  const int64_t out_stride = it.stride(1, 0) / static_cast<int64_t>(sizeof(double));
  const auto* x = reinterpret_cast<const float*>(it.base(0));
  auto* out = reinterpret_cast<double*>(it.base(1));
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / n), [&](int64_t lo, int64_t hi) {
    sum_rows_f32(x + lo * ld, hi - lo, ld, n, out + lo * out_stride, out_stride);
  });
  return true;
}

// Column sums of float32 (sum(dim=0) of a matrix with contiguous rows): threads take
// ranges of whole cache lines of columns, or, where there are too few columns to share,
// ranges of rows into private totals added in order. False when the iteration is not
// that shape.
inline bool sum_f32_columns(const TensorIterator& it) {
  if (it.ndim() != 2 || it.stride(0, 1) != sizeof(float) || it.stride(1, 1) != sizeof(double) ||
      it.stride(1, 0) != 0 || it.stride(0, 0) <= 0 || it.stride(0, 0) % sizeof(float) != 0)
    return false;
  const int64_t rows = it.shape()[0], n = it.shape()[1];
  const int64_t ld = it.stride(0, 0) / static_cast<int64_t>(sizeof(float));
  const auto* x = reinterpret_cast<const float*>(it.base(0));
  auto* out = reinterpret_cast<double*>(it.base(1));
  constexpr int64_t kColumns = 64 / sizeof(float);
  const int64_t groups = (n + kColumns - 1) / kColumns;
  const int64_t threads = get_num_threads();
  if (groups >= threads || rows * n <= kGrainSize || omp_in_parallel()) {
    parallel_for(0, groups, std::max<int64_t>(1, kGrainSize / (rows * kColumns)),
                 [&](int64_t lo, int64_t hi) {
                   const int64_t j0 = lo * kColumns, j1 = std::min(n, hi * kColumns);
                   sum_columns_f32(x + j0, rows, ld, j1 - j0, out + j0);
                 });
    return true;
  }
  const int64_t chunks = std::min(threads, rows);
  std::vector<double> partial(static_cast<size_t>(chunks * n), 0.0);
  parallel_for(0, chunks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t c = lo; c < hi; ++c) {
      const int64_t r0 = rows * c / chunks, r1 = rows * (c + 1) / chunks;
      sum_columns_f32(x + r0 * ld, r1 - r0, ld, n, partial.data() + c * n);
    }
  });
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t j = 0; j < n; ++j) out[j] += partial[static_cast<size_t>(c * n + j)];
  return true;
}

}  // namespace detail

// Folds `in` into buf: combine(Acc, In) -> Acc per element, merge(Acc, Acc) -> Acc
// for partial results (in order: merge(earlier, later)).
template <class In, class Acc, class Combine, class Merge>
void reduce_into(const AccBuffer<Acc>& buf, const Tensor& in, const Combine& combine,
                 const Merge& merge) {
  if (in->numel() == 0) return;
  Tensor ops[] = {in, buf.view(in->sizes())};
  auto it = TensorIterator::build(Span<Tensor>(ops, 2));
  if constexpr (std::is_same_v<Combine, SumF32>) {
    if (detail::sum_f32_rows(it) || detail::sum_f32_columns(it)) return;
  }
  const Acc init = buf.init();
  detail::reduce_engine(
      it, buf,
      [&](char** d, const int64_t* s, int64_t n) {
        detail::reduce_run<In, Acc>(d, s, n, init, combine, merge);
      },
      merge);
}

// Folds (in0, in1) pairs into buf: combine(Acc, In0, In1) -> Acc. in1 has in0's
// shape (usually a broadcast view).
template <class In0, class In1, class Acc, class Combine, class Merge>
void reduce_into2(const AccBuffer<Acc>& buf, const Tensor& in0, const Tensor& in1,
                  const Combine& combine, const Merge& merge) {
  if (in0->numel() == 0) return;
  Tensor ops[] = {in0, in1, buf.view(in0->sizes())};
  auto it = TensorIterator::build(Span<Tensor>(ops, 3));
  const Acc init = buf.init();
  detail::reduce_engine(
      it, buf,
      [&](char** d, const int64_t* s, int64_t n) {
        detail::reduce_run2<In0, In1, Acc>(d, s, n, init, combine, merge);
      },
      merge);
}

// Writes f(acc) into `out`, a contiguous tensor of the kept-dims shape.
template <class Out, class Acc, class F>
void finish(const Tensor& out, const AccBuffer<Acc>& buf, const F& f) {
  Out* o = out->data_as<Out>();
  const Acc* a = buf.data();
  for (int64_t i = 0; i < buf.numel(); ++i) o[i] = f(a[i]);
}

// The real type of a complex element type (T itself otherwise).
template <class T>
struct real_of {
  using type = T;
};
template <class T>
struct real_of<std::complex<T>> {
  using type = T;
};
template <class T>
using real_of_t = typename real_of<T>::type;

// A tensor of `in`'s shape whose value is the position along `dim` (a stride-0
// broadcast of 0..n-1), for index-returning reductions.
Tensor positions_along(const Tensor& in, int64_t dim);

// Sizes of the reduced dims multiplied: the count each output reduces.
inline int64_t reduced_count(const Tensor& in, IntList dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= in->sizes()[d];
  return n;
}

}  // namespace flambeau
