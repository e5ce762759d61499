// File: lowering/arith/simplify_pass_test.cc — SimplifyPass on small functions
// written as loop-IR text: Before -> Expected, compared as printed text (the
// expected text is parsed and printed too, so it may be written loosely).
#include "lowering/arith/simplify_pass.h"

#include <string>

#include "gtest/gtest.h"
#include "ir/tir_parser.h"
#include "ir/tir_printer.h"

namespace kiln::arith {
namespace {

std::string Run(const std::string& before) {
  absl::StatusOr<tir::PrimFunc> f = tir::ParsePrimFunc(before);
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return "";
  absl::StatusOr<tir::PrimFunc> g = SimplifyPass(*f);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? tir::ToText(*g) : "";
}

std::string Norm(const std::string& text) {
  absl::StatusOr<tir::PrimFunc> f = tir::ParsePrimFunc(text);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? tir::ToText(*f) : "";
}

void ExpectSimplifies(const std::string& before, const std::string& expected) {
  EXPECT_EQ(Run(before), Norm(expected)) << "before:\n" << before;
}

TEST(SimplifyPassTest, RemovesProvableGuardsAndFoldsIndices) {
  ExpectSimplifies(R"(
    primfunc f(A: float32[256], B: float32[16, 16]) {
      for (i, 0, 16) {
        for (j, 0, 16) {
          if (i * 16 + j < 256) {
            A[i * 16 + j] = B[floordiv(i * 16 + j, 16), floormod(i * 16 + j, 16)]
          }
        }
      }
    }
  )", R"(
    primfunc f(A: float32[256], B: float32[16, 16]) {
      for (i, 0, 16) {
        for (j, 0, 16) {
          A[i * 16 + j] = B[i, j]
        }
      }
    }
  )");
}

TEST(SimplifyPassTest, KeepsGuardsItCannotProve) {
  ExpectSimplifies(R"(
    primfunc f(A: float32[250]) {
      for (i, 0, 16) {
        for (j, 0, 16) {
          if (j + i * 16 < 250) {
            A[i * 16 + j] = 1f
          }
        }
      }
    }
  )", R"(
    primfunc f(A: float32[250]) {
      for (i, 0, 16) {
        for (j, 0, 16) {
          if (i * 16 + j < 250) {
            A[i * 16 + j] = 1f
          }
        }
      }
    }
  )");
}

TEST(SimplifyPassTest, TakesTheBranchThatIsProvablyTaken) {
  ExpectSimplifies(R"(
    primfunc f(A: int32[16]) {
      for (i, 0, 16) {
        if (i >= 16) {
          A[i] = 1_int32
        } else {
          A[i] = 2_int32
        }
        if (i < 100) {
          A[i] = 3_int32
        }
        if (i < 0) {
          A[i] = 4_int32
        }
      }
    }
  )", R"(
    primfunc f(A: int32[16]) {
      for (i, 0, 16) {
        A[i] = 2_int32
        A[i] = 3_int32
      }
    }
  )");
}

TEST(SimplifyPassTest, BranchesKnowTheirCondition) {
  ExpectSimplifies(R"(
    primfunc f(A: float32[16]) {
      for (i, 0, 16) {
        if (i < 8) {
          A[floordiv(i, 8) + i] = 1f
        } else {
          if (i >= 8) {
            A[floormod(i, 8)] = 2f
          }
        }
      }
    }
  )", R"(
    primfunc f(A: float32[16]) {
      for (i, 0, 16) {
        if (i < 8) {
          A[i] = 1f
        } else {
          A[i - 8] = 2f
        }
      }
    }
  )");
}

TEST(SimplifyPassTest, UnitAndEmptyLoops) {
  ExpectSimplifies(R"(
    primfunc f(A: float32[64], B: float32[64]) {
      for (i, 0, 8) {
        for (j, 0, 1) {
          for (k, 3, 1) {
            A[i * 8 + j + k] = B[i + j]
          }
        }
      }
      for (z, 0, 0) {
        A[z] = 0f
      }
      for (z, 5, -2) {
        A[z] = 0f
      }
      for (z, 0, 4) {
        if (z > 10) {
          A[z] = 0f
        }
      }
    }
  )", R"(
    primfunc f(A: float32[64], B: float32[64]) {
      for (i, 0, 8) {
        A[i * 8 + 3] = B[i]
      }
    }
  )");
}

TEST(SimplifyPassTest, LetsAreSubstitutedWhenConstantAndKeptOtherwise) {
  ExpectSimplifies(R"(
    primfunc f(A: float32[64]) {
      let c = 4
      for (i, 0, 16) {
        let t: float32 = A[i * c]
        let u = i * 4
        A[u + 1] = t * 2f
        if (u < 64) {
          A[u] = t
        }
      }
    }
  )", R"(
    primfunc f(A: float32[64]) {
      for (i, 0, 16) {
        let t: float32 = A[i * 4]
        let u = i * 4
        A[u + 1] = t * 2f
        A[u] = t
      }
    }
  )");
}

TEST(SimplifyPassTest, AssertsAndShapeVariables) {
  ExpectSimplifies(R"(
    primfunc f(A: float32[n], B: float32[n]) {
      assert(n >= 0, "sizes are never negative")
      assert(n > 4, "need at least 5 elements")
      if (n >= 5) {
        for (i, 0, n) {
          if (i < n) {
            A[i] = B[i]
          }
          if (i + 1 < n) {
            A[i + 1] = B[i]
          }
          A[floordiv(i, n)] = 0f
        }
      }
    }
  )", R"(
    primfunc f(A: float32[n], B: float32[n]) {
      assert(n > 4, "need at least 5 elements")
      for (i, 0, n) {
        A[i] = B[i]
        if (i + 1 < n) {
          A[i + 1] = B[i]
        }
        A[0] = 0f
      }
    }
  )");
}

TEST(SimplifyPassTest, ThreadExtentBindsTheThreadIndex) {
  ExpectSimplifies(R"(
    primfunc f(A: float32[1024]) {
      attr iter_var(bx, none, thread, "blockIdx.x") "thread_extent" = 32 {
        attr iter_var(tx, none, thread, "threadIdx.x") "thread_extent" = 32 {
          if (bx * 32 + tx < 1024) {
            A[bx * 32 + tx] = 1f
          }
        }
      }
      thread_binding (t, 0, 1) "threadIdx.y" {
        A[t] = 2f
      }
    }
  )", R"(
    primfunc f(A: float32[1024]) {
      attr iter_var(bx, none, thread, "blockIdx.x") "thread_extent" = 32 {
        attr iter_var(tx, none, thread, "threadIdx.x") "thread_extent" = 32 {
          A[bx * 32 + tx] = 1f
        }
      }
      thread_binding (t, 0, 1) "threadIdx.y" {
        A[0] = 2f
      }
    }
  )");
}

TEST(SimplifyPassTest, FloatsAreNotRewrittenAndVectorsAre) {
  ExpectSimplifies(R"(
    primfunc f(A: float32[64], B: float32[64]) {
      for (i, 0, 16) {
        A[i] = (B[i] * 0f + 0f) + (B[i] - B[i]) + 1f * 2f
        vectorized (v, 0, 1) {
          A[ramp(i * 4 + v, 1, 4)] = B[floordiv(ramp(i * 16, 1, 4), broadcast(16, 4))]
        }
      }
    }
  )", R"(
    primfunc f(A: float32[64], B: float32[64]) {
      for (i, 0, 16) {
        A[i] = (B[i] * 0f + 0f) + (B[i] - B[i]) + 2f
        A[ramp(i * 4, 1, 4)] = B[broadcast(i, 4)]
      }
    }
  )");
}

TEST(SimplifyPassTest, EmptyBodiesDisappear) {
  ExpectSimplifies(R"(
    primfunc f(A: float32[4]) {
      for (i, 0, 4) {
        allocate T: float32[4] local
        if (i < 2) {
          no_op
        }
      }
      A[0] = 1f
    }
  )", R"(
    primfunc f(A: float32[4]) {
      A[0] = 1f
    }
  )");
}

TEST(SimplifyPassTest, AlreadySimpleFunctionIsReturnedAsIs) {
  absl::StatusOr<tir::PrimFunc> f = tir::ParsePrimFunc(R"(
    primfunc f(A: float32[16]) {
      for (i, 0, 16) {
        A[i] = A[i] + 1f
      }
    }
  )");
  ASSERT_TRUE(f.ok());
  absl::StatusOr<tir::PrimFunc> g = SimplifyPass(*f);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->get(), f->get());
  EXPECT_FALSE(SimplifyPass(nullptr).ok());
}

}  // namespace
}  // namespace kiln::arith
