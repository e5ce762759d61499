// Abseil smoke test: Status, StatusOr, StrCat, StrFormat, flat_hash_map, Mutex,
// call_once, Cord, Time, int128 all compile and link in C++20.
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/base/call_once.h"
#include "absl/base/options.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "gtest/gtest.h"

namespace {

static_assert(__cplusplus >= 202002L, "kiln is C++20");

// Debian's Abseil 20220623 is built with ABSL_OPTION_USE_STD_STRING_VIEW=0 (and the
// same for optional/variant/any): absl::string_view is Abseil's own class. If this
// ever flips (e.g. a rebuilt libabsl), these asserts tell us.
static_assert(ABSL_OPTION_USE_STD_STRING_VIEW == 0);
static_assert(!std::is_same_v<absl::string_view, std::string_view>);

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError(absl::StrCat("odd: ", x));
  return x / 2;
}

TEST(AbslSmoke, StatusAndStatusOr) {
  absl::StatusOr<int> ok = Half(8);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 4);
  absl::StatusOr<int> bad = Half(3);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "odd: 3");
  EXPECT_EQ(absl::OkStatus().ToString(), "OK");
  absl::Status s = absl::NotFoundError("x");
  s.SetPayload("kiln/where", absl::Cord("node 3"));
  EXPECT_TRUE(s.GetPayload("kiln/where").has_value());
}

TEST(AbslSmoke, Strings) {
  EXPECT_EQ(absl::StrCat("a", 1, "b", 2.5), "a1b2.5");
  EXPECT_EQ(absl::StrFormat("%s=%d (%.2f)", "n", 42, 0.5), "n=42 (0.50)");
  std::vector<std::string> parts = absl::StrSplit("a,b,c", ',');
  EXPECT_EQ(absl::StrJoin(parts, "|"), "a|b|c");
  // Converting between std::string_view and absl::string_view is explicit.
  std::string_view sv = "hello";
  absl::string_view av(sv.data(), sv.size());
  EXPECT_EQ(std::string(av), "hello");
  absl::Cord cord("abc");
  cord.Append("def");
  EXPECT_EQ(std::string(cord), "abcdef");
}

TEST(AbslSmoke, Containers) {
  absl::flat_hash_map<std::string, int> m;
  for (int i = 0; i < 1000; ++i) m[absl::StrCat("k", i)] = i;
  EXPECT_EQ(m.size(), 1000u);
  EXPECT_EQ(m.at("k500"), 500);
  absl::flat_hash_set<int> s = {1, 2, 3};
  EXPECT_TRUE(s.contains(2));
  EXPECT_NE(absl::HashOf(std::string("a")), absl::HashOf(std::string("b")));
}

TEST(AbslSmoke, SyncTimeNumeric) {
  absl::Mutex mu;
  int counter = 0;
  {
    absl::MutexLock lock(&mu);
    ++counter;
  }
  static absl::once_flag once;
  absl::call_once(once, [&] { ++counter; });
  absl::call_once(once, [&] { ++counter; });
  EXPECT_EQ(counter, 2);
  absl::Time t0 = absl::Now();
  EXPECT_GE(absl::Now() - t0, absl::ZeroDuration());
  absl::uint128 big = absl::MakeUint128(1, 0);
  EXPECT_EQ(absl::Uint128High64(big), 1u);
  absl::optional<int> o = 3;
  EXPECT_EQ(o.value_or(0), 3);
}

}  // namespace
