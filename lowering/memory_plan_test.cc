// File: lowering/memory_plan_test.cc
#include "lowering/memory_plan.h"

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace kiln::lowering {
namespace {

TensorLife Life(int64_t bytes, int def, int last, bool exclusive = false) {
  TensorLife t;
  t.bytes = bytes;
  t.def_step = def;
  t.last_use_step = last;
  t.exclusive = exclusive;
  return t;
}

int64_t RoundUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// An independent check of any plan: returns "" when the plan is valid for
// `tensors`, else what is wrong.
std::string CheckPlan(const std::vector<TensorLife>& tensors, const MemoryPlan& plan,
                      int64_t alignment) {
  const size_t n = tensors.size();
  if (plan.storage_of.size() != n) return "storage_of has the wrong length";
  const size_t ns = plan.storage_bytes.size();
  if (plan.storage_exclusive.size() != ns) return "storage_exclusive has the wrong length";
  std::vector<int> users(ns, 0);
  for (size_t i = 0; i < n; ++i) {
    const int s = plan.storage_of[i];
    if (s < 0 || static_cast<size_t>(s) >= ns) return absl::StrCat("tensor ", i, ": bad storage");
    ++users[s];
    if (plan.storage_bytes[s] < tensors[i].bytes) {
      return absl::StrCat("tensor ", i, " (", tensors[i].bytes, " bytes) does not fit storage ", s,
                          " (", plan.storage_bytes[s], " bytes)");
    }
    if (tensors[i].exclusive != plan.storage_exclusive[s]) {
      return absl::StrCat("tensor ", i, ": exclusive flag of storage ", s, " is wrong");
    }
  }
  for (size_t s = 0; s < ns; ++s) {
    if (users[s] == 0) return absl::StrCat("storage ", s, " is unused");
    if (plan.storage_exclusive[s] && users[s] != 1) {
      return absl::StrCat("exclusive storage ", s, " has ", users[s], " tensors");
    }
    if (plan.storage_bytes[s] % alignment != 0) {
      return absl::StrCat("storage ", s, " is not a multiple of ", alignment);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      if (plan.storage_of[i] != plan.storage_of[j]) continue;
      const TensorLife& a = tensors[i];
      const TensorLife& b = tensors[j];
      const bool disjoint = a.last_use_step < b.def_step || b.last_use_step < a.def_step;
      if (!disjoint) {
        return absl::StrCat("tensors ", i, " [", a.def_step, ", ", a.last_use_step, "] and ", j,
                            " [", b.def_step, ", ", b.last_use_step, "] overlap but share storage ",
                            plan.storage_of[i]);
      }
    }
  }
  int64_t naive = 0;
  for (const TensorLife& t : tensors) {
    if (!t.exclusive) naive += RoundUp(t.bytes, alignment);
  }
  if (plan.naive_bytes != naive)
    return absl::StrCat("naive_bytes ", plan.naive_bytes, " != ", naive);
  int64_t shared = 0;
  for (size_t s = 0; s < ns; ++s) {
    if (!plan.storage_exclusive[s]) shared += plan.storage_bytes[s];
  }
  if (plan.shared_bytes != shared) {
    return absl::StrCat("shared_bytes ", plan.shared_bytes, " != sum of storages ", shared);
  }
  if (plan.shared_bytes > plan.naive_bytes) {
    return absl::StrCat("shared ", plan.shared_bytes, " > naive ", plan.naive_bytes);
  }
  return "";
}

int CountShared(const MemoryPlan& p) {
  int n = 0;
  for (bool e : p.storage_exclusive) n += e ? 0 : 1;
  return n;
}

TEST(MemoryPlanTest, ChainNeedsTwoSharedStorages) {
  // x -> t0 -> t1 -> ... -> t9 (output): step i writes t_i and reads t_{i-1}.
  std::vector<TensorLife> t;
  t.push_back(Life(4000, -1, 0, /*exclusive=*/true));  // the input
  for (int i = 0; i < 9; ++i) t.push_back(Life(4000, i, i + 1));
  t.push_back(Life(4000, 9, 9, /*exclusive=*/true));  // the output
  absl::StatusOr<MemoryPlan> p = PlanMemory(t, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(CheckPlan(t, *p, 64), "");
  EXPECT_EQ(CountShared(*p), 2);
  EXPECT_EQ(p->storage_bytes.size(), 4u);
  EXPECT_EQ(p->shared_bytes, 2 * 4032);
  EXPECT_EQ(p->naive_bytes, 9 * 4032);
  // Alternating: t0, t2, t4, ... in one storage; t1, t3, ... in the other.
  for (int i = 3; i < 10; ++i) EXPECT_EQ(p->storage_of[i], p->storage_of[i - 2]) << i;
  EXPECT_NE(p->storage_of[1], p->storage_of[2]);
}

TEST(MemoryPlanTest, DiamondReusesOnlyWhatIsDead) {
  // a = f(); b = g(a); c = h(a); d = k(b, c).
  std::vector<TensorLife> t = {
      Life(1024, 0, 2),  // a: read by steps 1 and 2
      Life(1024, 1, 3),  // b
      Life(1024, 2, 3),  // c
      Life(1024, 3, 3),  // d: written while b and c are read
  };
  absl::StatusOr<MemoryPlan> p = PlanMemory(t, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(CheckPlan(t, *p, 64), "");
  EXPECT_EQ(p->storage_bytes.size(), 3u);
  EXPECT_EQ(p->storage_of[3], p->storage_of[0]);  // d reuses a (dead after step 2)
  EXPECT_EQ(p->shared_bytes, 3 * 1024);
  EXPECT_EQ(p->naive_bytes, 4 * 1024);
}

TEST(MemoryPlanTest, BestFitTakesTheSmallestLargeEnoughElseGrowsTheLargest) {
  std::vector<TensorLife> t = {
      Life(1024, 0, 1),  // 0: A
      Life(256, 0, 1),   // 1: B
      Life(128, 0, 1),   // 2: C
      Life(64, 1, 1),    // 3: D, written at step 1 while A, B, C are read: new
      Life(200, 2, 2),   // 4: E -> B (256), not A
      Life(900, 2, 2),   // 5: F -> A (1024)
      Life(2000, 2, 2),  // 6: G -> nothing large enough: the largest free, C, grows
  };
  absl::StatusOr<MemoryPlan> p = PlanMemory(t, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(CheckPlan(t, *p, 64), "");
  ASSERT_EQ(p->storage_bytes.size(), 4u);
  EXPECT_EQ(p->storage_of[4], p->storage_of[1]);
  EXPECT_EQ(p->storage_of[5], p->storage_of[0]);
  EXPECT_EQ(p->storage_of[6], p->storage_of[2]);
  EXPECT_NE(p->storage_of[3], p->storage_of[0]);
  EXPECT_NE(p->storage_of[3], p->storage_of[1]);
  EXPECT_NE(p->storage_of[3], p->storage_of[2]);
  EXPECT_EQ(p->storage_bytes[p->storage_of[2]], 2048);
  EXPECT_EQ(p->storage_bytes[p->storage_of[0]], 1024);
  EXPECT_EQ(p->storage_bytes[p->storage_of[1]], 256);
  EXPECT_EQ(p->storage_bytes[p->storage_of[3]], 64);
  EXPECT_EQ(p->shared_bytes, 1024 + 256 + 2048 + 64);
}

TEST(MemoryPlanTest, ExclusiveTensorsAreNeverShared) {
  std::vector<TensorLife> t = {
      Life(512, -1, 0, true),  // input, dead after step 0
      Life(512, -1, 2, true),  // parameter
      Life(512, 0, 1),        Life(512, 1, 2),
      Life(512, 2, 3),        // could reuse the input's storage by lifetime alone
      Life(512, 3, 3, true),  // output
  };
  absl::StatusOr<MemoryPlan> p = PlanMemory(t, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(CheckPlan(t, *p, 64), "");
  std::set<int> exclusive = {p->storage_of[0], p->storage_of[1], p->storage_of[5]};
  EXPECT_EQ(exclusive.size(), 3u);
  for (int i : {2, 3, 4}) EXPECT_EQ(exclusive.count(p->storage_of[i]), 0u) << i;
  EXPECT_EQ(p->storage_of[4], p->storage_of[2]);
  EXPECT_EQ(p->shared_bytes, 2 * 512);
  EXPECT_EQ(p->naive_bytes, 3 * 512);
}

TEST(MemoryPlanTest, NaivePlanGivesEveryTensorItsOwnStorage) {
  std::vector<TensorLife> t;
  for (int i = 0; i < 10; ++i) t.push_back(Life(100 * (i + 1), i, i + 1, i == 9));
  MemoryPlanOptions o;
  o.share = false;
  absl::StatusOr<MemoryPlan> p = PlanMemory(t, o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(CheckPlan(t, *p, 64), "");
  EXPECT_EQ(p->storage_bytes.size(), t.size());
  EXPECT_EQ(std::set<int>(p->storage_of.begin(), p->storage_of.end()).size(), t.size());
  int64_t sum = 0;
  for (int i = 0; i < 9; ++i) sum += RoundUp(100 * (i + 1), 64);
  EXPECT_EQ(p->naive_bytes, sum);
  EXPECT_EQ(p->shared_bytes, sum);
}

TEST(MemoryPlanTest, SizesAreRoundedToTheAlignment) {
  std::vector<TensorLife> t = {Life(1, 0, 0), Life(64, 0, 0), Life(65, 0, 0), Life(0, 0, 0),
                               Life(3, 0, 0, true)};
  absl::StatusOr<MemoryPlan> p = PlanMemory(t, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(CheckPlan(t, *p, 64), "");
  EXPECT_EQ(p->storage_bytes[p->storage_of[0]], 64);
  EXPECT_EQ(p->storage_bytes[p->storage_of[1]], 64);
  EXPECT_EQ(p->storage_bytes[p->storage_of[2]], 128);
  EXPECT_EQ(p->storage_bytes[p->storage_of[3]], 0);
  EXPECT_EQ(p->storage_bytes[p->storage_of[4]], 64);
  EXPECT_EQ(p->naive_bytes, 64 + 64 + 128);

  MemoryPlanOptions o;
  o.alignment = 16;
  p = PlanMemory(t, o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(CheckPlan(t, *p, 16), "");
  EXPECT_EQ(p->storage_bytes[p->storage_of[0]], 16);
  EXPECT_EQ(p->storage_bytes[p->storage_of[2]], 80);
  EXPECT_EQ(p->naive_bytes, 16 + 64 + 80);
}

TEST(MemoryPlanTest, EmptyInputGivesAnEmptyPlan) {
  absl::StatusOr<MemoryPlan> p = PlanMemory({}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->storage_of.empty());
  EXPECT_TRUE(p->storage_bytes.empty());
  EXPECT_EQ(p->shared_bytes, 0);
  EXPECT_EQ(p->naive_bytes, 0);
}

TEST(MemoryPlanTest, BadInputsAreErrors) {
  absl::StatusOr<MemoryPlan> p = PlanMemory({Life(64, 0, 1), Life(-1, 0, 1)}, {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(p.status().message(), "tensor 1 has a negative size"))
      << p.status();

  p = PlanMemory({Life(64, 3, 2)}, {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(p.status().message(), "tensor 0 is last used at step 2"))
      << p.status();

  MemoryPlanOptions o;
  o.alignment = 0;
  p = PlanMemory({Life(64, 0, 1)}, o);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(p.status().message(), "alignment")) << p.status();

  p = PlanMemory({Life(INT64_MAX - 1, 0, 1)}, {});
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(absl::StrContains(p.status().message(), "too large")) << p.status();
}

// Random lifetimes: every plan passes the independent check, sharing never
// costs more than the naive plan, and the naive plan never shares.
TEST(MemoryPlanTest, RandomLifetimesGiveValidPlans) {
  int64_t total_shared = 0;
  int64_t total_naive = 0;
  for (uint32_t seed = 1; seed <= 500; ++seed) {
    std::mt19937 rng(seed);
    auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int n = uniform(1, 80);
    const int steps = uniform(1, 40);
    std::vector<TensorLife> t;
    for (int i = 0; i < n; ++i) {
      const int def = uniform(-1, steps);
      const int last = std::min(steps + 3, def + uniform(0, uniform(0, 1) ? 2 : 12));
      const int64_t bytes = uniform(0, 3) == 0 ? uniform(0, 100) : uniform(0, 1 << 16);
      t.push_back(Life(bytes, def, std::max(def, last), uniform(0, 9) == 0));
    }
    MemoryPlanOptions o;
    o.alignment = seed % 3 == 0 ? 16 : 64;
    absl::StatusOr<MemoryPlan> p = PlanMemory(t, o);
    ASSERT_TRUE(p.ok()) << "seed " << seed << ": " << p.status();
    ASSERT_EQ(CheckPlan(t, *p, o.alignment), "") << "seed " << seed;
    total_shared += p->shared_bytes;
    total_naive += p->naive_bytes;

    o.share = false;
    absl::StatusOr<MemoryPlan> naive = PlanMemory(t, o);
    ASSERT_TRUE(naive.ok()) << "seed " << seed << ": " << naive.status();
    ASSERT_EQ(CheckPlan(t, *naive, o.alignment), "") << "seed " << seed;
    ASSERT_EQ(naive->storage_bytes.size(), t.size()) << "seed " << seed;
    ASSERT_EQ(naive->shared_bytes, naive->naive_bytes) << "seed " << seed;
    ASSERT_EQ(naive->naive_bytes, p->naive_bytes) << "seed " << seed;
  }
  // Over many graphs, sharing saves something.
  EXPECT_LT(total_shared, total_naive);
}

}  // namespace
}  // namespace kiln::lowering
