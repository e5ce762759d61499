// File: types/rel_test_util.h
//
// Test helpers for the core type relations: build types from short strings,
// build attributes, and run an operator's registered relation with a fake
// reporter that records assignments.
//
//   EXPECT_EQ(Infer("nn.softmax", {T("n, 10")}), "Tensor[(n, 10), float32]");
//   EXPECT_THAT(Infer("add", {T("2, 3"), T("4, 3")}),
//               HasSubstr("cannot broadcast"));
#ifndef KILN_TYPES_REL_TEST_UTIL_H_
#define KILN_TYPES_REL_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/type.h"
#include "types/core_relations.h"
#include "types/relation.h"

namespace kiln::types::testing {

// Records what a relation assigns. An IncompleteType destination takes the
// first type assigned to it; a later, different type is a conflict, as is a
// known destination that differs from the assigned type.
class FakeReporter : public TypeReporter {
 public:
  absl::Status Assign(const Type& dst, const Type& t) override {
    for (auto& [d, v] : assigned_)
      if (d == dst) {
        if (!TypeEqual(v, t))
          return absl::InvalidArgumentError(
              absl::StrCat("conflict: ", TypeToString(v), " vs ", TypeToString(t)));
        return absl::OkStatus();
      }
    if (dst->kind != TypeKind::kIncomplete && !TypeEqual(dst, t))
      return absl::InvalidArgumentError(
          absl::StrCat("conflict: ", TypeToString(dst), " vs ", TypeToString(t)));
    assigned_.push_back({dst, t});
    return absl::OkStatus();
  }
  // The type assigned to `dst`, or null.
  Type Get(const Type& dst) const {
    for (const auto& [d, v] : assigned_)
      if (d == dst) return v;
    return nullptr;
  }

 private:
  std::vector<std::pair<Type, Type>> assigned_;
};

// A dim from text: "224", "?" or a symbolic name "n".
inline Dim D(absl::string_view s) {
  s = absl::StripAsciiWhitespace(s);
  if (s == "?") return Dim::Any();
  if (!s.empty() && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))) {
    int64_t v = 0;
    for (char c : s.substr(s[0] == '-' ? 1 : 0)) v = v * 10 + (c - '0');
    return Dim(s[0] == '-' ? -v : v);
  }
  return Dim::Var(std::string(s));
}

// A tensor type from a comma-separated shape: T("n, 3, 224, 224"), T("") is 0-D.
inline Type T(absl::string_view shape, DataType dtype = DataType::Float(32)) {
  Shape s;
  if (!absl::StripAsciiWhitespace(shape).empty())
    for (absl::string_view part : absl::StrSplit(shape, ',')) s.push_back(D(part));
  return MakeTensorType(std::move(s), dtype);
}
inline Type T(absl::string_view shape, absl::string_view dtype) {
  return T(shape, *DataType::Parse(dtype));
}

// Attributes of kind A, set up by `f`: Make<Conv2DAttrs>([](auto& a) { a.groups = 2; }).
template <typename A, typename F>
Attrs Make(F f) {
  return MakeAttrs<A>(std::move(f));
}

struct RelResult {
  absl::Status status;
  bool solved = false;
  Type output;                // assigned output, or null
  std::vector<Type> args;     // inputs then the output (an IncompleteType)
  FakeReporter reporter;
};

// Runs `op`'s registered relation on `inputs` (output: a fresh IncompleteType).
inline RelResult RunRel(absl::string_view op, std::vector<Type> inputs, Attrs attrs = nullptr) {
  RegisterCoreTypeRelations();
  RelResult res;
  res.args = std::move(inputs);
  const int n = static_cast<int>(res.args.size());
  res.args.push_back(MakeIncompleteType());
  const OpDef* def = OpRegistry::Global().Find(op);
  const TypeRelationFn* fn = FindTypeRelation(def);
  if (fn == nullptr) {
    res.status = absl::NotFoundError(absl::StrCat("no relation for ", op));
    return res;
  }
  RelationCall call{op, res.args, n, attrs};
  absl::StatusOr<bool> r = (*fn)(call, res.reporter);
  if (!r.ok()) {
    res.status = r.status();
    return res;
  }
  res.solved = *r;
  res.output = res.reporter.Get(res.args.back());
  return res;
}

// The output type as text, "unsolved" when the relation returned false, or
// "error: <message>".
inline std::string Infer(absl::string_view op, std::vector<Type> inputs, Attrs attrs = nullptr) {
  RelResult r = RunRel(op, std::move(inputs), std::move(attrs));
  if (!r.status.ok()) return absl::StrCat("error: ", r.status.message());
  if (!r.solved) return "unsolved";
  if (!r.output) return "solved without output";
  return TypeToString(r.output);
}

}  // namespace kiln::types::testing

#endif  // KILN_TYPES_REL_TEST_UTIL_H_
