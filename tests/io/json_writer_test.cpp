#include "sim/io/json_writer.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/json_string.hpp"
#include "sim/core/version.hpp"

namespace kvsim::io {
namespace {

// The literal RFC 8259 and Python's json.dumps give each control character U+0000..U+001F:
// the two-character escapes for \b \f \n \r \t, \u00XX (lower-case hex) for the others.
TEST(JsonString, EscapesEveryControlCharacter) {
  const char* hex = "0123456789abcdef";
  for (int c = 0; c < 0x20; ++c) {
    std::string expected;
    switch (c) {
      case '\b': expected = "\\b"; break;
      case '\f': expected = "\\f"; break;
      case '\n': expected = "\\n"; break;
      case '\r': expected = "\\r"; break;
      case '\t': expected = "\\t"; break;
      default:
        expected = std::string("\\u00") + hex[c >> 4] + hex[c & 0xF];
    }
    const std::string in(1, static_cast<char>(c));
    EXPECT_EQ(json_quote(in), "\"" + expected + "\"") << "character " << c;
  }
  EXPECT_EQ(json_quote("a\"b\\c/d\x7f"), "\"a\\\"b\\\\c/d\x7f\"");  // '/' and DEL as they are
}

// UTF-8 stays as it is (ensure_ascii=False), 4-byte sequences included.
TEST(JsonString, KeepsUtf8) {
  const std::string s = "\xC3\xBC" "n\xC3\xAF \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80";  // ünï 日本 😀
  EXPECT_EQ(json_quote(s), "\"" + s + "\"");
}

// Bytes that are not UTF-8 become U+FFFD, one per maximal ill-formed subsequence, as Python's
// bytes.decode("utf-8", "replace") gives: b"\xff" -> 1, b"\xe6\x97" (truncated) -> 1,
// b"\xc0\xaf" (overlong) -> 2, b"\xed\xa0\x80" (surrogate) -> 3, b"\xf4\x90\x80\x80" -> 4.
TEST(JsonString, ReplacesInvalidUtf8) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(json_quote("a\xFF" "b"), "\"a" + r + "b\"");
  EXPECT_EQ(json_quote("\xE6\x97"), "\"" + r + "\"");
  EXPECT_EQ(json_quote("\xE6\x97x"), "\"" + r + "x\"");
  EXPECT_EQ(json_quote("\xC0\xAF"), "\"" + r + r + "\"");
  EXPECT_EQ(json_quote("\xED\xA0\x80"), "\"" + r + r + r + "\"");
  EXPECT_EQ(json_quote("\xF4\x90\x80\x80"), "\"" + r + r + r + r + "\"");
  EXPECT_EQ(json_quote("\x80"), "\"" + r + "\"");
}

// A document starts with schema_version and kvsim_version, then command.
TEST(JsonWriter, DocumentHeaderComesFirst) {
  Json doc = json_document("trace-stats");
  doc["requests"] = 3;
  const std::string text = json_text(doc);
  EXPECT_EQ(text.rfind("{\n  \"schema_version\": 1,\n  \"kvsim_version\": \"" + std::string(kVersion) +
                           "\",\n  \"command\": \"trace-stats\",\n  \"requests\": 3\n}\n",
                       0),
            0u)
      << text;
  EXPECT_EQ(kJsonSchemaVersion, 1);
  const auto parsed = Json::parse(text);
  EXPECT_EQ(parsed.begin().key(), "schema_version");
  EXPECT_EQ(json_text(json_document("", "1.2.3")), "{\n  \"schema_version\": 1,\n  \"kvsim_version\": \"1.2.3\"\n}\n");
}

// NaN and infinities are null; doubles round-trip; integers stay integers.
TEST(JsonWriter, Numbers) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Json a = Json::array({Json(nan), Json(inf), Json(-inf), Json(0.1), Json(166.0), Json(1.0 / 3.0),
                        Json(std::int64_t{-7}), Json(std::uint64_t{18446744073709551615ULL}), Json(true), Json()});
  EXPECT_EQ(json_text(a, 0),
            "[null, null, null, 0.1, 166, 0.3333333333333333, -7, 18446744073709551615, true, null]\n");
  EXPECT_TRUE(json_number_or_null(nan).is_null());
  EXPECT_EQ(json_number_or_null(2.5).get<double>(), 2.5);
  const double tricky = 0.1 + 0.2;
  EXPECT_EQ(Json::parse(json_text(Json(tricky))).get<double>(), tricky);
}

// Invalid UTF-8 in keys and values is replaced, never thrown on (Json::dump would throw).
TEST(JsonWriter, InvalidUtf8NeverThrows) {
  Json doc = Json::object();
  doc["k\xFF"] = std::string("v\xC3");
  std::string text;
  ASSERT_NO_THROW(text = json_text(doc, 0));
  EXPECT_EQ(text, "{\"k\xEF\xBF\xBD\": \"v\xEF\xBF\xBD\"}\n");
  Json back;
  EXPECT_NO_THROW(back = Json::parse(text));
  EXPECT_EQ(back.begin().key(), "k\xEF\xBF\xBD");
}

// Containers nested less than expand_depth deep take a line per member; deeper ones one line.
TEST(JsonWriter, Layout) {
  Json doc = Json::object();
  doc["a"] = Json::array({Json{{"x", 1}, {"y", Json::array({1, 2})}}, Json::object()});
  doc["e"] = Json::array();
  EXPECT_EQ(json_text(doc, 1), "{\n  \"a\": [{\"x\": 1, \"y\": [1, 2]}, {}],\n  \"e\": []\n}\n");
  EXPECT_EQ(json_text(doc, 2), "{\n  \"a\": [\n    {\"x\": 1, \"y\": [1, 2]},\n    {}\n  ],\n  \"e\": []\n}\n");
  std::ostringstream os;
  write_json(os, doc, 0);
  EXPECT_EQ(os.str(), "{\"a\": [{\"x\": 1, \"y\": [1, 2]}, {}], \"e\": []}\n");
}

}  // namespace
}  // namespace kvsim::io
