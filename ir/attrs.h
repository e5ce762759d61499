// File: ir/attrs.h
//
// Operator attributes are typed structs (`Conv2DAttrs` with `strides`,
// `padding`, ...). Each struct lists its fields once, in `VisitAttrs`, and that
// one list drives printing, parsing, equality and hashing:
//
//   struct SoftmaxAttrs : AttrsBase<SoftmaxAttrs> {
//     static constexpr const char* kTypeKey = "SoftmaxAttrs";
//     int64_t axis = -1;
//     void VisitAttrs(AttrVisitor* v) override { v->Visit("axis", &axis); }
//   };
//   if (const auto* a = call->attrs.as<SoftmaxAttrs>()) use(a->axis);
//
// `DictAttrs` is the untyped kind, a sorted name -> value map, used for function
// attributes such as `Primitive=1` or `Compiler="dnnl"`.
#ifndef KILN_IR_ATTRS_H_
#define KILN_IR_ATTRS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "ir/dtype.h"
#include "ir/object.h"

namespace kiln {

// A generic attribute value: what the text parser reads before it knows the
// field's type, and the value type of DictAttrs.
struct AttrValue {
  enum class Kind : uint8_t { kNone, kInt, kFloat, kBool, kString, kList };
  Kind kind = Kind::kNone;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;  // kString; also an identifier such as `float32`
  std::vector<AttrValue> list;

  static AttrValue None() { return {}; }
  static AttrValue Int(int64_t v) { AttrValue a; a.kind = Kind::kInt; a.i = v; return a; }
  static AttrValue Float(double v) { AttrValue a; a.kind = Kind::kFloat; a.f = v; return a; }
  static AttrValue Bool(bool v) { AttrValue a; a.kind = Kind::kBool; a.b = v; return a; }
  static AttrValue String(std::string v) {
    AttrValue a; a.kind = Kind::kString; a.s = std::move(v); return a;
  }
  static AttrValue List(std::vector<AttrValue> v) {
    AttrValue a; a.kind = Kind::kList; a.list = std::move(v); return a;
  }
  // Text form: 3, 1.5f, true, "NCHW", [1, 2], none.
  std::string ToString() const;
  friend bool operator==(const AttrValue& a, const AttrValue& b);
  size_t Hash() const;
};

// Visits each field of an attribute struct by name and address.
class AttrVisitor {
 public:
  virtual ~AttrVisitor() = default;
  virtual void Visit(const char* key, int64_t* value) = 0;
  virtual void Visit(const char* key, double* value) = 0;
  virtual void Visit(const char* key, bool* value) = 0;
  virtual void Visit(const char* key, std::string* value) = 0;
  virtual void Visit(const char* key, DataType* value) = 0;
  virtual void Visit(const char* key, std::vector<int64_t>* value) = 0;
  virtual void Visit(const char* key, std::vector<double>* value) = 0;
  virtual void Visit(const char* key, std::vector<std::vector<int64_t>>* value) = 0;
  virtual void Visit(const char* key, std::optional<int64_t>* value) = 0;
  virtual void Visit(const char* key, std::optional<std::vector<int64_t>>* value) = 0;
  virtual void Visit(const char* key, AttrValue* value) = 0;
};

class AttrsNode : public Object {
 public:
  static bool IsInstance(const Object*) { return true; }
  virtual const char* type_key() const = 0;
  virtual const void* type_id() const = 0;
  virtual void VisitAttrs(AttrVisitor* v) = 0;
  // Read-only visit (visitors given this must not write through the pointers).
  void VisitFields(AttrVisitor* v) const { const_cast<AttrsNode*>(this)->VisitAttrs(v); }
  virtual Ref<AttrsNode> Clone() const = 0;
};
using Attrs = Ref<const AttrsNode>;

template <typename Derived>
class AttrsBase : public AttrsNode {
 public:
  static const void* TypeId() {
    static const char id = 0;
    return &id;
  }
  static bool IsInstance(const AttrsNode* n) { return n->type_id() == TypeId(); }
  const char* type_key() const override { return Derived::kTypeKey; }
  const void* type_id() const override { return TypeId(); }
  Ref<AttrsNode> Clone() const override {
    return Ref<AttrsNode>(new Derived(static_cast<const Derived&>(*this)));
  }
};

// MakeAttrs<A>(fill): a new attribute struct A, filled in place by
// `fill(A&)`, as the Attrs a call takes.
//   CallOpNamed("reshape", {x}, MakeAttrs<ReshapeAttrs>([&](ReshapeAttrs& a) { a.newshape = s; }));
template <typename A, typename F>
Attrs MakeAttrs(F fill) {
  auto* a = new A();
  Attrs owner(a);
  fill(*a);
  return owner;
}

// Untyped attributes: a sorted map, for function attributes.
class DictAttrsNode : public AttrsBase<DictAttrsNode> {
 public:
  static constexpr const char* kTypeKey = "DictAttrs";
  std::map<std::string, AttrValue> dict;
  void VisitAttrs(AttrVisitor* v) override {
    for (auto& [k, val] : dict) v->Visit(k.c_str(), &val);
  }
  const AttrValue* Find(absl::string_view key) const {
    auto it = dict.find(std::string(key));
    return it == dict.end() ? nullptr : &it->second;
  }
};
using DictAttrs = Ref<const DictAttrsNode>;

DictAttrs MakeDictAttrs(std::map<std::string, AttrValue> dict);

// Sets field `key` of `attrs` from a generic value, converting it to the
// field's type. A DictAttrs accepts any key. Errors name the field, the type
// it expects and the value given.
absl::Status SetAttrField(AttrsNode* attrs, absl::string_view key, const AttrValue& value);

// The fields of `attrs` as (name, value) pairs in declaration order; with
// `skip_defaults`, fields equal to those of `defaults` are left out.
std::vector<std::pair<std::string, AttrValue>> AttrFields(const AttrsNode& attrs);
std::vector<std::pair<std::string, AttrValue>> NonDefaultAttrFields(const AttrsNode& attrs,
                                                                    const AttrsNode* defaults);

bool AttrsEqual(const Attrs& a, const Attrs& b);
size_t AttrsHash(const Attrs& a);

}  // namespace kiln

#endif  // KILN_IR_ATTRS_H_
