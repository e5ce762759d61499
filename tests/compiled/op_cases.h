// File: tests/compiled/op_cases.h
//
// Every registered operator's test cases (shapes with loop tails, dtypes,
// attribute settings), one list shared by the targets: //tests/compiled:op_test
// compiles and runs them with LLVM against the interpreter,
// //tests/cuda:op_ptx_test compiles them for CUDA and checks the PTX with ptxas.
//
//   for (const OpCase& c : OpCases()) ... ModuleText(c) ...
#ifndef KILN_TESTS_COMPILED_OP_CASES_H_
#define KILN_TESTS_COMPILED_OP_CASES_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace kiln::testing {

struct OpCase {
  std::string name;
  std::string params;  // "%x: Tensor[(3, 17), float32], ..."
  std::string body;    // the expression
  double lo = -2, hi = 2;        // float inputs
  int64_t ilo = -9, ihi = 9;     // integer inputs
  double rtol = 2e-5, atol = 2e-5;
};

std::vector<OpCase> OpCases();

// For GoogleTest: "name: body".
void PrintTo(const OpCase& c, std::ostream* os);

// The case as a text-IR module: `def @main(params) { body }`.
std::string ModuleText(const OpCase& c);

}  // namespace kiln::testing

#endif  // KILN_TESTS_COMPILED_OP_CASES_H_
