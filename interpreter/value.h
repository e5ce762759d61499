// File: interpreter/value.h
//
// Runtime values of the reference interpreter (interpreter.h):
//   tensor   a host tensor (immutable once produced)
//   tuple    fields
//   closure  a Function plus the values of its free variables; a let-bound
//            closure also knows the variable it is bound to, so that calling it
//            rebinds that variable to the closure itself (recursion without a
//            reference cycle, as Relay's RecClosure)
//   adt      a constructor applied to field values (`Cons(1, Nil())`)
//   ref      a shared mutable cell (`ref(v)`, `ref_read`, `ref_write`)
// Values are immutable and reference counted (except the cell of a ref), so
// copying a Value is cheap.
//
//   Value v = Value::Tensor(t);
//   if (v.is_tensor()) use(*v.tensor());
//   std::string s = ValueToString(v);
//   absl::Status close = AllClose(got, want, /*rtol=*/1e-5, /*atol=*/1e-6);
#ifndef KILN_INTERPRETER_VALUE_H_
#define KILN_INTERPRETER_VALUE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/expr.h"
#include "ir/object.h"
#include "ir/tensor.h"

namespace kiln::interp {

enum class ValueKind : uint8_t { kTensor, kTuple, kClosure, kAdt, kRef };
const char* ValueKindName(ValueKind k);

class ValueNode;
class Value;


class Value {
 public:
  Value();  // null: no value
  Value(const Value&);
  Value(Value&&) noexcept;
  Value& operator=(const Value&);
  Value& operator=(Value&&) noexcept;
  ~Value();

  static Value Tensor(Ref<const HostTensor> t);
  static Value Tuple(std::vector<Value> fields);
  // `captured` holds the values of the function's free variables. `rec_var`,
  // when set, is rebound to the closure itself on every call. `name` is for
  // messages (a global's name, or the let variable's).
  static Value Closure(Function fn, std::vector<std::pair<Var, Value>> captured,
                       Var rec_var = nullptr, std::string name = "");
  static Value Adt(Constructor ctor, std::vector<Value> fields);
  static Value NewRef(Value initial);

  bool defined() const { return node_.defined(); }
  ValueKind kind() const;
  bool is_tensor() const { return defined() && kind() == ValueKind::kTensor; }
  bool is_tuple() const { return defined() && kind() == ValueKind::kTuple; }
  bool is_closure() const { return defined() && kind() == ValueKind::kClosure; }
  bool is_adt() const { return defined() && kind() == ValueKind::kAdt; }
  bool is_ref() const { return defined() && kind() == ValueKind::kRef; }

  // Accessors; each requires the matching kind (null / empty otherwise).
  const Ref<const HostTensor>& tensor() const;
  // Tuple fields or ADT fields.
  const std::vector<Value>& fields() const;
  const Function& closure_function() const;
  const std::vector<std::pair<Var, Value>>& closure_captured() const;
  const Var& closure_rec_var() const;
  const std::string& closure_name() const;
  const Constructor& constructor() const;
  Value ref_get() const;
  void ref_set(Value v) const;

  const ValueNode* node() const { return node_.get(); }

 private:
  explicit Value(Ref<const ValueNode> n);
  Ref<const ValueNode> node_;
};

// The value's text for messages: `Tensor[(2, 2), float32] [1, 2, 3, 4]`,
// `(..., ...)`, `Cons(1f, Nil)`, `closure(@f)`, `ref(...)`. Long tensors and
// deep values are elided.
std::string ValueToString(const Value& v);

// The tensor of a tensor value, or an error naming `what` and the value kind.
absl::StatusOr<Ref<const HostTensor>> AsTensor(const Value& v, absl::string_view what);

// Same structure, same dtypes and shapes, and the same bits in every tensor
// (closures and refs compare by identity).
bool BitwiseEqual(const Value& a, const Value& b);

// OK when `a` and `b` have the same structure, dtypes and shapes, and every
// float element satisfies |a - b| <= atol + rtol * |b| (NaN matches NaN only,
// an infinity matches only the same infinity); integer and bool elements must
// be equal. Otherwise an error naming the first mismatch (path, index, values).
absl::Status AllClose(const Value& a, const Value& b, double rtol = 1e-5, double atol = 1e-8);

}  // namespace kiln::interp

#endif  // KILN_INTERPRETER_VALUE_H_
