// ONNX Einsum and Det -> graph IR (part of the nn family; registered by
// RegisterNnConverters). Det: the 1 x 1 to 3 x 3 closed forms (below).
//
// The equation is parsed into one label list per operand (letters, and for
// "..." synthetic labels for the broadcast dims, aligned from the right) and
// the output's (explicit after "->", or implicit: the ellipsis dims, then the
// letters that occur once, in alphabetical order). A label repeated within
// one operand takes that operand's diagonal (the repeated axes moved last,
// merged by reshape, and `take` of the diagonal's flat offsets). Then every
// operand is transposed to one global label order (output labels first, the
// summed ones after) with unit axes for the labels it lacks, the operands are
// multiplied (broadcasting), and the summed labels reduced with `sum`.
// Two operands whose labels all have static, equal extents contract with
// nn.batch_matmul instead (batch, free and summed labels grouped by
// transpose and reshape), which does not materialize the outer product.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "frontends/onnx/convert_util.h"
#include "frontends/onnx/converter.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend::cvt {
namespace {

// Labels: 'A'..'Z' -> 0..25, 'a'..'z' -> 26..51 (ASCII order), ellipsis dims 52...
constexpr int kEllipsisBase = 52;

int LetterLabel(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return 26 + (ch - 'a');
  return -1;
}

struct Term {
  std::vector<int> before, after;  // letters before and after "..."
  bool ellipsis = false;
};

absl::StatusOr<Term> ParseTerm(const ConvertContext& c, const std::string& s) {
  Term t;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '.') {
      if (t.ellipsis || s.compare(i, 3, "...") != 0)
        return c.Invalid(absl::StrCat("malformed term \"", s, "\" (one \"...\" at most)"));
      t.ellipsis = true;
      i += 3;
      continue;
    }
    const int l = LetterLabel(s[i]);
    if (l < 0) return c.Invalid(absl::StrCat("term \"", s, "\" has a character that is not a letter"));
    (t.ellipsis ? t.after : t.before).push_back(l);
    ++i;
  }
  return t;
}

std::vector<int> Expand(const Term& t, int64_t ellipsis_dims, int64_t max_ellipsis) {
  std::vector<int> labels = t.before;
  if (t.ellipsis)
    for (int64_t j = 0; j < ellipsis_dims; ++j)
      labels.push_back(kEllipsisBase + static_cast<int>(max_ellipsis - ellipsis_dims + j));
  labels.insert(labels.end(), t.after.begin(), t.after.end());
  return labels;
}

struct Operand {
  Expr x;
  std::vector<int> labels;  // one per axis
};

// Takes the diagonal of every label repeated in `op` (its axes merged and
// indexed at the diagonal's flat offsets); the label then sits last, once.
absl::Status TakeDiagonals(ConvertContext& c, Operand& op) {
  for (;;) {
    int rep = -1;
    for (size_t i = 0; i < op.labels.size() && rep < 0; ++i)
      for (size_t j = i + 1; j < op.labels.size(); ++j)
        if (op.labels[i] == op.labels[j]) rep = op.labels[i];
    if (rep < 0) return absl::OkStatus();
    KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(op.x));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, t, "an operand with a repeated label"));
    std::vector<int64_t> perm, keep_dims;
    std::vector<int> keep_labels;
    int64_t k = 0, n = -1;
    for (size_t i = 0; i < op.labels.size(); ++i) {
      if (op.labels[i] == rep) continue;
      perm.push_back(static_cast<int64_t>(i));
      keep_dims.push_back(dims[i]);
      keep_labels.push_back(op.labels[i]);
    }
    for (size_t i = 0; i < op.labels.size(); ++i) {
      if (op.labels[i] != rep) continue;
      if (n >= 0 && dims[i] != n)
        return c.Invalid(absl::StrCat("a repeated label spans axes of different extents (", n,
                                      " and ", dims[i], ")"));
      n = dims[i];
      perm.push_back(static_cast<int64_t>(i));
      ++k;
    }
    KILN_ASSIGN_OR_RETURN(Expr x, Transpose(c, op.x, perm));
    // Flat offset of (j, j, ..., j) in [n]*k: j * (1 + n + ... + n^(k-1)).
    int64_t step = 0, p = 1;
    for (int64_t e = 0; e < k; ++e, p *= n) step += p;
    std::vector<int64_t> merged = keep_dims;
    merged.push_back(p);
    KILN_RETURN_IF_ERROR(CheckConstantSize(c, merged, "the diagonal's operand"));
    KILN_ASSIGN_OR_RETURN(x, Reshape(c, x, merged, /*allowzero=*/true));
    std::vector<int64_t> offsets(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) offsets[static_cast<size_t>(j)] = j * step;
    KILN_ASSIGN_OR_RETURN(Expr idx, ConstI64(c, {n}, offsets));
    KILN_ASSIGN_OR_RETURN(op.x, Take(c, x, idx, static_cast<int64_t>(keep_dims.size())));
    keep_labels.push_back(rep);
    op.labels = keep_labels;
  }
}

// Sums every label of `op` that no other operand and not the output has.
absl::Status SumPrivateLabels(ConvertContext& c, Operand& op, const std::multiset<int>& elsewhere) {
  std::vector<int64_t> axes;
  std::vector<int> kept;
  for (size_t i = 0; i < op.labels.size(); ++i) {
    if (elsewhere.count(op.labels[i]) == 0) axes.push_back(static_cast<int64_t>(i));
    else kept.push_back(op.labels[i]);
  }
  if (axes.empty()) return absl::OkStatus();
  KILN_ASSIGN_OR_RETURN(op.x, Reduce(c, "sum", op.x, axes, false));
  op.labels = kept;
  return absl::OkStatus();
}

// `op` transposed to `order` (its labels in that order) with unit axes for the
// labels of `order` it lacks.
absl::StatusOr<Expr> Align(ConvertContext& c, const Operand& op, const std::vector<int>& order) {
  std::vector<int64_t> perm;
  for (int l : order)
    for (size_t i = 0; i < op.labels.size(); ++i)
      if (op.labels[i] == l) perm.push_back(static_cast<int64_t>(i));
  Expr x = op.x;
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  if (!identity) {
    KILN_ASSIGN_OR_RETURN(x, Transpose(c, x, perm));
  }
  for (size_t pos = 0; pos < order.size(); ++pos) {
    if (std::find(op.labels.begin(), op.labels.end(), order[pos]) != op.labels.end()) continue;
    KILN_ASSIGN_OR_RETURN(x, ExpandDims(c, x, static_cast<int64_t>(pos)));
  }
  return x;
}

// The extent of every label of `op`, or nullopt if one is not static.
std::optional<std::map<int, int64_t>> StaticExtents(const Operand& op) {
  auto t = TypeOf(op.x);
  if (!t.ok()) return std::nullopt;
  std::map<int, int64_t> m;
  for (size_t i = 0; i < op.labels.size(); ++i) {
    const Dim& d = (*t)->shape[i];
    if (!d.is_static()) return std::nullopt;
    m[op.labels[i]] = d.value();
  }
  return m;
}

// a x b -> out via nn.batch_matmul, when every label is static and the
// shared labels have equal extents (no broadcasting); nullopt otherwise.
// Every label of a and b is in the output or in both operands.
std::optional<absl::StatusOr<Expr>> BatchMatMulPair(ConvertContext& c, const Operand& a,
                                                    const Operand& b, const std::vector<int>& out) {
  const auto ea = StaticExtents(a), eb = StaticExtents(b);
  if (!ea || !eb) return std::nullopt;
  auto has = [](const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); };
  std::vector<int> batch, free_a, free_b, summed;
  for (int l : out) {
    const bool in_a = has(a.labels, l), in_b = has(b.labels, l);
    if (in_a && in_b) batch.push_back(l);
    else if (in_a) free_a.push_back(l);
    else if (in_b) free_b.push_back(l);
    else return std::nullopt;
  }
  for (int l : a.labels)
    if (!has(out, l)) summed.push_back(l);
  for (int l : a.labels)
    if (has(b.labels, l) && ea->at(l) != eb->at(l)) return std::nullopt;
  auto prod = [](const std::map<int, int64_t>& e, const std::vector<int>& ls) {
    int64_t p = 1;
    for (int l : ls) p *= e.at(l);
    return p;
  };
  auto cat = [](std::vector<int> x, const std::vector<int>& y) {
    x.insert(x.end(), y.begin(), y.end());
    return x;
  };
  auto run = [&]() -> absl::StatusOr<Expr> {
    const int64_t nb = prod(*ea, batch), m = prod(*ea, free_a), k = prod(*ea, summed),
                  n = prod(*eb, free_b);
    KILN_ASSIGN_OR_RETURN(Expr a3, Align(c, a, cat(cat(batch, free_a), summed)));
    KILN_ASSIGN_OR_RETURN(a3, Reshape(c, a3, {nb, m, k}, /*allowzero=*/true));
    KILN_ASSIGN_OR_RETURN(Expr b3, Align(c, b, cat(cat(batch, free_b), summed)));
    KILN_ASSIGN_OR_RETURN(b3, Reshape(c, b3, {nb, n, k}, /*allowzero=*/true));
    auto ba = NewAttrs<BatchMatmulAttrs>();
    ba->transpose_b = true;
    KILN_ASSIGN_OR_RETURN(Expr y, c.Call("nn.batch_matmul", {a3, b3}, ba));
    const std::vector<int> y_labels = cat(cat(batch, free_a), free_b);
    std::vector<int64_t> y_dims;
    for (int l : y_labels) y_dims.push_back(has(a.labels, l) ? ea->at(l) : eb->at(l));
    KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, y_dims, /*allowzero=*/true));
    return Align(c, Operand{y, y_labels}, out);
  };
  return run();
}

Outs ConvertEinsum(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(std::string eq_raw, c.AttrString("equation", ""));
  std::string eq;
  for (char ch : eq_raw)
    if (ch != ' ' && ch != '\t') eq.push_back(ch);
  if (eq.empty()) return c.Invalid("the equation attribute is missing or empty");
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  for (;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const int n_ops = c.num_inputs();
  if (static_cast<int>(terms.size()) != n_ops)
    return c.Invalid(absl::StrCat("the equation \"", eq_raw, "\" has ", terms.size(),
                                  " operand terms for ", n_ops, " inputs"));
  std::vector<Term> parsed;
  std::vector<Operand> ops;
  int64_t max_ellipsis = 0;
  std::vector<int64_t> ellipsis_dims;
  for (int i = 0; i < n_ops; ++i) {
    KILN_ASSIGN_OR_RETURN(Term t, ParseTerm(c, terms[static_cast<size_t>(i)]));
    KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(i));
    const int64_t letters = static_cast<int64_t>(t.before.size() + t.after.size());
    const int64_t e = xt->ndim() - letters;
    if (e < 0 || (!t.ellipsis && e != 0))
      return c.Invalid(absl::StrCat("term \"", terms[static_cast<size_t>(i)], "\" does not match input ",
                                    i, "'s rank ", xt->ndim()));
    max_ellipsis = std::max(max_ellipsis, e);
    ellipsis_dims.push_back(e);
    parsed.push_back(t);
  }
  for (int i = 0; i < n_ops; ++i) {
    KILN_ASSIGN_OR_RETURN(Expr x, c.Input(i));
    ops.push_back({x, Expand(parsed[static_cast<size_t>(i)], ellipsis_dims[static_cast<size_t>(i)],
                             max_ellipsis)});
  }
  std::map<int, int> count;
  std::vector<int> first_seen;
  for (const Operand& op : ops)
    for (int l : op.labels) {
      if (count[l]++ == 0) first_seen.push_back(l);
    }
  std::vector<int> out;
  if (arrow != std::string::npos) {
    KILN_ASSIGN_OR_RETURN(Term t, ParseTerm(c, eq.substr(arrow + 2)));
    out = Expand(t, max_ellipsis, max_ellipsis);
    std::set<int> seen;
    for (int l : out) {
      if (!seen.insert(l).second) return c.Invalid("the output term repeats a label");
      if (count.count(l) == 0) return c.Invalid("the output term has a label no input has");
    }
  } else {
    for (int64_t j = 0; j < max_ellipsis; ++j) out.push_back(kEllipsisBase + static_cast<int>(j));
    for (const auto& [l, n] : count)
      if (l < kEllipsisBase && n == 1) out.push_back(l);
  }
  for (Operand& op : ops) KILN_RETURN_IF_ERROR(TakeDiagonals(c, op));
  // Labels only one operand has and the output lacks are summed first.
  for (size_t i = 0; i < ops.size(); ++i) {
    std::multiset<int> elsewhere(out.begin(), out.end());
    for (size_t j = 0; j < ops.size(); ++j)
      if (j != i) elsewhere.insert(ops[j].labels.begin(), ops[j].labels.end());
    KILN_RETURN_IF_ERROR(SumPrivateLabels(c, ops[i], elsewhere));
  }
  if (ops.size() == 2) {
    if (auto y = BatchMatMulPair(c, ops[0], ops[1], out); y.has_value()) {
      KILN_ASSIGN_OR_RETURN(Expr r, *std::move(y));
      return std::vector<Expr>{r};
    }
  }
  std::vector<int> order = out;
  for (int l : first_seen)
    if (std::find(order.begin(), order.end(), l) == order.end()) {
      bool present = false;
      for (const Operand& op : ops)
        present = present || std::find(op.labels.begin(), op.labels.end(), l) != op.labels.end();
      if (present) order.push_back(l);
    }
  Expr y;
  for (const Operand& op : ops) {
    KILN_ASSIGN_OR_RETURN(Expr x, Align(c, op, order));
    if (y) {
      KILN_ASSIGN_OR_RETURN(y, Binary(c, "multiply", y, x));
    } else {
      y = x;
    }
  }
  if (order.size() > out.size()) {
    KILN_ASSIGN_OR_RETURN(y, Reduce(c, "sum", y,
                                    IotaInts(static_cast<int64_t>(out.size()),
                                             static_cast<int64_t>(order.size())),
                                    false));
  }
  return std::vector<Expr>{y};
}

// Det of [..., n, n] for n <= 3 by cofactor expansion (the closed forms; an
// LU decomposition for larger n needs loops the graph IR does not express).
Outs ConvertDet(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  const int64_t r = xt->ndim();
  if (r < 2) return c.Invalid(absl::StrCat("X must be [..., M, M]; got ", ShapeToString(xt->shape)));
  if (!xt->dtype.is_float()) return c.Invalid(absl::StrCat("X must be float; got ", xt->dtype.ToString()));
  const Dim &dm = xt->shape[static_cast<size_t>(r - 2)], &dn = xt->shape[static_cast<size_t>(r - 1)];
  if (!dm.is_static() || !dn.is_static())
    return c.Unsupported(absl::StrCat("the matrix dims must be static; got ", ShapeToString(xt->shape)));
  if (dm.value() != dn.value())
    return c.Invalid(absl::StrCat("X's matrices must be square; got ", ShapeToString(xt->shape)));
  const int64_t n = dn.value();
  if (n < 1 || n > 3)
    return c.Unsupported(absl::StrCat("Det of ", n, " x ", n,
                                      " matrices (kiln composes the closed forms for 1 x 1 to 3 x "
                                      "3; larger ones need an LU decomposition)"));
  auto el = [&](int64_t i, int64_t j) -> absl::StatusOr<Expr> {
    KILN_ASSIGN_OR_RETURN(Expr e, SliceAxis(c, x, r - 2, i, i + 1));
    KILN_ASSIGN_OR_RETURN(e, SliceAxis(c, e, r - 1, j, j + 1));
    return Squeeze(c, e, {r - 2, r - 1});
  };
  auto mul = [&](const Expr& a, const Expr& b) { return Binary(c, "multiply", a, b); };
  auto sub = [&](const Expr& a, const Expr& b) { return Binary(c, "subtract", a, b); };
  // a * d - b * c for the 2 x 2 minor of rows (i0, i1) and columns (j0, j1).
  auto minor2 = [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) -> absl::StatusOr<Expr> {
    KILN_ASSIGN_OR_RETURN(Expr a, el(i0, j0));
    KILN_ASSIGN_OR_RETURN(Expr b, el(i0, j1));
    KILN_ASSIGN_OR_RETURN(Expr cc, el(i1, j0));
    KILN_ASSIGN_OR_RETURN(Expr d, el(i1, j1));
    KILN_ASSIGN_OR_RETURN(Expr ad, mul(a, d));
    KILN_ASSIGN_OR_RETURN(Expr bc, mul(b, cc));
    return sub(ad, bc);
  };
  Expr y;
  if (n == 1) {
    KILN_ASSIGN_OR_RETURN(y, el(0, 0));
  } else if (n == 2) {
    KILN_ASSIGN_OR_RETURN(y, minor2(0, 1, 0, 1));
  } else {
    KILN_ASSIGN_OR_RETURN(Expr a, el(0, 0));
    KILN_ASSIGN_OR_RETURN(Expr b, el(0, 1));
    KILN_ASSIGN_OR_RETURN(Expr cc, el(0, 2));
    KILN_ASSIGN_OR_RETURN(Expr m0, minor2(1, 2, 1, 2));
    KILN_ASSIGN_OR_RETURN(Expr m1, minor2(1, 2, 0, 2));
    KILN_ASSIGN_OR_RETURN(Expr m2, minor2(1, 2, 0, 1));
    KILN_ASSIGN_OR_RETURN(Expr t0, mul(a, m0));
    KILN_ASSIGN_OR_RETURN(Expr t1, mul(b, m1));
    KILN_ASSIGN_OR_RETURN(Expr t2, mul(cc, m2));
    KILN_ASSIGN_OR_RETURN(y, sub(t0, t1));
    KILN_ASSIGN_OR_RETURN(y, Binary(c, "add", y, t2));
  }
  return std::vector<Expr>{y};
}

}  // namespace

void RegisterEinsumConverters(ConverterRegistry& r) {
  r.Add("Einsum", 12, ConvertEinsum);
  r.Add("Det", 11, ConvertDet);
}

}  // namespace kiln::onnx_frontend::cvt
