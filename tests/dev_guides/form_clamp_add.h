// File: tests/dev_guides/form_clamp_add.h (tests only)
//
// FormClampAdd (opt level 3): the graph pass that docs/dev/adding_a_pass.md
// adds. It rewrites `clip(add(a, b))` into the one operator test.clamp_add
// (tests/dev_guides/clamp_add.h) when both operands are float32 or float64
// tensors with static shapes (so that clamp_add's broadcast is add's), and
// keeps the clip's bounds:
//
//   def @main(%x: Tensor[(2, 8), float32], %y: Tensor[(8,), float32]) {
//     %0 = add(%x, %y);
//     clip(%0, a_min=0f, a_max=6f)
//   }
//   // after:
//   def @main(%x: Tensor[(2, 8), float32], %y: Tensor[(8,), float32]) {
//     test.clamp_add(%x, %y)
//   }
//
// An add that has other users stays for them (the sum is then computed
// twice; a production pass would check the use count). Needs InferType first
// (a declared prerequisite, which Sequential runs) and RegisterClampAdd().
#ifndef KILN_TESTS_DEV_GUIDES_FORM_CLAMP_ADD_H_
#define KILN_TESTS_DEV_GUIDES_FORM_CLAMP_ADD_H_

#include "absl/status/status.h"
#include "passes/infra/pass.h"

namespace kiln::dev_guides {

passes::PassPtr FormClampAdd();

// Registers "FormClampAdd" in PassRegistry::Global() (and the operator it
// produces), once; a pass list such as "InferType,FormClampAdd" then names it.
absl::Status RegisterFormClampAdd();

}  // namespace kiln::dev_guides

#endif  // KILN_TESTS_DEV_GUIDES_FORM_CLAMP_ADD_H_
