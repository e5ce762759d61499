#include "ir/attrs.h"

#include <cmath>
#include <cstdio>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {
namespace {

std::string FloatToString(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  for (int prec = 6; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  out += "\"";
  return out;
}

const char* KindName(AttrValue::Kind k) {
  switch (k) {
    case AttrValue::Kind::kNone: return "none";
    case AttrValue::Kind::kInt: return "an integer";
    case AttrValue::Kind::kFloat: return "a float";
    case AttrValue::Kind::kBool: return "a bool";
    case AttrValue::Kind::kString: return "a string";
    case AttrValue::Kind::kList: return "a list";
  }
  return "?";
}

AttrValue IntList(const std::vector<int64_t>& v) {
  std::vector<AttrValue> l;
  l.reserve(v.size());
  for (int64_t x : v) l.push_back(AttrValue::Int(x));
  return AttrValue::List(std::move(l));
}

// Reads every field into an AttrValue.
class Getter : public AttrVisitor {
 public:
  std::vector<std::pair<std::string, AttrValue>> out;
  void Visit(const char* k, int64_t* v) override { out.emplace_back(k, AttrValue::Int(*v)); }
  void Visit(const char* k, double* v) override { out.emplace_back(k, AttrValue::Float(*v)); }
  void Visit(const char* k, bool* v) override { out.emplace_back(k, AttrValue::Bool(*v)); }
  void Visit(const char* k, std::string* v) override { out.emplace_back(k, AttrValue::String(*v)); }
  void Visit(const char* k, DataType* v) override {
    out.emplace_back(k, AttrValue::String(v->ToString()));
  }
  void Visit(const char* k, std::vector<int64_t>* v) override { out.emplace_back(k, IntList(*v)); }
  void Visit(const char* k, std::vector<double>* v) override {
    std::vector<AttrValue> l;
    for (double x : *v) l.push_back(AttrValue::Float(x));
    out.emplace_back(k, AttrValue::List(std::move(l)));
  }
  void Visit(const char* k, std::vector<std::vector<int64_t>>* v) override {
    std::vector<AttrValue> l;
    for (const auto& x : *v) l.push_back(IntList(x));
    out.emplace_back(k, AttrValue::List(std::move(l)));
  }
  void Visit(const char* k, std::optional<int64_t>* v) override {
    out.emplace_back(k, v->has_value() ? AttrValue::Int(**v) : AttrValue::None());
  }
  void Visit(const char* k, std::optional<std::vector<int64_t>>* v) override {
    out.emplace_back(k, v->has_value() ? IntList(**v) : AttrValue::None());
  }
  void Visit(const char* k, AttrValue* v) override { out.emplace_back(k, *v); }
};

// Writes one field, converting the generic value to the field's type.
class Setter : public AttrVisitor {
 public:
  Setter(absl::string_view key, const AttrValue& value) : key_(key), value_(value) {}
  bool found = false;
  absl::Status status;

  void Visit(const char* k, int64_t* v) override {
    if (!Match(k)) return;
    if (value_.kind == AttrValue::Kind::kInt) *v = value_.i;
    else if (value_.kind == AttrValue::Kind::kBool) *v = value_.b;
    else Fail("an integer");
  }
  void Visit(const char* k, double* v) override {
    if (!Match(k)) return;
    if (value_.kind == AttrValue::Kind::kFloat) *v = value_.f;
    else if (value_.kind == AttrValue::Kind::kInt) *v = static_cast<double>(value_.i);
    else Fail("a number");
  }
  void Visit(const char* k, bool* v) override {
    if (!Match(k)) return;
    if (value_.kind == AttrValue::Kind::kBool) *v = value_.b;
    else if (value_.kind == AttrValue::Kind::kInt && (value_.i == 0 || value_.i == 1)) *v = value_.i;
    else Fail("a bool (true or false)");
  }
  void Visit(const char* k, std::string* v) override {
    if (!Match(k)) return;
    if (value_.kind == AttrValue::Kind::kString) *v = value_.s;
    else Fail("a string");
  }
  void Visit(const char* k, DataType* v) override {
    if (!Match(k)) return;
    if (value_.kind != AttrValue::Kind::kString) return Fail("a data type such as \"float32\"");
    if (value_.s.empty()) {
      *v = DataType::Void();
      return;
    }
    auto dt = DataType::Parse(value_.s);
    if (!dt.ok()) {
      status = absl::InvalidArgumentError(
          absl::StrCat("attribute '", key_, "': ", dt.status().message()));
      return;
    }
    *v = *dt;
  }
  void Visit(const char* k, std::vector<int64_t>* v) override {
    if (!Match(k)) return;
    auto r = Ints(value_);
    if (r) *v = std::move(*r);
    else Fail("a list of integers");
  }
  void Visit(const char* k, std::vector<double>* v) override {
    if (!Match(k)) return;
    if (value_.kind != AttrValue::Kind::kList) return Fail("a list of numbers");
    std::vector<double> out;
    for (const AttrValue& e : value_.list) {
      if (e.kind == AttrValue::Kind::kFloat) out.push_back(e.f);
      else if (e.kind == AttrValue::Kind::kInt) out.push_back(static_cast<double>(e.i));
      else return Fail("a list of numbers");
    }
    *v = std::move(out);
  }
  void Visit(const char* k, std::vector<std::vector<int64_t>>* v) override {
    if (!Match(k)) return;
    if (value_.kind != AttrValue::Kind::kList) return Fail("a list of integer lists");
    std::vector<std::vector<int64_t>> out;
    for (const AttrValue& e : value_.list) {
      auto r = Ints(e);
      if (!r) return Fail("a list of integer lists");
      out.push_back(std::move(*r));
    }
    *v = std::move(out);
  }
  void Visit(const char* k, std::optional<int64_t>* v) override {
    if (!Match(k)) return;
    if (value_.kind == AttrValue::Kind::kNone) *v = std::nullopt;
    else if (value_.kind == AttrValue::Kind::kInt) *v = value_.i;
    else Fail("an integer or none");
  }
  void Visit(const char* k, std::optional<std::vector<int64_t>>* v) override {
    if (!Match(k)) return;
    if (value_.kind == AttrValue::Kind::kNone) {
      *v = std::nullopt;
      return;
    }
    auto r = Ints(value_);
    if (r) *v = std::move(*r);
    else Fail("a list of integers or none");
  }
  void Visit(const char* k, AttrValue* v) override {
    if (Match(k)) *v = value_;
  }

 private:
  bool Match(const char* k) {
    if (found || key_ != k) return false;
    found = true;
    return true;
  }
  void Fail(const char* expected) {
    status = absl::InvalidArgumentError(absl::StrCat("attribute '", key_, "' expects ", expected,
                                                     ", got ", KindName(value_.kind), " (",
                                                     value_.ToString(), ")"));
  }
  static std::optional<std::vector<int64_t>> Ints(const AttrValue& a) {
    if (a.kind == AttrValue::Kind::kInt) return std::vector<int64_t>{a.i};
    if (a.kind != AttrValue::Kind::kList) return std::nullopt;
    std::vector<int64_t> out;
    for (const AttrValue& e : a.list) {
      if (e.kind != AttrValue::Kind::kInt) return std::nullopt;
      out.push_back(e.i);
    }
    return out;
  }
  absl::string_view key_;
  const AttrValue& value_;
};

}  // namespace

std::string AttrValue::ToString() const {
  switch (kind) {
    case Kind::kNone: return "none";
    case Kind::kInt: return absl::StrCat(i);
    case Kind::kFloat: return FloatToString(f);
    case Kind::kBool: return b ? "true" : "false";
    case Kind::kString: return Quote(s);
    case Kind::kList: {
      std::string out = "[";
      for (size_t k = 0; k < list.size(); ++k) {
        if (k) out += ", ";
        out += list[k].ToString();
      }
      return out + "]";
    }
  }
  return "";
}

bool operator==(const AttrValue& a, const AttrValue& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case AttrValue::Kind::kNone: return true;
    case AttrValue::Kind::kInt: return a.i == b.i;
    case AttrValue::Kind::kFloat:
      return a.f == b.f || (std::isnan(a.f) && std::isnan(b.f));
    case AttrValue::Kind::kBool: return a.b == b.b;
    case AttrValue::Kind::kString: return a.s == b.s;
    case AttrValue::Kind::kList: return a.list == b.list;
  }
  return false;
}

size_t AttrValue::Hash() const {
  size_t h = absl::HashOf(static_cast<int>(kind));
  switch (kind) {
    case Kind::kNone: break;
    case Kind::kInt: h = absl::HashOf(h, i); break;
    case Kind::kFloat: h = absl::HashOf(h, std::isnan(f) ? 0.0 : f); break;
    case Kind::kBool: h = absl::HashOf(h, b); break;
    case Kind::kString: h = absl::HashOf(h, s); break;
    case Kind::kList:
      for (const AttrValue& e : list) h = absl::HashOf(h, e.Hash());
      break;
  }
  return h;
}

DictAttrs MakeDictAttrs(std::map<std::string, AttrValue> dict) {
  auto* n = new DictAttrsNode();
  n->dict = std::move(dict);
  return DictAttrs(n);
}

absl::Status SetAttrField(AttrsNode* attrs, absl::string_view key, const AttrValue& value) {
  if (auto* dict = const_cast<DictAttrsNode*>(
          Ref<const AttrsNode>(attrs).as<DictAttrsNode>())) {
    dict->dict[std::string(key)] = value;
    return absl::OkStatus();
  }
  Setter setter(key, value);
  attrs->VisitAttrs(&setter);
  if (!setter.found) {
    auto fields = AttrFields(*attrs);
    std::vector<std::string> names;
    for (auto& f : fields) names.push_back(f.first);
    return absl::InvalidArgumentError(absl::StrCat("unknown attribute '", key, "' for ",
                                                   attrs->type_key(), " (known: ",
                                                   absl::StrJoin(names, ", "), ")"));
  }
  return setter.status;
}

std::vector<std::pair<std::string, AttrValue>> AttrFields(const AttrsNode& attrs) {
  Getter g;
  attrs.VisitFields(&g);
  return std::move(g.out);
}

std::vector<std::pair<std::string, AttrValue>> NonDefaultAttrFields(const AttrsNode& attrs,
                                                                    const AttrsNode* defaults) {
  auto fields = AttrFields(attrs);
  if (defaults == nullptr) return fields;
  auto base = AttrFields(*defaults);
  std::vector<std::pair<std::string, AttrValue>> out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i < base.size() && base[i].first == fields[i].first && base[i].second == fields[i].second)
      continue;
    out.push_back(std::move(fields[i]));
  }
  return out;
}

bool AttrsEqual(const Attrs& a, const Attrs& b) {
  if (a.get() == b.get()) return true;
  if (!a || !b) return false;
  if (a->type_id() != b->type_id()) return false;
  auto fa = AttrFields(*a);
  auto fb = AttrFields(*b);
  return fa == fb;
}

size_t AttrsHash(const Attrs& a) {
  if (!a) return 0;
  size_t h = absl::HashOf(absl::string_view(a->type_key()));
  for (const auto& [k, v] : AttrFields(*a)) h = absl::HashOf(h, k, v.Hash());
  return h;
}

}  // namespace kiln
