// File: tests/compiled/compare.cc
#include "tests/compiled/compare.h"

#include <cmath>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/type.h"

namespace kiln::testing {
namespace {

void StoreDouble(HostTensor& t, int64_t i, double v) {
  DataType d = t.dtype();
  char* p = static_cast<char*>(t.mutable_raw_data()) + i * d.bytes();
  auto put = [&](auto x) { std::memcpy(p, &x, sizeof(x)); };
  switch (d.code()) {
    case DTypeCode::kFloat:
      if (d.bits() == 16) put(FloatToHalf(static_cast<float>(v)));
      else if (d.bits() == 32) put(static_cast<float>(v));
      else put(v);
      break;
    case DTypeCode::kBFloat: put(FloatToBFloat16(static_cast<float>(v))); break;
    case DTypeCode::kBool: put(static_cast<uint8_t>(v != 0)); break;
    case DTypeCode::kInt:
      if (d.bits() == 8) put(static_cast<int8_t>(v));
      else if (d.bits() == 16) put(static_cast<int16_t>(v));
      else if (d.bits() == 32) put(static_cast<int32_t>(v));
      else put(static_cast<int64_t>(v));
      break;
    case DTypeCode::kUInt:
      if (d.bits() == 8) put(static_cast<uint8_t>(v));
      else if (d.bits() == 16) put(static_cast<uint16_t>(v));
      else if (d.bits() == 32) put(static_cast<uint32_t>(v));
      else put(static_cast<uint64_t>(v));
      break;
    default: break;
  }
}

absl::StatusOr<interp::Value> RandomValue(const Type& t, std::mt19937_64& rng, double lo, double hi,
                                          int64_t ilo, int64_t ihi) {
  if (const auto* tup = t.as<TupleTypeNode>()) {
    std::vector<interp::Value> fields;
    for (const Type& f : tup->fields) {
      KILN_ASSIGN_OR_RETURN(interp::Value v, RandomValue(f, rng, lo, hi, ilo, ihi));
      fields.push_back(v);
    }
    return interp::Value::Tuple(std::move(fields));
  }
  const auto* tt = t.as<TensorTypeNode>();
  if (tt == nullptr) return absl::InvalidArgumentError("random inputs: not a tensor type");
  std::vector<int64_t> shape;
  for (const Dim& d : tt->shape) {
    if (!d.is_static()) return absl::InvalidArgumentError("random inputs: symbolic shape");
    shape.push_back(d.value());
  }
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> h, HostTensor::Create(tt->dtype, shape));
  std::uniform_real_distribution<double> fd(lo, hi);
  std::uniform_int_distribution<int64_t> id(ilo, ihi);
  for (int64_t i = 0; i < h->num_elements(); ++i) {
    double v = 0;
    if (tt->dtype.is_float()) v = fd(rng);
    else if (tt->dtype.is_bool()) v = static_cast<double>(rng() & 1);
    else v = static_cast<double>(id(rng));
    StoreDouble(*h, i, v);
  }
  return interp::Value::Tensor(h);
}

void Compare(const interp::Value& e, const interp::Value& g, double rtol, double atol,
             const std::string& path, std::vector<std::string>* errors) {
  if (errors->size() > 8) return;
  if (e.is_tuple() || g.is_tuple()) {
    if (!e.is_tuple() || !g.is_tuple() || e.fields().size() != g.fields().size()) {
      errors->push_back(absl::StrCat(path, ": tuple structure differs"));
      return;
    }
    for (size_t i = 0; i < e.fields().size(); ++i) {
      Compare(e.fields()[i], g.fields()[i], rtol, atol, absl::StrCat(path, ".", i), errors);
    }
    return;
  }
  const HostTensor& a = *e.tensor();
  const HostTensor& b = *g.tensor();
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    errors->push_back(absl::StrCat(path, ": dtype/shape differ (", a.dtype().ToString(), " vs ",
                                   b.dtype().ToString(), ")"));
    return;
  }
  bool exact = !a.dtype().is_float();
  for (int64_t i = 0; i < a.num_elements() && errors->size() <= 8; ++i) {
    double x = a.GetAsDouble(i);
    double y = b.GetAsDouble(i);
    bool ok = false;
    if (std::isnan(x) || std::isnan(y)) ok = std::isnan(x) && std::isnan(y);
    else if (exact || std::isinf(x)) ok = x == y;
    else ok = std::fabs(x - y) <= atol + rtol * std::fabs(x);
    if (!ok) errors->push_back(absl::StrCat(path, "[", i, "]: expected ", x, ", got ", y));
  }
}

}  // namespace

absl::StatusOr<std::vector<interp::Value>> RandomInputs(const Module& m, uint64_t seed, double lo,
                                                        double hi, int64_t ilo, int64_t ihi) {
  KILN_ASSIGN_OR_RETURN(Function main, m.Lookup("main"));
  std::mt19937_64 rng(seed);
  std::vector<interp::Value> out;
  for (const Var& p : main->params) {
    Type t = p->checked_type() ? p->checked_type() : p->type_annotation;
    KILN_ASSIGN_OR_RETURN(interp::Value v, RandomValue(t, rng, lo, hi, ilo, ihi));
    out.push_back(v);
  }
  return out;
}

::testing::AssertionResult ValuesClose(const interp::Value& expected, const interp::Value& got,
                                       double rtol, double atol) {
  std::vector<std::string> errors;
  Compare(expected, got, rtol, atol, "out", &errors);
  if (errors.empty()) return ::testing::AssertionSuccess();
  ::testing::AssertionResult r = ::testing::AssertionFailure();
  for (const std::string& e : errors) r << e << "\n";
  return r;
}

}  // namespace kiln::testing
