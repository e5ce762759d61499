// File: ir/layout.cc
#include "ir/layout.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kiln {

int Layout::Find(char name) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].name == name) return static_cast<int>(i);
  return -1;
}

int64_t Layout::FactorOf(char primal) const {
  const int i = Find(SplitOf(primal));
  return i < 0 ? 0 : axes[static_cast<size_t>(i)].factor;
}

bool Layout::HasSplit() const {
  for (const Axis& a : axes)
    if (!a.is_primal()) return true;
  return false;
}

bool Layout::HasPrimalAxes(absl::string_view primal) const {
  size_t n = 0;
  for (const Axis& a : axes) {
    if (!a.is_primal()) continue;
    if (primal.find(a.name) == absl::string_view::npos) return false;
    ++n;
  }
  // Axes appear once each, so a count match means every axis of `primal` is here.
  return n == primal.size();
}

bool Layout::IsPermutationOf(absl::string_view primal) const {
  return !HasSplit() && HasPrimalAxes(primal);
}

absl::StatusOr<Layout> ParseLayout(absl::string_view text) {
  Layout l;
  l.text = std::string(text);
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not a valid layout: ", why));
  };
  auto quoted = [](char c) { return absl::StrCat("'", std::string(1, c), "'"); };
  if (text.empty()) return bad("it is empty");
  size_t i = 0;
  while (i < text.size()) {
    int64_t factor = 0;
    bool has_factor = false;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      has_factor = true;
      factor = factor * 10 + (text[i] - '0');
      if (factor > (int64_t{1} << 40)) return bad("factor too large");
      ++i;
    }
    if (i == text.size()) return bad("it ends with a number");
    const char c = text[i++];
    const bool upper = c >= 'A' && c <= 'Z';
    const bool lower = c >= 'a' && c <= 'z';
    if (!upper && !lower) return bad(absl::StrCat("unexpected character ", quoted(c)));
    if (upper && has_factor) return bad("a factor must precede a lower-case (split) axis");
    if (lower && (!has_factor || factor <= 0))
      return bad(absl::StrCat("split axis ", quoted(c), " needs a positive factor"));
    if (l.Find(c) >= 0) return bad(absl::StrCat("axis ", quoted(c), " appears twice"));
    l.axes.push_back({c, lower ? factor : 0});
  }
  for (const Layout::Axis& a : l.axes)
    if (!a.is_primal() && l.Find(Layout::PrimalOf(a.name)) < 0)
      return bad(absl::StrCat("split axis ", quoted(a.name), " has no primal axis ",
                              quoted(Layout::PrimalOf(a.name))));
  return l;
}

}  // namespace kiln
