// InvalidUtf8At against hand-written byte sequences (RFC 3629's table).
#include "ir/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace kiln {
namespace {

TEST(Utf8Test, WellFormedTextIsAccepted) {
  EXPECT_EQ(InvalidUtf8At(""), std::nullopt);
  EXPECT_EQ(InvalidUtf8At("input_ids"), std::nullopt);
  EXPECT_EQ(InvalidUtf8At("caf\xC3\xA9"), std::nullopt);              // U+00E9
  EXPECT_EQ(InvalidUtf8At("\xE2\x82\xAC"), std::nullopt);             // U+20AC
  EXPECT_EQ(InvalidUtf8At("\xED\x9F\xBF"), std::nullopt);             // U+D7FF
  EXPECT_EQ(InvalidUtf8At("\xF0\x9F\x98\x80"), std::nullopt);         // U+1F600
  EXPECT_EQ(InvalidUtf8At("\xF4\x8F\xBF\xBF"), std::nullopt);         // U+10FFFF
  EXPECT_EQ(InvalidUtf8At(std::string("a\0b", 3)), std::nullopt);     // NUL is UTF-8
}

TEST(Utf8Test, MalformedBytesAreFoundAtTheirOffset) {
  EXPECT_EQ(InvalidUtf8At("x\xFF" "a"), 1u);           // never valid
  EXPECT_EQ(InvalidUtf8At("ab\x80"), 2u);              // a lone continuation byte
  EXPECT_EQ(InvalidUtf8At("\xC0\xAF"), 0u);            // overlong '/'
  EXPECT_EQ(InvalidUtf8At("\xE0\x80\xAF"), 0u);        // overlong, 3 bytes
  EXPECT_EQ(InvalidUtf8At("\xF0\x80\x80\xAF"), 0u);    // overlong, 4 bytes
  EXPECT_EQ(InvalidUtf8At("ok\xED\xA0\x80"), 2u);      // U+D800, a surrogate
  EXPECT_EQ(InvalidUtf8At("\xF4\x90\x80\x80"), 0u);    // U+110000
  EXPECT_EQ(InvalidUtf8At("abc\xE2\x82"), 3u);         // truncated at the end
  EXPECT_EQ(InvalidUtf8At("\xC3" "a"), 0u);            // a bad continuation
}

}  // namespace
}  // namespace kiln
