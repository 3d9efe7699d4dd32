// CPU kernels of index gathering and scattering (see ops/indexing_util.h).
// Gathers copy raw elements (only the item size matters) and run in parallel;
// scatters run serially in the iterator's fixed order, so duplicate indices
// combine deterministically. Indices are validated before anything is written.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>

#include "cpu/itemsize_visit.h"
#include "cpu/tensor_iterator.h"
#include "generated/kernels.h"
#include "ops/indexing_util.h"

namespace flambeau {

namespace {

// The first out-of-range index seen by any thread, reported after the loop.
struct BadIndex {
  std::atomic<bool> found{false};
  int64_t value = 0;
  void record(int64_t v) {
    bool expected = false;
    if (found.compare_exchange_strong(expected, true)) value = v;
  }
  void raise_if_found(const IndexSpec& spec) const {
    if (found.load()) fail_index_bounds(value, spec.dim, spec.size);
  }
};

inline bool in_range(int64_t k, const IndexSpec& spec) {
  return k < spec.size && (k >= 0 || (spec.allow_negative && k >= -spec.size));
}

// index_select's layout: one index per output row, each copying a whole
// contiguous source row. One memcpy per row in a plain 2-d loop, parallel over
// rows, instead of one iterator run per row. False for other layouts.
bool gather_rows(const TensorIterator& it, const IndexSpec& spec, size_t itemsize, BadIndex& bad) {
  if (it.ndim() != 2) return false;
  const int64_t w = static_cast<int64_t>(itemsize), cols = it.shape()[1];
  if (it.stride(0, 1) != w || it.stride(1, 1) != w || it.stride(2, 1) != 0) return false;
  const int64_t out_row = it.stride(0, 0), src_row = it.stride(1, 0), idx_row = it.stride(2, 0);
  const int64_t stride = spec.stride * w;
  const size_t bytes = static_cast<size_t>(cols * w);
  const bool check = spec.size >= 0;
  parallel_for(
      0, it.shape()[0], std::max<int64_t>(1, kGrainSize / cols), [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r) {
          int64_t k = *reinterpret_cast<const int64_t*>(it.base(2) + r * idx_row);
          if (check) {
            if (FLB_UNLIKELY(!in_range(k, spec))) return bad.record(k);
            k += k < 0 ? spec.size : 0;
          }
          if (r + 2 < hi && bytes <= 4096) {  // the row after next: a random start the
            int64_t kn = *reinterpret_cast<const int64_t*>(it.base(2) + (r + 2) * idx_row);
            kn = kn < 0 ? kn + spec.size : kn;  // hardware prefetcher cannot guess
            if (!check || static_cast<uint64_t>(kn) < static_cast<uint64_t>(spec.size)) {
              const char* next = it.base(1) + (r + 2) * src_row + kn * stride;
              for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch(next + b);
            }
          }
          std::memcpy(it.base(0) + r * out_row, it.base(1) + r * src_row + k * stride, bytes);
        }
      });
  return true;
}

void gather_kernel(const Tensor& out, const Tensor& src, const Tensor& index,
                   const IndexSpec& spec) {
  Tensor ops[] = {out, src, index};
  auto it = TensorIterator::build(Span<Tensor>(ops, 3));
  const bool check = spec.size >= 0;
  const int64_t stride = spec.stride * static_cast<int64_t>(out->itemsize());
  const int64_t size = spec.size;
  BadIndex bad;
  if (gather_rows(it, spec, out->itemsize(), bad)) return bad.raise_if_found(spec);
  visit_itemsize(out->itemsize(), [&](auto tag) {
    using W = typename decltype(tag)::type;
    it.for_each([&](char** d, const int64_t* s, int64_t n) {
      char* o = d[0];
      const char* x = d[1];
      const char* ix = d[2];
      if (s[2] == 0 && s[0] == sizeof(W) && s[1] == sizeof(W)) {  // one index, a whole row
        int64_t k = *reinterpret_cast<const int64_t*>(ix);
        if (check) {
          if (FLB_UNLIKELY(!in_range(k, spec))) return bad.record(k);
          k += k < 0 ? size : 0;
        }
        std::memcpy(o, x + k * stride, static_cast<size_t>(n) * sizeof(W));
        return;
      }
      if (s[0] == sizeof(W) && s[1] == 0 && s[2] == sizeof(int64_t)) {  // gather along a row
        W* op = reinterpret_cast<W*>(o);
        const int64_t* ip = reinterpret_cast<const int64_t*>(ix);
        for (int64_t i = 0; i < n; ++i) {
          int64_t k = ip[i];
          if (check) {
            if (FLB_UNLIKELY(!in_range(k, spec))) return bad.record(k);
            k += k < 0 ? size : 0;
          }
          op[i] = *reinterpret_cast<const W*>(x + k * stride);
        }
        return;
      }
      if (s[0] == sizeof(W) && s[1] == sizeof(W) && s[2] == sizeof(int64_t)) {
        // gather along an outer dim: out, src rows and index all run contiguously
        W* op = reinterpret_cast<W*>(o);
        const W* xp = reinterpret_cast<const W*>(x);
        const int64_t* ip = reinterpret_cast<const int64_t*>(ix);
        const int64_t row = stride / static_cast<int64_t>(sizeof(W));
        if (check && !spec.allow_negative) {  // one unsigned compare per index
          const uint64_t limit = static_cast<uint64_t>(size);
          for (int64_t i = 0; i < n; ++i) {
            const int64_t k = ip[i];
            if (FLB_UNLIKELY(static_cast<uint64_t>(k) >= limit)) return bad.record(k);
            op[i] = xp[i + k * row];
          }
          return;
        }
        for (int64_t i = 0; i < n; ++i) {
          int64_t k = ip[i];
          if (check) {
            if (FLB_UNLIKELY(!in_range(k, spec))) return bad.record(k);
            k += k < 0 ? size : 0;
          }
          op[i] = xp[i + k * row];
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        int64_t k = *reinterpret_cast<const int64_t*>(ix + i * s[2]);
        if (check) {
          if (FLB_UNLIKELY(!in_range(k, spec))) return bad.record(k);
          k += k < 0 ? size : 0;
        }
        *reinterpret_cast<W*>(o + i * s[0]) =
            *reinterpret_cast<const W*>(x + i * s[1] + k * stride);
      }
    });
  });
  bad.raise_if_found(spec);
}

// Raises IndexError for the first index (in iteration order) out of range. A
// parallel, branch-free scan answers "all valid?"; only when some index is bad
// does a serial pass find the first one.
void check_indices(const TensorIterator& it, int index_operand, const IndexSpec& spec) {
  if (spec.size < 0) return;
  std::atomic<bool> any_bad{false};
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    const char* p = d[index_operand];
    const int64_t st = s[index_operand];
    bool bad = false;
    if (st == sizeof(int64_t) && !spec.allow_negative) {
      // 0 <= k < size exactly when neither k nor size - 1 - k is negative: one
      // sign bit over an integer or-reduction, which vectorizes.
      const int64_t* ip = reinterpret_cast<const int64_t*>(p);
      const int64_t last = spec.size - 1;
      int64_t acc = 0;
      for (int64_t i = 0; i < n; ++i) acc |= ip[i] | (last - ip[i]);
      bad = acc < 0;
    } else {
      for (int64_t i = 0; i < n; ++i)
        bad |= !in_range(*reinterpret_cast<const int64_t*>(p + i * st), spec);
    }
    if (bad) any_bad.store(true, std::memory_order_relaxed);
  });
  if (!any_bad.load()) return;
  it.serial_for_each(
      [&](char** d, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          int64_t k = *reinterpret_cast<const int64_t*>(d[index_operand] + i * s[index_operand]);
          if (FLB_UNLIKELY(!in_range(k, spec))) fail_index_bounds(k, spec.dim, spec.size);
        }
      },
      0, it.numel());
}

template <PutMode Mode, class T>
T combine(T cur, T v) {
  using C = compute_t<T>;
  if constexpr (Mode == PutMode::Add) {
    if constexpr (std::is_same_v<T, bool>) return cur || v;
    return convert<T>(static_cast<C>(cur) + static_cast<C>(v));
  } else if constexpr (Mode == PutMode::Multiply) {
    if constexpr (std::is_same_v<T, bool>) return cur && v;
    return convert<T>(static_cast<C>(cur) * static_cast<C>(v));
  } else if constexpr (is_complex_t<T>::value) {
    return v;  // max/min of complex values: rejected by the frontend
  } else {
    C a = static_cast<C>(cur), b = static_cast<C>(v);
    if constexpr (!std::is_integral_v<C>) {
      if (std::isnan(a)) return cur;
      if (std::isnan(b)) return v;
    }
    bool take = Mode == PutMode::Max ? b > a : b < a;
    return take ? v : cur;
  }
}

// Calls f(std::integral_constant<PutMode, mode>) for a combining mode.
template <class F>
void visit_mode(PutMode mode, F&& f) {
  switch (mode) {
    case PutMode::Add:
      return f(std::integral_constant<PutMode, PutMode::Add>{});
    case PutMode::Multiply:
      return f(std::integral_constant<PutMode, PutMode::Multiply>{});
    case PutMode::Max:
      return f(std::integral_constant<PutMode, PutMode::Max>{});
    case PutMode::Min:
      return f(std::integral_constant<PutMode, PutMode::Min>{});
    default:
      fail("scatter: unexpected mode");
  }
}

// Many values combined into a small 1-d target (scatter_add/index_add of a 1-d
// tensor): the values combine into a private copy of the target, checking each
// index on the way, and the copy is written back only when every index was
// valid. One pass over the indices instead of a checking pass and a combining
// pass, with the same order of operations (and results) as the serial loop.
// False (nothing done) for other layouts.
template <PutMode M, class T>
bool combine_through_copy(const TensorIterator& it, const IndexSpec& spec) {
  if (it.ndim() != 1 || spec.size < 0 || it.stride(0, 0) != 0 || it.stride(1, 0) != sizeof(T) ||
      it.stride(2, 0) != sizeof(int64_t))
    return false;
  const int64_t n = it.numel(), size = spec.size, st = spec.stride;
  if (size > n / 4) return false;  // the copy must be cheap beside the values
  T* dst = reinterpret_cast<T*>(it.base(0));
  const T* vp = reinterpret_cast<const T*>(it.base(1));
  const int64_t* ip = reinterpret_cast<const int64_t*>(it.base(2));
  const char* target_lo = it.base(0);
  const char* target_hi = target_lo + ((size - 1) * st + 1) * static_cast<int64_t>(sizeof(T));
  if (it.base(1) < target_hi && target_lo < it.base(1) + n * static_cast<int64_t>(sizeof(T)))
    return false;  // values overlapping the target see its updates in the serial loop
  std::unique_ptr<T[]> acc(new T[static_cast<size_t>(size)]);
  for (int64_t k = 0; k < size; ++k) acc[k] = dst[k * st];
  const uint64_t limit = static_cast<uint64_t>(size);
  for (int64_t i = 0; i < n; ++i) {
    int64_t k = ip[i];
    if (FLB_UNLIKELY(static_cast<uint64_t>(k) >= limit)) {  // k >= size, or k negative
      if (!spec.allow_negative || k >= 0 || k < -size) fail_index_bounds(k, spec.dim, size);
      k += size;
    }
    acc[k] = combine<M, T>(acc[k], vp[i]);
  }
  for (int64_t k = 0; k < size; ++k) dst[k * st] = acc[k];
  return true;
}

void put_kernel(const Tensor& dst, const Tensor& values, const Tensor& index, const IndexSpec& spec,
                PutMode mode) {
  Tensor ops[] = {dst, values, index};
  auto it = TensorIterator::build(Span<Tensor>(ops, 3));
  if (mode != PutMode::Assign) {
    bool done = false;
    visit_dtype<kAllTypes>(dst->dtype(), spec.op, [&](auto tag) {
      using T = typename decltype(tag)::type;
      visit_mode(mode,
                 [&](auto m) { done = combine_through_copy<decltype(m)::value, T>(it, spec); });
    });
    if (done) return;
  }
  check_indices(it, 2, spec);
  const bool check = spec.size >= 0;
  const int64_t stride = spec.stride * static_cast<int64_t>(dst->itemsize());
  auto target = [&](char* o, const char* ix) {
    int64_t k = *reinterpret_cast<const int64_t*>(ix);
    if (check && k < 0) k += spec.size;
    return o + k * stride;
  };
  if (mode == PutMode::Assign) {
    visit_itemsize(dst->itemsize(), [&](auto tag) {
      using W = typename decltype(tag)::type;
      it.serial_for_each(
          [&](char** d, const int64_t* s, int64_t n) {
            for (int64_t i = 0; i < n; ++i)
              *reinterpret_cast<W*>(target(d[0] + i * s[0], d[2] + i * s[2])) =
                  *reinterpret_cast<const W*>(d[1] + i * s[1]);
          },
          0, it.numel());
    });
    return;
  }
  const bool negative = check && spec.allow_negative;
  visit_dtype<kAllTypes>(dst->dtype(), spec.op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    visit_mode(mode, [&](auto m) {
      constexpr PutMode M = decltype(m)::value;
      it.serial_for_each(
          [&](char** d, const int64_t* s, int64_t n) {
            if (s[1] == sizeof(T) && s[2] == sizeof(int64_t) && !negative) {
              // index_add/scatter_add of 1-d runs: indices are checked, none negative
              // (strides copied to locals: stores through T* could alias the captures)
              char* o = d[0];
              const T* vp = reinterpret_cast<const T*>(d[1]);
              const int64_t* ip = reinterpret_cast<const int64_t*>(d[2]);
              const int64_t os = s[0], st = stride;
              if (os == 0) {  // a 1-d target
                for (int64_t i = 0; i < n; ++i) {
                  T* p = reinterpret_cast<T*>(o + ip[i] * st);
                  *p = combine<M, T>(*p, vp[i]);
                }
                return;
              }
              for (int64_t i = 0; i < n; ++i) {
                T* p = reinterpret_cast<T*>(o + i * os + ip[i] * st);
                *p = combine<M, T>(*p, vp[i]);
              }
              return;
            }
            for (int64_t i = 0; i < n; ++i) {
              T* p = reinterpret_cast<T*>(target(d[0] + i * s[0], d[2] + i * s[2]));
              *p = combine<M, T>(*p, *reinterpret_cast<const T*>(d[1] + i * s[1]));
            }
          },
          0, it.numel());
    });
  });
}

void offsets_kernel(const Tensor& acc, const Tensor& index, const IndexSpec& spec) {
  Tensor ops[] = {acc, index};
  auto it = TensorIterator::build(Span<Tensor>(ops, 2));
  BadIndex bad;
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t k = *reinterpret_cast<const int64_t*>(d[1] + i * s[1]);
      if (FLB_UNLIKELY(!in_range(k, spec))) return bad.record(k);
      k += k < 0 ? spec.size : 0;
      *reinterpret_cast<int64_t*>(d[0] + i * s[0]) += k * spec.stride;
    }
  });
  bad.raise_if_found(spec);
}

}  // namespace

FLB_REGISTER_KERNEL(index, kCPU, gather_kernel);
FLB_REGISTER_KERNEL(gather, kCPU, gather_kernel);
FLB_REGISTER_KERNEL(index_put, kCPU, put_kernel);
FLB_REGISTER_KERNEL(scatter, kCPU, put_kernel);
FLB_REGISTER_KERNEL(_index_offsets, kCPU, offsets_kernel);

}  // namespace flambeau
