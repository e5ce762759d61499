// File: tests/differential/random_program.h
//
// Random well-typed text-IR programs that use the whole graph language, for
// differential testing of the passes and the VM against the interpreter:
// `if` on computed conditions, `let` blocks, closures (captured values,
// closures passed to and returned through higher-order functions), local
// recursion, global and mutual recursion, ADTs (a generic list and a
// three-constructor type) built at run time and taken apart with `match`
// (nested and tuple patterns), references written in loops and read later,
// tuples and projections.
//
//   RandomProgramOptions opts;
//   opts.seed = 7;
//   RandomProgram p = RandomProgramText(opts);   // p.text parses and type-checks
//
// Every program has the same signature,
//   def @main(%x: T, %y: T, %n: Tensor[(), int32], %c: Tensor[(), bool])
// where T is a small float32 tensor type chosen by the seed (static, or
// with a `?` first dim), and
// returns a tuple of one to three T values. Loop counts come from %n (or
// small constants), so one program does different amounts of work for
// different inputs. Values stay bounded (loop bodies end in tanh, sums are
// means) so results compare with a tolerance.
#ifndef KILN_TESTS_DIFFERENTIAL_RANDOM_PROGRAM_H_
#define KILN_TESTS_DIFFERENTIAL_RANDOM_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::testing {

struct RandomProgramOptions {
  uint64_t seed = 1;
  int depth = 4;  // nesting depth of the expression generator
  // T's first dim is `?` in every annotation (main's inputs, closures,
  // globals, ADT fields), so one compiled program runs at several shapes.
  bool dynamic_first_dim = false;
};

// What a program uses, so a test can check that the seeds it runs cover
// every construct.
struct ProgramFeatures {
  int ifs = 0;
  int lets = 0;
  int closures = 0;          // fn literals bound by let or passed as arguments
  int higher_order = 0;      // a closure passed to a function
  int local_recursion = 0;   // a let-bound fn calling itself
  int global_recursion = 0;  // @gK calling itself
  int mutual_recursion = 0;  // @evenK / @oddK pairs
  int adt_builds = 0;        // constructor calls
  int matches = 0;
  int nested_patterns = 0;
  int refs = 0;
  int ref_loops = 0;         // a reference written by a recursive closure
  int tuples = 0;
};

struct RandomProgram {
  std::string text;            // the whole module, `#[version = "0.1"]` first
  std::vector<int64_t> shape;  // T's dims (with dynamic_first_dim, one choice of the first)
  bool dynamic_first_dim = false;
  ProgramFeatures features;
};

RandomProgram RandomProgramText(const RandomProgramOptions& opts);

}  // namespace kiln::testing

#endif  // KILN_TESTS_DIFFERENTIAL_RANDOM_PROGRAM_H_
