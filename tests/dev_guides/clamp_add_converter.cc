// File: tests/dev_guides/clamp_add_converter.cc — the ONNX converter of
// test.clamp_add (docs/dev/adding_an_operator.md, step 6).
#include "tests/dev_guides/clamp_add_converter.h"

#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/onnx/converter.h"
#include "ir/status_macros.h"
#include "tests/dev_guides/clamp_add.h"

namespace kiln::dev_guides {
namespace {

absl::StatusOr<std::vector<Expr>> ConvertClampAdd(onnx_frontend::ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr a, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr b, c.Input(1));
  KILN_ASSIGN_OR_RETURN(double lo, c.AttrFloat("min", 0.0));
  KILN_ASSIGN_OR_RETURN(double hi, c.AttrFloat("max", 6.0));
  if (!(lo <= hi)) return c.Invalid(absl::StrCat("min (", lo, ") must not exceed max (", hi, ")"));
  Ref<ClampAddAttrs> attrs(new ClampAddAttrs());
  attrs->a_min = lo;
  attrs->a_max = hi;
  // Call() type-checks the new call: a bad operand names this node.
  KILN_ASSIGN_OR_RETURN(Expr y, c.Call(kClampAddOp, {a, b}, Attrs(attrs)));
  return std::vector<Expr>{y};
}

}  // namespace

void RegisterClampAddConverter() {
  static std::once_flag once;
  std::call_once(once, [] {
    onnx_frontend::ConverterRegistry::Global().Add("ClampAdd", 1, ConvertClampAdd,
                                                   kClampAddOnnxDomain);
  });
}

}  // namespace kiln::dev_guides
