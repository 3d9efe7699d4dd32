// Runs the CUDA kernels' CTC loss (csrc/backend/kernels/ctc_math.h) on the host, so
// the test can compare it with the CPU's _ctc_loss and _ctc_loss_backward
// (tests/test_ctc_math.py). Each sample runs on a "block" of THREADS host threads
// that take turns: one at a time, from one sync() to the next, in an order
// shuffled every phase (seeded), so a phase that read what another thread writes
// in the same phase would see it missing in some order; a thread leaving while
// others wait at a sync (a divergent barrier) exits with status 3. The scratch
// starts as NaN (and garbage chains), as uninitialized device memory would.
//
// stdin, whitespace-separated, floats as C hex literals (or inf, -inf, nan):
//   DTYPE(f32|f64) T N C BLANK ZERO_INFINITY THREADS SEED
//   log_probs (T N C values), then NTARGETS and the flat int64 targets, then
//   offsets (N), input_lengths (N), target_lengths (N), grad_out (N)
// stdout: "nll" and N values, "log_alpha" and N T (2 max(target_lengths) + 1)
// values (the unreached ones stay -inf, as the frontend fills them), "grad" and
// T N C values; each a double in %a.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "backend/kernels/ctc_math.h"

using namespace flambeau::cuda::kernels;

namespace {

// n threads taking turns between barriers.
class Turns {
 public:
  Turns(int n, unsigned seed) : n_(n), order_(static_cast<size_t>(n)), rng_(seed) {
    std::iota(order_.begin(), order_.end(), 0);
    std::shuffle(order_.begin(), order_.end(), rng_);
  }
  int size() const { return n_; }

  template <class F>
  void run(F&& body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < n_; ++r)
      threads.emplace_back([this, &body, r] {
        {
          std::unique_lock<std::mutex> lock(m_);
          cv_.wait(lock, [&] { return order_[pos_] == r; });
        }
        body(r);
        arrive(r, true);
      });
    for (std::thread& t : threads) t.join();
  }

  // Thread r reached a barrier (done: left the kernel): the next one in the order
  // runs; the last one of a phase starts the next phase in a new order.
  void arrive(int r, bool done) {
    std::unique_lock<std::mutex> lock(m_);
    ++(done ? done_ : synced_);
    if (++pos_ == n_) {
      if (done_ != 0 && synced_ != 0) {
        std::fprintf(stderr, "divergent barrier: %d threads left, %d wait\n", done_, synced_);
        std::_Exit(3);
      }
      pos_ = done_ = synced_ = 0;
      std::shuffle(order_.begin(), order_.end(), rng_);
    }
    cv_.notify_all();
    if (!done) cv_.wait(lock, [&] { return order_[pos_] == r; });
  }

 private:
  int n_;
  std::vector<int> order_;
  std::mt19937 rng_;
  std::mutex m_;
  std::condition_variable cv_;
  int pos_ = 0, done_ = 0, synced_ = 0;
};

struct TurnBlock {
  Turns* turns;
  int64_t r;
  int64_t rank() const { return r; }
  int64_t size() const { return turns->size(); }
  void sync() const { turns->arrive(static_cast<int>(r), false); }
};

double read_double() {
  char buf[64];
  if (std::scanf("%63s", buf) != 1) std::exit(2);
  return std::strtod(buf, nullptr);
}

int64_t read_int() {
  long long v = 0;
  if (std::scanf("%lld", &v) != 1) std::exit(2);
  return v;
}

template <class V>
std::vector<V> read_ints(int64_t n) {
  std::vector<V> v(static_cast<size_t>(n));
  for (V& x : v) x = static_cast<V>(read_int());
  return v;
}

template <class T>
void print(const char* name, const std::vector<T>& v) {
  std::printf("%s", name);
  for (T x : v) std::printf(" %a", static_cast<double>(x));
  std::printf("\n");
}

template <class T>
int run(int64_t frames, int64_t N, int64_t C, int64_t blank, bool zero_infinity, int threads,
        unsigned seed) {
  std::vector<T> lp(static_cast<size_t>(frames * N * C));
  for (T& x : lp) x = static_cast<T>(read_double());
  const std::vector<int64_t> targets = read_ints<int64_t>(read_int());
  const std::vector<int64_t> offsets = read_ints<int64_t>(N), il = read_ints<int64_t>(N),
                             tl = read_ints<int64_t>(N);
  std::vector<T> grad_out(static_cast<size_t>(N));
  for (T& x : grad_out) x = static_cast<T>(read_double());
  const int64_t row = 2 * *std::max_element(tl.begin(), tl.end()) + 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();

  std::vector<T> nll(static_cast<size_t>(N), T(777));
  std::vector<T> alpha(static_cast<size_t>(N * frames * row), -std::numeric_limits<T>::infinity());
  std::vector<T> grad(static_cast<size_t>(frames * N * C), T(777));
  for (int64_t b = 0; b < N; ++b) {
    const CtcSample<T> x =
        ctc_sample(lp.data(), N, C, targets.data(), offsets.data(), il.data(), tl.data(), blank, b);
    std::vector<double> rows(static_cast<size_t>(2 * row), nan);
    Turns turns(threads, seed + static_cast<unsigned>(b));
    turns.run([&](int r) {
      TurnBlock block{&turns, r};
      ctc_forward_sample(x, row, alpha.data() + b * frames * row, &nll[b], rows.data(), block);
    });
  }
  for (int64_t b = 0; b < N; ++b) {
    const CtcSample<T> x =
        ctc_sample(lp.data(), N, C, targets.data(), offsets.data(), il.data(), tl.data(), blank, b);
    std::vector<double> rows(static_cast<size_t>(2 * row), nan), post(static_cast<size_t>(C), nan);
    std::vector<int64_t> chain(static_cast<size_t>(2 * row), 0x5a5a5a5a);
    const CtcBackwardScratch scratch{rows.data(), post.data(), chain.data()};
    const double loss = static_cast<double>(nll[b]);
    Turns turns(threads, seed + 1000u + static_cast<unsigned>(b));
    turns.run([&](int r) {
      TurnBlock block{&turns, r};
      ctc_backward_sample(x, row, frames, C, alpha.data() + b * frames * row, loss,
                          static_cast<double>(grad_out[b]), ctc_zeroed(zero_infinity, loss),
                          grad.data() + b * C, scratch, block);
    });
  }
  print("nll", nll);
  print("log_alpha", alpha);
  print("grad", grad);
  return 0;
}

}  // namespace

int main() {
  char dtype[8];
  if (std::scanf("%7s", dtype) != 1) return 2;
  const int64_t frames = read_int(), N = read_int(), C = read_int(), blank = read_int();
  const bool zero_infinity = read_int() != 0;
  const int threads = static_cast<int>(read_int());
  const unsigned seed = static_cast<unsigned>(read_int());
  if (frames < 1 || N < 1 || C < 1 || threads < 1) return 2;
  if (std::strcmp(dtype, "f32") == 0)
    return run<float>(frames, N, C, blank, zero_infinity, threads, seed);
  return run<double>(frames, N, C, blank, zero_infinity, threads, seed);
}
