#include "tests/differential/random_program.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln::testing {
namespace {

// What an expression may refer to where it is generated.
struct Scope {
  std::vector<std::string> tensors;  // of type T
  std::vector<std::string> fns;      // fn (T) -> T
  std::vector<std::string> refs;     // ref(T)
  std::vector<std::string> ints;     // Tensor[(), int32]
  std::vector<std::string> bools;    // Tensor[(), bool]
};

constexpr const char* kInt = "Tensor[(), int32]";

class Generator {
 public:
  Generator(uint64_t seed, int depth, bool dynamic)
      : rng_(seed), depth_(depth), dynamic_(dynamic) {
    int rank = Int(1, 2);
    for (int i = 0; i < rank; ++i) shape_.push_back(Int(1, 4));
    std::vector<std::string> dims;
    for (int64_t d : shape_) dims.push_back(absl::StrCat(d));
    if (dynamic) dims[0] = std::string(1, '?');  // not = "?": gcc 12 -O2 -Wrestrict false positive
    t_ = absl::StrCat("Tensor[(", absl::StrJoin(dims, ", "), rank == 1 ? ",)" : ")", ", float32]");
  }

  RandomProgram Build() {
    Scope s;
    s.tensors = {"%x", "%y"};
    s.ints = {"%n"};
    s.bools = {"%c"};
    int outputs = Int(1, 3);
    std::vector<std::string> results;
    for (int i = 0; i < outputs; ++i) results.push_back(Tensor(s, depth_));
    std::string body = outputs == 1 ? results[0] : absl::StrCat("(", absl::StrJoin(results, ", "), ")");
    std::string text = "#[version = \"0.1\"]\n";
    if (need_list_) {
      absl::StrAppend(&text, "type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}\n\n");
      absl::StrAppend(&text, "def @build(%j: ", kInt, ", %x: ", t_, ") -> List[", t_, "] {\n",
                      "  if (less(%j, 1)) { Nil() } else { Cons(%x, @build(subtract(%j, 1), "
                      "tanh(add(%x, 0.5f)))) }\n}\n\n");
      absl::StrAppend(&text, "def @fold(%l: List[", t_, "], %acc: ", t_, ", %f: fn (", t_, ", ", t_,
                      ") -> ", t_, ") -> ", t_, " {\n",
                      "  match (%l) {\n    Cons(%h, %t) => @fold(%t, %f(%acc, %h), %f),\n"
                      "    Nil => %acc,\n  }\n}\n\n");
      absl::StrAppend(&text, "def @map(%f: fn (", t_, ") -> ", t_, ", %l: List[", t_, "]) -> List[",
                      t_, "] {\n",
                      "  match (%l) {\n    Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)),\n"
                      "    Nil => Nil(),\n  }\n}\n\n");
    }
    if (need_pick_)
      absl::StrAppend(&text, "type Pick {\n  Left(", t_, "),\n  Right(", t_, ", ", t_,
                      "),\n  Neither,\n}\n\n");
    for (const std::string& g : globals_) absl::StrAppend(&text, g, "\n");
    absl::StrAppend(&text, "def @main(%x: ", t_, ", %y: ", t_, ", %n: ", kInt,
                    ", %c: Tensor[(), bool]) {\n  ", body, "\n}\n");
    return RandomProgram{text, shape_, dynamic_, features_};
  }

 private:
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Coin(double p = 0.5) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <typename V>
  const typename V::value_type& Pick(const V& v) {
    return v[static_cast<size_t>(Int(0, static_cast<int>(v.size()) - 1))];
  }
  std::string Fresh(const char* stem) { return absl::StrCat("%", stem, next_id_++); }

  std::string Leaf(const Scope& s) {
    if (!s.refs.empty() && Coin(0.3)) return absl::StrCat("ref_read(", Pick(s.refs), ")");
    if (!s.fns.empty() && Coin(0.25)) return absl::StrCat(Pick(s.fns), "(", Pick(s.tensors), ")");
    if (Coin(0.1)) return absl::StrCat("add(", Pick(s.tensors), ", ", Int(-2, 2), ".5f)");
    return Pick(s.tensors);
  }

  // A loop count: %n-like values (0..5 at run time; in a global function its
  // counter %j), constants, loop indices.
  std::string Count(const Scope& s) {
    const std::string& base = s.ints.front();
    switch (Int(0, 4)) {
      case 0: return absl::StrCat("minimum(", base, ", 3)");
      case 1: return absl::StrCat(Int(0, 3));
      case 2: return absl::StrCat("subtract(", base, ", 1)");
      case 3: return Pick(s.ints);
      default: return base;
    }
  }

  std::string Cond(const Scope& s, int depth) {
    switch (Int(0, 5)) {
      case 0: return Pick(s.bools);
      case 1: return absl::StrCat("logical_not(", Pick(s.bools), ")");
      case 2: return absl::StrCat("less(mean(", Tensor(s, depth), "), 0f)");
      case 3: return absl::StrCat("greater(max(", Tensor(s, depth), "), 0.5f)");
      case 4: return absl::StrCat("less(", Count(s), ", 2)");
      default:
        return absl::StrCat("logical_and(", Pick(s.bools), ", less(min(", Tensor(s, depth),
                            "), 0.25f))");
    }
  }

  std::string Binary(const std::string& a, const std::string& b) {
    switch (Int(0, 4)) {
      case 0: return absl::StrCat("add(", a, ", ", b, ")");
      case 1: return absl::StrCat("subtract(", a, ", ", b, ")");
      case 2: return absl::StrCat("multiply(tanh(", a, "), ", b, ")");
      case 3: return absl::StrCat("maximum(", a, ", ", b, ")");
      default: return absl::StrCat("minimum(", a, ", ", b, ")");
    }
  }

  // A closure value of type fn (T) -> T: one in scope or a literal.
  std::string FnValue(const Scope& s, int depth) {
    if (!s.fns.empty() && Coin(0.4)) return Pick(s.fns);
    std::string a = Fresh("a");
    Scope in = s;
    in.tensors.push_back(a);
    ++features_.closures;
    return absl::StrCat("fn (", a, ": ", t_, ") -> ", t_, " { tanh(", Binary(a, Tensor(in, depth)),
                        ") }");
  }

  std::string List(const Scope& s, int depth) {
    need_list_ = true;
    switch (Int(0, 2)) {
      case 0:
        ++features_.adt_builds;
        return absl::StrCat("@build(", Count(s), ", ", Tensor(s, depth), ")");
      case 1: {
        ++features_.adt_builds;
        std::string l = "Nil()";
        for (int i = Int(1, 3); i > 0; --i) l = absl::StrCat("Cons(", Tensor(s, depth), ", ", l, ")");
        return l;
      }
      default:
        ++features_.higher_order;
        return absl::StrCat("@map(", FnValue(s, depth), ", ", List(s, depth - 1), ")");
    }
  }

  // A global self-recursive function, or a mutually recursive pair; returns
  // a call of it.
  std::string GlobalRecursion(const Scope& s, int depth, bool mutual) {
    int id = next_id_++;
    Scope g;
    g.tensors = {"%acc", "%p"};
    g.ints = {"%j"};
    g.bools = {"less(%j, 2)"};
    std::string sig = absl::StrCat("(%j: ", kInt, ", %acc: ", t_, ", %p: ", t_, ") -> ", t_);
    if (!mutual) {
      ++features_.global_recursion;
      std::string name = absl::StrCat("@g", id);
      globals_.push_back(absl::StrCat("def ", name, sig, " {\n  if (less(%j, 1)) { ",
                                      Tensor(g, depth - 1), " } else {\n    ", name,
                                      "(subtract(%j, 1), tanh(", Binary("%acc", Tensor(g, depth - 1)),
                                      "), %p)\n  }\n}\n"));
      return absl::StrCat(name, "(", Count(s), ", ", Tensor(s, depth - 1), ", ",
                          Tensor(s, depth - 1), ")");
    }
    ++features_.mutual_recursion;
    std::string even = absl::StrCat("@even", id), odd = absl::StrCat("@odd", id);
    globals_.push_back(absl::StrCat("def ", even, sig, " {\n  if (less(%j, 1)) { %acc } else {\n    ",
                                    odd, "(subtract(%j, 1), tanh(",
                                    Binary("%acc", Tensor(g, depth - 1)), "), %p)\n  }\n}\n"));
    globals_.push_back(absl::StrCat("def ", odd, sig, " {\n  if (less(%j, 1)) { negative(%acc) } else {\n    ",
                                    even, "(subtract(%j, 1), tanh(",
                                    Binary("%p", Tensor(g, depth - 1)), "), %acc)\n  }\n}\n"));
    return absl::StrCat(Coin() ? even : odd, "(", Count(s), ", ", Tensor(s, depth - 1), ", ",
                        Tensor(s, depth - 1), ")");
  }

  std::string Tensor(const Scope& s, int depth) {
    if (depth <= 0 || Coin(0.12)) return Leaf(s);
    const int d = depth - 1;
    switch (Int(0, 19)) {
      case 0:
      case 1: {
        static const char* kOps[] = {"tanh", "sigmoid", "negative", "nn.relu", "abs"};
        if (Coin(0.2)) return absl::StrCat("multiply(", Tensor(s, d), ", 0.5f)");
        return absl::StrCat(kOps[Int(0, 4)], "(", Tensor(s, d), ")");
      }
      case 2:
      case 3: return Binary(Tensor(s, d), Tensor(s, d));
      case 4:
        return absl::StrCat("add(", Tensor(s, d), ", mean(", Tensor(s, d),
                            ", axis=[", Int(0, static_cast<int>(shape_.size()) - 1),
                            "], keepdims=true))");
      case 5: {  // let
        ++features_.lets;
        std::string v = Fresh("v");
        std::string value = Tensor(s, d);
        Scope in = s;
        in.tensors.push_back(v);
        return absl::StrCat("{ let ", v, " = ", value, "; ", Binary(v, Tensor(in, d)), " }");
      }
      case 6:
      case 7: {  // if
        ++features_.ifs;
        return absl::StrCat("if (", Cond(s, d), ") { ", Tensor(s, d), " } else { ", Tensor(s, d),
                            " }");
      }
      case 8: {  // a closure bound by let, called
        ++features_.closures;
        ++features_.lets;
        std::string f = Fresh("f"), a = Fresh("a");
        Scope in = s;
        in.tensors.push_back(a);
        std::string body = Tensor(in, d);
        Scope after = s;
        after.fns.push_back(f);
        return absl::StrCat("{ let ", f, " = fn (", a, ": ", t_, ") -> ", t_, " { ", body, " }; ",
                            Binary(absl::StrCat(f, "(", Tensor(s, d), ")"), Tensor(after, d)), " }");
      }
      case 9: {  // higher order: apply twice, or a closure factory
        ++features_.higher_order;
        ++features_.closures;
        if (Coin()) {
          std::string h = Fresh("h"), fa = Fresh("fa"), va = Fresh("va");
          return absl::StrCat("{ let ", h, " = fn (", fa, ": fn (", t_, ") -> ", t_, ", ", va, ": ",
                              t_, ") -> ", t_, " { ", fa, "(", fa, "(", va, ")) }; ", h, "(",
                              FnValue(s, d), ", ", Tensor(s, d), ") }");
        }
        std::string mk = Fresh("mk"), k = Fresh("k"), z = Fresh("z"), g = Fresh("g");
        Scope in = s;
        in.tensors.push_back(k);
        in.tensors.push_back(z);
        return absl::StrCat("{ let ", mk, " = fn (", k, ": ", t_, ") -> fn (", t_, ") -> ", t_,
                            " { fn (", z, ": ", t_, ") -> ", t_, " { ", Binary(z, Tensor(in, d)),
                            " } }; let ", g, " = ", mk, "(", Tensor(s, d), "); ",
                            Binary(absl::StrCat(g, "(", Tensor(s, d), ")"),
                                   absl::StrCat(g, "(", Leaf(s), ")")),
                            " }");
      }
      case 10:
      case 11: {  // local recursion
        ++features_.local_recursion;
        ++features_.closures;
        std::string loop = Fresh("loop"), j = Fresh("j"), acc = Fresh("acc");
        Scope in = s;
        in.tensors.push_back(acc);
        in.ints.push_back(j);
        return absl::StrCat("{ let ", loop, " = fn (", j, ": ", kInt, ", ", acc, ": ", t_, ") -> ",
                            t_, " { if (less(", j, ", 1)) { ", acc, " } else { ", loop,
                            "(subtract(", j, ", 1), tanh(", Binary(acc, Tensor(in, d)), ")) } }; ",
                            loop, "(", Count(s), ", ", Tensor(s, d), ") }");
      }
      case 12: return GlobalRecursion(s, depth, /*mutual=*/false);
      case 13: return GlobalRecursion(s, depth, /*mutual=*/true);
      case 14: {  // fold a list with a closure
        ++features_.higher_order;
        ++features_.closures;
        std::string p = Fresh("p"), q = Fresh("q");
        Scope in = s;
        in.tensors.push_back(p);
        in.tensors.push_back(q);
        std::string list = List(s, d);
        return absl::StrCat("@fold(", list, ", ", Tensor(s, d), ", fn (", p, ": ", t_, ", ", q, ": ",
                            t_, ") -> ", t_, " { tanh(", Binary(p, Tensor(in, d)), ") })");
      }
      case 15: {  // match a list with nested patterns
        ++features_.matches;
        ++features_.nested_patterns;
        std::string a = Fresh("a"), b = Fresh("b");
        Scope one = s, two = s;
        one.tensors.push_back(a);
        two.tensors.push_back(a);
        two.tensors.push_back(b);
        std::string list = List(s, d);
        return absl::StrCat("match (", list, ") { Cons(", a, ", Cons(", b, ", _)) => ",
                            Tensor(two, d), ", Cons(", a, ", Nil) => ", Tensor(one, d),
                            ", Nil => ", Tensor(s, d), " }");
      }
      case 16: {  // a three-way ADT chosen at run time
        need_pick_ = true;
        ++features_.adt_builds;
        ++features_.matches;
        ++features_.lets;
        std::string v = Fresh("pk"), a = Fresh("a"), b = Fresh("b");
        Scope one = s, two = s;
        one.tensors.push_back(a);
        two.tensors.push_back(a);
        two.tensors.push_back(b);
        return absl::StrCat("{ let ", v, " = if (", Cond(s, d), ") { Left(", Tensor(s, d),
                            ") } else { if (", Cond(s, d), ") { Right(", Tensor(s, d), ", ",
                            Tensor(s, d), ") } else { Neither() } }; match (", v, ") { Left(", a,
                            ") => ", Tensor(one, d), ", Right(", a, ", ", b, ") => ",
                            Tensor(two, d), ", Neither => ", Tensor(s, d), " } }");
      }
      case 17: {  // a reference written once
        ++features_.refs;
        std::string r = Fresh("r"), u = Fresh("u");
        std::string init = Tensor(s, d);
        Scope in = s;
        in.refs.push_back(r);
        return absl::StrCat("{ let ", r, " = ref(", init, "); let ", u, " = ref_write(", r, ", tanh(",
                            Tensor(in, d), ")); ", Binary(absl::StrCat("ref_read(", r, ")"),
                                                         Tensor(in, d)),
                            " }");
      }
      case 18: {  // a reference written by a recursive closure
        ++features_.refs;
        ++features_.ref_loops;
        ++features_.local_recursion;
        std::string r = Fresh("r"), w = Fresh("w"), j = Fresh("j"), u = Fresh("u"), u2 = Fresh("u");
        std::string init = Tensor(s, d);
        Scope in = s;
        in.refs.push_back(r);
        in.ints.push_back(j);
        return absl::StrCat("{ let ", r, " = ref(", init, "); let ", w, " = fn (", j, ": ", kInt,
                            ") -> () { if (less(", j, ", 1)) { () } else { let ", u, " = ref_write(",
                            r, ", tanh(", Binary(absl::StrCat("ref_read(", r, ")"), Tensor(in, d)),
                            ")); ", w, "(subtract(", j, ", 1)) } }; let ", u2, " = ", w, "(",
                            Count(s), "); ref_read(", r, ") }");
      }
      default: {  // tuples: projections or a tuple pattern
        ++features_.tuples;
        if (Coin()) {
          std::string t = Fresh("t");
          ++features_.lets;
          return absl::StrCat("{ let ", t, " = (", Tensor(s, d), ", ", Tensor(s, d), "); ",
                              Binary(absl::StrCat(t, ".0"), absl::StrCat(t, ".1")), " }");
        }
        ++features_.matches;
        std::string a = Fresh("a"), b = Fresh("b");
        Scope in = s;
        in.tensors.push_back(a);
        in.tensors.push_back(b);
        return absl::StrCat("match ((", Tensor(s, d), ", ", Tensor(s, d), ")) { (", a, ", ", b,
                            ") => ", Tensor(in, d), " }");
      }
    }
  }

  std::mt19937_64 rng_;
  int depth_;
  bool dynamic_;
  std::vector<int64_t> shape_;
  std::string t_;
  std::vector<std::string> globals_;
  bool need_list_ = false;
  bool need_pick_ = false;
  int next_id_ = 0;
  ProgramFeatures features_;
};

}  // namespace

RandomProgram RandomProgramText(const RandomProgramOptions& opts) {
  return Generator(opts.seed, opts.depth, opts.dynamic_first_dim).Build();
}

}  // namespace kiln::testing
