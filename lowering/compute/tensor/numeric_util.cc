// File: lowering/compute/tensor/numeric_util.cc
#include "lowering/compute/tensor/numeric_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "interpreter/kernels.h"
#include "interpreter/value.h"
#include "ir/printer.h"
#include "ir/tensor.h"
#include "ir/tir_printer.h"
#include "lowering/compute/tensor/naive_lower.h"
#include "lowering/compute/tensor/test_util.h"
#include "lowering/passes/tir_eval.h"
#include "lowering/passes/verify.h"
#include "lowering/te/lower.h"
#include "lowering/te/schedule.h"
#include "lowering/te/schedule_x86.h"

namespace kiln::lowering::tensor::testing {
namespace {

using ::testing::AssertionFailure;
using ::testing::AssertionResult;
using ::testing::AssertionSuccess;

void SetElement(HostTensor& t, int64_t i, double v) {
  char* p = static_cast<char*>(t.mutable_raw_data());
  const DataType dt = t.dtype();
  switch (dt.code()) {
    case DTypeCode::kFloat:
      if (dt.bits() == 32) reinterpret_cast<float*>(p)[i] = static_cast<float>(v);
      else if (dt.bits() == 64) reinterpret_cast<double*>(p)[i] = v;
      else reinterpret_cast<uint16_t*>(p)[i] = FloatToHalf(static_cast<float>(v));
      return;
    case DTypeCode::kBFloat:
      reinterpret_cast<uint16_t*>(p)[i] = FloatToBFloat16(static_cast<float>(v));
      return;
    case DTypeCode::kBool:
      reinterpret_cast<uint8_t*>(p)[i] = v != 0;
      return;
    default: {
      const uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(v));
      const size_t b = static_cast<size_t>(dt.bytes());
      std::memcpy(p + static_cast<size_t>(i) * b, &u, b);  // little endian: low bytes
    }
  }
}

std::vector<double> RandomValues(DataType dt, int64_t n, const Ranges& r, std::mt19937* rng) {
  std::vector<double> v(static_cast<size_t>(n));
  int64_t lo = r.ilo, hi = r.ihi;
  if (dt.is_uint()) lo = std::max<int64_t>(lo, 0);
  if ((dt.is_int() || dt.is_uint()) && dt.bits() < 32) {
    const int64_t tmin = dt.is_uint() ? 0 : -(int64_t{1} << (dt.bits() - 1));
    const int64_t tmax = dt.is_uint() ? (int64_t{1} << dt.bits()) - 1 : (int64_t{1} << (dt.bits() - 1)) - 1;
    lo = std::clamp(lo, tmin, tmax);
    hi = std::clamp(hi, tmin + 1, tmax + 1);
  }
  if (hi <= lo) hi = lo + 1;
  std::uniform_real_distribution<double> fd(r.flo, r.fhi);
  std::uniform_int_distribution<int64_t> id(lo, hi - 1);
  std::uniform_int_distribution<int> bd(0, 1);
  for (double& x : v) {
    if (dt.is_float()) x = fd(*rng);
    else if (dt.is_bool()) x = bd(*rng);
    else x = static_cast<double>(id(*rng));
  }
  return v;
}

Type TypeOf(const TensorArg& t) {
  Shape s;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (d < t.sym.size() && !t.sym[d].empty()) s.push_back(Dim::Var(t.sym[d]));
    else s.push_back(Dim(t.shape[d]));
  }
  return MakeTensorType(std::move(s), t.dtype);
}

std::string Preview(const std::vector<double>& v) {
  std::vector<double> head(v.begin(), v.begin() + static_cast<long>(std::min<size_t>(v.size(), 12)));
  return absl::StrCat("[", absl::StrJoin(head, ", "), v.size() > 12 ? ", ..." : "", "]");
}

// The call as text, e.g. "take(%x0, %x1, axis=0, mode="wrap")".
std::string Describe(const std::string& op_name, const Attrs& attrs, const std::vector<Type>& types) {
  absl::StatusOr<Op> op = GetOp(op_name);
  if (!op.ok()) return op_name;
  std::vector<Expr> vars;
  for (size_t i = 0; i < types.size(); ++i) vars.push_back(MakeVar(absl::StrCat("x", i), types[i]));
  absl::StatusOr<Call> call = MakeCall(*op, vars, attrs);
  if (!call.ok()) return op_name;
  return PrintExpr(*call);
}

}  // namespace

double Tolerance(DataType t) {
  if (t.code() == DTypeCode::kBFloat) return 1.6e-2;
  if (t.is_float() && t.bits() == 16) return 2e-3;
  if (t.is_float() && t.bits() == 32) return 2e-5;
  return 1e-12;
}

AssertionResult CheckOp(const std::string& op_name, const Attrs& attrs, const std::vector<Arg>& args,
                        const Ranges& ranges) {
  std::mt19937 rng(ranges.seed);
  // Inputs: host tensors for the interpreter, the same values for tir_eval.
  std::vector<Type> types;
  std::vector<interp::Value> values;
  std::vector<tir::testing::EvalArg> eval_args;
  for (const Arg& a : args) {
    std::vector<interp::Value> fields;
    std::vector<Type> field_types;
    for (const TensorArg& t : a.fields) {
      auto made = HostTensor::Create(t.dtype, t.shape);
      if (!made.ok()) return AssertionFailure() << made.status();
      Ref<HostTensor> h = *made;
      std::vector<double> v = t.values.empty() ? RandomValues(t.dtype, h->num_elements(), ranges, &rng)
                                               : t.values;
      if (static_cast<int64_t>(v.size()) != h->num_elements())
        return AssertionFailure() << "test: " << v.size() << " values for " << h->num_elements()
                                  << " elements";
      tir::testing::EvalArg ea;
      for (int64_t i = 0; i < h->num_elements(); ++i) {
        SetElement(*h, i, v[static_cast<size_t>(i)]);
        ea.data.push_back(h->GetAsDouble(i));
      }
      ea.shape = t.shape;
      eval_args.push_back(std::move(ea));
      fields.push_back(interp::Value::Tensor(Ref<const HostTensor>(h)));
      field_types.push_back(TypeOf(t));
    }
    if (a.tuple) {
      values.push_back(interp::Value::Tuple(std::move(fields)));
      types.push_back(MakeTupleType(std::move(field_types)));
    } else {
      values.push_back(fields[0]);
      types.push_back(field_types[0]);
    }
  }
  const std::string what = Describe(op_name, attrs, types);

  // The interpreter.
  absl::StatusOr<Op> op = GetOp(op_name);
  if (!op.ok()) return AssertionFailure() << op.status();
  absl::StatusOr<interp::Value> expected = interp::EvalOp(*op, attrs, values);
  if (!expected.ok()) return AssertionFailure() << what << ": the interpreter failed: " << expected.status();
  std::vector<Ref<const HostTensor>> want;
  if (expected->is_tuple()) {
    for (const interp::Value& f : expected->fields()) want.push_back(f.tensor());
  } else {
    want.push_back(expected->tensor());
  }

  // The compute, lowered and evaluated.
  absl::StatusOr<BuiltOp> b = BuildOp(op_name, attrs, types);
  if (!b.ok()) return AssertionFailure() << what << ": building the compute failed: " << b.status();
  if (b->outputs.size() != want.size())
    return AssertionFailure() << what << ": " << b->outputs.size() << " outputs, the interpreter gave "
                              << want.size();
  absl::Status valid = te::ValidateCompute(b->outputs);
  if (!valid.ok()) return AssertionFailure() << what << ": " << valid;
  for (const Ref<const HostTensor>& w : want) {
    tir::testing::EvalArg out;
    out.data.assign(static_cast<size_t>(w->num_elements()), 0.0);
    out.shape = w->shape();
    eval_args.push_back(std::move(out));
  }

  // Runs f on the inputs and compares its outputs with the interpreter's.
  // `keep[i]`: whether f has a parameter for eval_args[i].
  auto run_and_compare = [&](const tir::PrimFunc& f, const char* how,
                             const std::vector<bool>& keep) -> AssertionResult {
    absl::Status verified = tir::transform::VerifyPrimFunc(f);
    if (!verified.ok()) return AssertionFailure() << what << " (" << how << "): " << verified;
    std::vector<tir::testing::EvalArg> io;
    for (size_t i = 0; i < eval_args.size(); ++i)
      if (keep[i]) io.push_back(eval_args[i]);
    absl::Status run = tir::testing::EvalPrimFunc(f, &io);
    if (!run.ok())
      return AssertionFailure() << what << " (" << how << "): tir_eval failed: " << run << "\n"
                                << tir::ToText(f);
    for (size_t o = 0; o < want.size(); ++o) {
      const HostTensor& w = *want[o];
      const std::vector<double>& got = io[io.size() - want.size() + o].data;
      std::vector<double> exp;
      for (int64_t i = 0; i < w.num_elements(); ++i) exp.push_back(w.GetAsDouble(i));
      const double tol = Tolerance(w.dtype());
      for (size_t i = 0; i < exp.size(); ++i) {
        const double x = got[i], y = exp[i];
        bool ok = x == y || (std::isnan(x) && std::isnan(y));
        if (!ok && w.dtype().is_float() && std::isfinite(x) && std::isfinite(y))
          ok = std::fabs(x - y) <= tol * std::max(1.0, std::fabs(y));
        if (!ok)
          return AssertionFailure() << what << " (" << how << "): output " << o << " element " << i
                                    << " is " << x << ", the interpreter's " << y << "\n  got      "
                                    << Preview(got) << "\n  expected " << Preview(exp);
      }
    }
    return AssertionSuccess();
  };

  for (size_t o = 0; o < want.size(); ++o) {
    const HostTensor& w = *want[o];
    const te::Tensor& t = b->outputs[o];
    if (t.dtype() != w.dtype())
      return AssertionFailure() << what << ": output " << o << " dtype " << t.dtype().ToString()
                                << ", the interpreter's " << w.dtype().ToString();
    if (t.ndim() != w.ndim())
      return AssertionFailure() << what << ": output " << o << " rank " << t.ndim();
    for (int d = 0; d < t.ndim(); ++d) {
      int64_t e = 0;
      if (tir::IsConstInt(t.shape()[static_cast<size_t>(d)], &e) && e != w.shape()[static_cast<size_t>(d)])
        return AssertionFailure() << what << ": output " << o << " dim " << d << " is " << e
                                  << ", the interpreter's " << w.shape()[static_cast<size_t>(d)];
    }
  }

  // 1. The naive lowering (naive_lower.h).
  absl::StatusOr<tir::PrimFunc> naive = NaiveLower(b->inputs, b->outputs, "f");
  if (!naive.ok()) return AssertionFailure() << what << ": naive lowering failed: " << naive.status();
  AssertionResult r = run_and_compare(*naive, "naive lowering", std::vector<bool>(eval_args.size(), true));
  if (!r) return r;

  // 2. The real pipeline (lowering/te/lower.h): the plain schedule, then the
  // default CPU schedule (inlining, fused parallel loops, vectorized inner
  // loops; lowering/te/schedule_x86.h).
  if (!ranges.naive_only) {
    // LowerSchedule rejects a parameter the schedule does not read (the shape
    // argument of dyn.reshape, the input of zeros_like, ...): pass only the
    // inputs that are read.
    std::set<const te::OperationNode*> read;
    for (const te::Operation& op : te::PostOrderOps(b->outputs)) read.insert(op.get());
    std::vector<te::Tensor> params;
    std::vector<bool> keep;
    for (const te::Tensor& t : b->inputs) {
      keep.push_back(read.count(t.op().get()) > 0);
      if (keep.back()) params.push_back(t);
    }
    params.insert(params.end(), b->outputs.begin(), b->outputs.end());
    keep.resize(eval_args.size(), true);
    for (bool x86 : {false, true}) {
      const char* how = x86 ? "ScheduleDefaultX86 + LowerSchedule" : "LowerSchedule";
      absl::StatusOr<te::Schedule> made = te::CreateSchedule(b->outputs);
      if (!made.ok()) return AssertionFailure() << what << ": CreateSchedule failed: " << made.status();
      te::Schedule& sched = *made;
      if (x86) {
        absl::Status st = te::ScheduleDefaultX86(sched, b->outputs, 4);
        if (!st.ok()) return AssertionFailure() << what << ": ScheduleDefaultX86 failed: " << st;
      }
      absl::StatusOr<tir::PrimFunc> lowered = te::LowerSchedule(sched, params, "f");
      if (!lowered.ok()) return AssertionFailure() << what << " (" << how << ") failed: " << lowered.status();
      r = run_and_compare(*lowered, how, keep);
      if (!r) return r;
    }
  }
  return AssertionSuccess();
}

}  // namespace kiln::lowering::tensor::testing
