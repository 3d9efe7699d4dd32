// einsum: the equation is parsed into integer labels per operand dimension;
// repeated labels become diagonals, labels nobody else needs are summed early,
// and operands are contracted left to right, each pair as one batched GEMM
// (permute + reshape + bmm).
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "generated/ops_linalg.h"
#include "generated/ops_reduction.h"
#include "generated/ops_shape.h"

namespace flambeau::ops {

namespace {

constexpr int kLetters = 52;  // A-Z then a-z; ellipsis dims are labels 52, 53, ...

using Labels = std::vector<int>;

struct Operand {
  Tensor t;
  Labels labels;  // one per dim of t
};

int letter_label(char c, size_t pos) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  fail("einsum(): invalid subscript given at index ", pos,
       " in the equation string, subscripts must be in [a-zA-Z]");
}

char label_char(int l) { return static_cast<char>(l < 26 ? 'A' + l : 'a' + (l - 26)); }

// Subscripts of one term: letter labels, and where "..." stands (or -1).
struct Term {
  Labels letters;
  int ellipsis_at = -1;  // index into letters before which the ellipsis goes
};

Term parse_term(const std::string& s, size_t base) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '.') {
      FLB_CHECK(t.ellipsis_at < 0 && s.compare(i, 3, "...") == 0,
                "einsum(): found '.' for operand that is not part of any ellipsis");
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 2;
      continue;
    }
    t.letters.push_back(letter_label(s[i], base + i));
  }
  return t;
}

// Labels of every dim: the ellipsis covers the operand's extra dims, aligned to
// the right of the widest ellipsis (n_ell labels), so they broadcast together.
Labels expand_term(const Term& t, int64_t ndim, int n_ell) {
  Labels out;
  int64_t ell = ndim - static_cast<int64_t>(t.letters.size());
  for (size_t i = 0; i <= t.letters.size(); ++i) {
    if (static_cast<int>(i) == t.ellipsis_at)
      for (int64_t e = 0; e < ell; ++e)
        out.push_back(kLetters + n_ell - static_cast<int>(ell) + static_cast<int>(e));
    if (i < t.letters.size()) out.push_back(t.letters[i]);
  }
  return out;
}

bool contains(const Labels& ls, int l) { return std::find(ls.begin(), ls.end(), l) != ls.end(); }

// Sums the dims of op whose labels are not in `keep`.
void sum_unneeded(Operand& op, const Labels& keep) {
  DimVector dims;
  Labels left;
  for (size_t d = 0; d < op.labels.size(); ++d) {
    if (contains(keep, op.labels[d]))
      left.push_back(op.labels[d]);
    else
      dims.push_back(static_cast<int64_t>(d));
  }
  if (dims.empty()) return;
  op.t = sum(op.t, dims, false, op.t->dtype(), {});
  op.labels = left;
}

// Repeated labels within one operand select the diagonal.
void take_diagonals(Operand& op) {
  for (size_t i = 0; i < op.labels.size(); ++i) {
    for (size_t j = i + 1; j < op.labels.size(); ++j) {
      if (op.labels[i] != op.labels[j]) continue;
      FLB_CHECK(op.t->size(static_cast<int64_t>(i)) == op.t->size(static_cast<int64_t>(j)),
                "einsum(): subscript ", label_char(op.labels[i]),
                " is repeated for operand but the sizes don't match, ",
                op.t->size(static_cast<int64_t>(i)), " != ", op.t->size(static_cast<int64_t>(j)));
      op.t = diagonal(op.t, 0, static_cast<int64_t>(i), static_cast<int64_t>(j));
      int l = op.labels[i];
      op.labels.erase(op.labels.begin() + static_cast<long>(j));
      op.labels.erase(op.labels.begin() + static_cast<long>(i));
      op.labels.push_back(l);
      i = static_cast<size_t>(-1);  // restart: positions moved
      break;
    }
  }
}

int64_t size_of(const Operand& op, int l) {
  for (size_t d = 0; d < op.labels.size(); ++d)
    if (op.labels[d] == l) return op.t->size(static_cast<int64_t>(d));
  return 1;
}

// Permutes op to `order` (its labels, reordered), expanding dims listed with a
// larger target size (broadcast size-1 dims), and merges them into groups.
Tensor arrange(const Operand& op, const std::vector<Labels>& groups,
               const std::array<int64_t, 128>& sizes) {
  DimVector perm, full;
  for (const Labels& g : groups)
    for (int l : g) {
      auto it = std::find(op.labels.begin(), op.labels.end(), l);
      perm.push_back(it - op.labels.begin());
      full.push_back(sizes[l]);
    }
  Tensor t = expand(permute(op.t, perm), full);
  DimVector merged;
  for (const Labels& g : groups) {
    int64_t n = 1;
    for (int l : g) n *= sizes[l];
    merged.push_back(n);
  }
  return reshape(t, merged);
}

// a (x) b contracting the labels they share that are not in `keep`.
Operand contract(Operand a, Operand b, const Labels& keep) {
  Labels batch, only_a, only_b, summed;
  for (int l : a.labels) {
    if (contains(b.labels, l))
      (contains(keep, l) ? batch : summed).push_back(l);
    else
      only_a.push_back(l);
  }
  for (int l : b.labels)
    if (!contains(a.labels, l)) only_b.push_back(l);
  std::array<int64_t, 128> sizes{};
  for (int l : a.labels) sizes[l] = size_of(a, l);
  for (int l : b.labels) {
    int64_t sa = contains(a.labels, l) ? sizes[l] : 1, sb = size_of(b, l);
    FLB_CHECK(sa == sb || sa == 1 || sb == 1, "einsum(): operands do not broadcast with remapped ",
              "shapes (original->remapped): dimension ", label_char(l < kLetters ? l : 0),
              " has sizes ", sa, " and ", sb);
    sizes[l] = std::max(sa, sb);
  }
  Tensor ta = arrange(a, {batch, only_a, summed}, sizes);
  Tensor tb = arrange(b, {batch, summed, only_b}, sizes);
  Tensor prod = bmm(ta, tb, {});
  Operand r;
  DimVector shape;
  for (const Labels* g : {&batch, &only_a, &only_b})
    for (int l : *g) {
      r.labels.push_back(l);
      shape.push_back(sizes[l]);
    }
  r.t = reshape(prod, shape);
  return r;
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& tensors) {
  FLB_CHECK(!tensors.empty(), "einsum(): must provide at least one operand");
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq.push_back(c);
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(lhs.substr(start, comma - start), start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  FLB_CHECK(terms.size() <= tensors.size(),
            "einsum(): fewer operands were provided than specified in the equation");
  FLB_CHECK(terms.size() >= tensors.size(),
            "einsum(): more operands were provided than specified in the equation");
  int n_ell = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    int64_t nl = static_cast<int64_t>(terms[i].letters.size()), nd = tensors[i]->dim();
    if (terms[i].ellipsis_at < 0) {
      FLB_CHECK(nl == nd, "einsum(): the number of subscripts in the equation (", nl,
                ") does not match the number of dimensions (", nd, ") for operand ", i,
                " and no ellipsis was given");
    } else {
      FLB_CHECK(nl <= nd, "einsum(): the number of subscripts in the equation (", nl,
                ") is more than the number of dimensions (", nd, ") for operand ", i);
    }
    if (terms[i].ellipsis_at >= 0) n_ell = std::max(n_ell, static_cast<int>(nd - nl));
  }
  ScalarType dt = result_type(Span<Tensor>(tensors.data(), tensors.size()));
  std::vector<Operand> ops;
  std::array<int, 128> count{};
  for (size_t i = 0; i < terms.size(); ++i) {
    Operand op{to_dtype(tensors[i], dt), expand_term(terms[i], tensors[i]->dim(), n_ell)};
    for (int l : op.labels) ++count[l];
    ops.push_back(std::move(op));
  }
  Labels output;
  if (arrow == std::string::npos) {  // implicit: ellipsis dims, then labels seen once, sorted
    for (int e = 0; e < n_ell; ++e) output.push_back(kLetters + e);
    for (int l = 0; l < kLetters; ++l)
      if (count[l] == 1) output.push_back(l);
  } else {
    std::string rhs = eq.substr(arrow + 2);
    Term out = parse_term(rhs, arrow + 2);
    Labels ls = expand_term(
        out, static_cast<int64_t>(out.letters.size()) + (out.ellipsis_at >= 0 ? n_ell : 0), n_ell);
    for (int l : ls) {
      FLB_CHECK(!contains(output, l), "einsum(): output subscript ", label_char(l),
                " appears more than once in the output");
      FLB_CHECK(count[l] > 0, "einsum(): output subscript ", label_char(l),
                " does not appear in the equation for any input operand");
      output.push_back(l);
    }
  }
  for (Operand& op : ops) take_diagonals(op);
  // Labels needed after operand i: the output's and those of later operands.
  auto needed_after = [&](size_t i) {
    Labels keep = output;
    for (size_t j = i + 1; j < ops.size(); ++j)
      keep.insert(keep.end(), ops[j].labels.begin(), ops[j].labels.end());
    return keep;
  };
  Operand acc = ops[0];
  {
    Labels keep = needed_after(0);
    sum_unneeded(acc, keep);
  }
  for (size_t i = 1; i < ops.size(); ++i) {
    Labels keep = needed_after(i);
    Labels with_acc = keep;
    with_acc.insert(with_acc.end(), acc.labels.begin(), acc.labels.end());
    sum_unneeded(ops[i], with_acc);
    Labels with_next = keep;
    with_next.insert(with_next.end(), ops[i].labels.begin(), ops[i].labels.end());
    sum_unneeded(acc, with_next);
    acc = contract(acc, ops[i], keep);
  }
  sum_unneeded(acc, output);
  DimVector perm;
  for (int l : output) {
    auto it = std::find(acc.labels.begin(), acc.labels.end(), l);
    if (it == acc.labels.end()) {  // an ellipsis dim no operand had (size 1)
      acc.t = unsqueeze(acc.t, acc.t->dim());
      acc.labels.push_back(l);
      it = acc.labels.end() - 1;
    }
    perm.push_back(it - acc.labels.begin());
  }
  return permute(acc.t, perm);
}

}  // namespace flambeau::ops
