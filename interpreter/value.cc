#include "interpreter/value.h"

#include <cmath>
#include <cstring>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/dim.h"
#include "ir/type.h"

namespace kiln::interp {

class ValueNode : public Object {
 public:
  static bool IsInstance(const Object*) { return true; }
  explicit ValueNode(ValueKind k) : kind(k) {}
  const ValueKind kind;
  Ref<const HostTensor> tensor;                  // kTensor
  std::vector<Value> fields;                     // kTuple, kAdt
  Function fn;                                   // kClosure
  std::vector<std::pair<Var, Value>> captured;   // kClosure
  Var rec_var;                                   // kClosure
  std::string name;                              // kClosure
  Constructor ctor;                              // kAdt
  mutable Value cell;                            // kRef
};

Value::Value() = default;
Value::Value(const Value&) = default;
Value::Value(Value&&) noexcept = default;
Value& Value::operator=(const Value&) = default;
Value& Value::operator=(Value&&) noexcept = default;
Value::~Value() = default;
Value::Value(Ref<const ValueNode> n) : node_(std::move(n)) {}

const char* ValueKindName(ValueKind k) {
  switch (k) {
    case ValueKind::kTensor: return "tensor";
    case ValueKind::kTuple: return "tuple";
    case ValueKind::kClosure: return "closure";
    case ValueKind::kAdt: return "ADT value";
    case ValueKind::kRef: return "reference";
  }
  return "value";
}

namespace {
Ref<ValueNode> New(ValueKind k) { return Ref<ValueNode>(new ValueNode(k)); }
const std::vector<Value>& NoFields() {
  static const auto* v = new std::vector<Value>();
  return *v;
}
}  // namespace

Value Value::Tensor(Ref<const HostTensor> t) {
  auto n = New(ValueKind::kTensor);
  n->tensor = std::move(t);
  return Value(Ref<const ValueNode>(std::move(n)));
}
Value Value::Tuple(std::vector<Value> fields) {
  auto n = New(ValueKind::kTuple);
  n->fields = std::move(fields);
  return Value(Ref<const ValueNode>(std::move(n)));
}
Value Value::Closure(Function fn, std::vector<std::pair<Var, Value>> captured, Var rec_var,
                     std::string name) {
  auto n = New(ValueKind::kClosure);
  n->fn = std::move(fn);
  n->captured = std::move(captured);
  n->rec_var = std::move(rec_var);
  n->name = std::move(name);
  return Value(Ref<const ValueNode>(std::move(n)));
}
Value Value::Adt(Constructor ctor, std::vector<Value> fields) {
  auto n = New(ValueKind::kAdt);
  n->ctor = std::move(ctor);
  n->fields = std::move(fields);
  return Value(Ref<const ValueNode>(std::move(n)));
}
Value Value::NewRef(Value initial) {
  auto n = New(ValueKind::kRef);
  n->cell = std::move(initial);
  return Value(Ref<const ValueNode>(std::move(n)));
}

ValueKind Value::kind() const { return node_->kind; }
const Ref<const HostTensor>& Value::tensor() const {
  static const auto* null = new Ref<const HostTensor>();
  return is_tensor() ? node_->tensor : *null;
}
const std::vector<Value>& Value::fields() const {
  return (is_tuple() || is_adt()) ? node_->fields : NoFields();
}
const Function& Value::closure_function() const {
  static const auto* null = new Function();
  return is_closure() ? node_->fn : *null;
}
const std::vector<std::pair<Var, Value>>& Value::closure_captured() const {
  static const auto* none = new std::vector<std::pair<Var, Value>>();
  return is_closure() ? node_->captured : *none;
}
const Var& Value::closure_rec_var() const {
  static const auto* null = new Var();
  return is_closure() ? node_->rec_var : *null;
}
const std::string& Value::closure_name() const {
  static const auto* empty = new std::string();
  return is_closure() ? node_->name : *empty;
}
const Constructor& Value::constructor() const {
  static const auto* null = new Constructor();
  return is_adt() ? node_->ctor : *null;
}
Value Value::ref_get() const { return is_ref() ? node_->cell : Value(); }
void Value::ref_set(Value v) const {
  if (is_ref()) node_->cell = std::move(v);
}

namespace {

std::string ScalarText(const HostTensor& t, int64_t i) {
  DataType dt = t.dtype();
  if (dt.is_bool()) return t.GetAsInt64(i) ? "true" : "false";
  if (dt.is_float()) return absl::StrCat(t.GetAsDouble(i));
  if (dt.is_uint() && dt.bits() == 64)
    return absl::StrCat(static_cast<uint64_t>(t.GetAsInt64(i)));
  return absl::StrCat(t.GetAsInt64(i));
}

void Print(const Value& v, int depth, std::string* out) {
  if (!v.defined()) {
    absl::StrAppend(out, "<null>");
    return;
  }
  if (depth > 8) {
    absl::StrAppend(out, "...");
    return;
  }
  switch (v.kind()) {
    case ValueKind::kTensor: {
      const HostTensor& t = *v.tensor();
      absl::StrAppend(out, "Tensor[", ShapeToString(ShapeFromInts(t.shape())), ", ",
                      t.dtype().ToString(), "] [");
      const int64_t n = std::min<int64_t>(t.num_elements(), 16);
      for (int64_t i = 0; i < n; ++i) absl::StrAppend(out, i ? ", " : "", ScalarText(t, i));
      if (t.num_elements() > n) absl::StrAppend(out, ", ... (", t.num_elements(), " elements)");
      absl::StrAppend(out, "]");
      return;
    }
    case ValueKind::kTuple:
    case ValueKind::kAdt: {
      if (v.is_adt()) {
        absl::StrAppend(out, v.constructor()->name);
        if (v.fields().empty()) return;
      }
      absl::StrAppend(out, "(");
      for (size_t i = 0; i < v.fields().size(); ++i) {
        if (i) absl::StrAppend(out, ", ");
        if (i >= 8) {
          absl::StrAppend(out, "...");
          break;
        }
        Print(v.fields()[i], depth + 1, out);
      }
      absl::StrAppend(out, v.is_tuple() && v.fields().size() == 1 ? ",)" : ")");
      return;
    }
    case ValueKind::kClosure:
      absl::StrAppend(out, "closure(", v.closure_name().empty() ? "fn" : v.closure_name(), ")");
      return;
    case ValueKind::kRef:
      absl::StrAppend(out, "ref(");
      Print(v.ref_get(), depth + 1, out);
      absl::StrAppend(out, ")");
      return;
  }
}

// Compares one pair of values; pushes the pairs of fields still to compare.
absl::Status CompareOne(const Value& a, const Value& b, const std::string& path, bool exact,
                        double rtol, double atol,
                        std::vector<std::tuple<Value, Value, std::string>>* todo) {
  auto mismatch = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("values differ at ", path.empty() ? "root" : path,
                                                   ": ", why));
  };
  if (a.defined() != b.defined()) return mismatch("one value is null");
  if (!a.defined()) return absl::OkStatus();
  if (a.kind() != b.kind())
    return mismatch(absl::StrCat(ValueKindName(a.kind()), " vs ", ValueKindName(b.kind())));
  switch (a.kind()) {
    case ValueKind::kTensor: {
      const HostTensor& x = *a.tensor();
      const HostTensor& y = *b.tensor();
      if (x.dtype() != y.dtype() || x.shape() != y.shape())
        return mismatch(absl::StrCat("Tensor[", ShapeToString(ShapeFromInts(x.shape())), ", ",
                                     x.dtype().ToString(), "] vs Tensor[",
                                     ShapeToString(ShapeFromInts(y.shape())), ", ",
                                     y.dtype().ToString(), "]"));
      if (exact || !x.dtype().is_float()) {
        if (exact ? x.BitwiseEqual(y) : std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()) == 0)
          return absl::OkStatus();
        for (int64_t i = 0; i < x.num_elements(); ++i)
          if (x.GetAsInt64(i) != y.GetAsInt64(i) || x.GetAsDouble(i) != y.GetAsDouble(i) ||
              std::signbit(x.GetAsDouble(i)) != std::signbit(y.GetAsDouble(i)))
            return mismatch(absl::StrCat("element ", i, ": ", ScalarText(x, i), " vs ",
                                         ScalarText(y, i)));
        return mismatch("bits differ (NaN payloads)");
      }
      for (int64_t i = 0; i < x.num_elements(); ++i) {
        const double p = x.GetAsDouble(i), q = y.GetAsDouble(i);
        bool ok;
        if (std::isnan(p) || std::isnan(q)) ok = std::isnan(p) && std::isnan(q);
        else if (std::isinf(p) || std::isinf(q)) ok = p == q;
        else ok = std::fabs(p - q) <= atol + rtol * std::fabs(q);
        if (!ok)
          return mismatch(absl::StrCat("element ", i, ": ", p, " vs ", q, " (rtol ", rtol,
                                       ", atol ", atol, ")"));
      }
      return absl::OkStatus();
    }
    case ValueKind::kTuple:
    case ValueKind::kAdt: {
      if (a.is_adt() && (a.constructor()->tag != b.constructor()->tag ||
                         a.constructor()->name != b.constructor()->name))
        return mismatch(absl::StrCat("constructor ", a.constructor()->name, " vs ",
                                     b.constructor()->name));
      if (a.fields().size() != b.fields().size())
        return mismatch(absl::StrCat(a.fields().size(), " fields vs ", b.fields().size()));
      for (size_t i = a.fields().size(); i-- > 0;)
        todo->emplace_back(a.fields()[i], b.fields()[i], absl::StrCat(path, ".", i));
      return absl::OkStatus();
    }
    case ValueKind::kClosure:
    case ValueKind::kRef:
      if (a.node() != b.node()) return mismatch("different closures or references");
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

// Iterative, so a long list value compares without deep recursion.
absl::Status Compare(const Value& a, const Value& b, bool exact, double rtol, double atol) {
  std::vector<std::tuple<Value, Value, std::string>> todo;
  todo.emplace_back(a, b, "");
  while (!todo.empty()) {
    auto [x, y, path] = std::move(todo.back());
    todo.pop_back();
    absl::Status s = CompareOne(x, y, path, exact, rtol, atol, &todo);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

std::string ValueToString(const Value& v) {
  std::string out;
  Print(v, 0, &out);
  return out;
}

absl::StatusOr<Ref<const HostTensor>> AsTensor(const Value& v, absl::string_view what) {
  if (v.is_tensor()) return v.tensor();
  return absl::InvalidArgumentError(absl::StrCat(
      what, " must be a tensor; got ", v.defined() ? ValueKindName(v.kind()) : "no value"));
}

bool BitwiseEqual(const Value& a, const Value& b) {
  return Compare(a, b, /*exact=*/true, 0, 0).ok();
}

absl::Status AllClose(const Value& a, const Value& b, double rtol, double atol) {
  return Compare(a, b, /*exact=*/false, rtol, atol);
}

}  // namespace kiln::interp
