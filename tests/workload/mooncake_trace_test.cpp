#include "sim/workload/mooncake_trace.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/workload/trace_driver.hpp"
#include "tests/workload/fake_context.hpp"

namespace kvsim::workload {
namespace {

const std::string kFixtures = std::string(KVSIM_TEST_DATA_DIR) + "/fixtures/workload/";
const std::string kConversationTrace =
    std::string(KVSIM_SOURCE_DIR) + "/scenarios/traces/mooncake_fast25_conversation_trace.jsonl";

Diagnostic first_error(const std::string& text) {
  std::istringstream in(text);
  try {
    parse_mooncake_trace(in, "t.jsonl");
  } catch (const InputError& e) {
    return e.diagnostics().at(0);
  }
  ADD_FAILURE() << "expected InputError";
  return {};
}

// The real FAST'25 conversation trace: 12,031 requests, timestamps 0 .. 3,536,999 ms; the sums
// 144,793,823 input and 4,122,048 output tokens were computed independently with a Python
// one-liner over the file. Every prompt is input_length tokens long.
TEST(MooncakeTrace, RealConversationTraceLoads) {
  const auto reqs = read_mooncake_trace(kConversationTrace);
  ASSERT_EQ(reqs.size(), 12031u);
  std::int64_t in = 0, out = 0;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    in += reqs[i].input_length;
    out += reqs[i].output_length;
    ASSERT_EQ(total_tokens(trace_prompt(reqs[i], i, 512)), reqs[i].input_length)
        << "line " << reqs[i].line;
  }
  EXPECT_EQ(in, 144'793'823);
  EXPECT_EQ(out, 4'122'048);
  EXPECT_EQ(reqs.front().input_length, 6758);
  EXPECT_EQ(reqs.front().output_length, 500);
  EXPECT_EQ(reqs.front().hash_ids.size(), 14u);
  EXPECT_EQ(reqs.back().timestamp_ms, 3'536'999.0);
  EXPECT_EQ(reqs.back().line, 12031);
  // The first two requests share hash id 0 (their first 512 tokens), then differ.
  const auto h0 = block_hashes(trace_prompt(reqs[0], 0, 512), 512);
  const auto h1 = block_hashes(trace_prompt(reqs[1], 1, 512), 512);
  EXPECT_EQ(h0[0], h1[0]);
  EXPECT_NE(h0[1], h1[1]);
}

// A row's problem is reported at its line (blank lines count) and at the offending value:
// line 3, column 34 is the "600" string given for input_length.
TEST(MooncakeTrace, BadLineHasLineNumber) {
  try {
    read_mooncake_trace(kFixtures + "bad_trace.jsonl");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const Diagnostic& d = e.diagnostics().at(0);
    EXPECT_EQ(d.line, 3);
    EXPECT_EQ(d.column, 34);
    EXPECT_EQ(d.path, "input_length");
    EXPECT_NE(
        std::string(e.what()).find("bad_trace.jsonl:3:34: error: input_length: must be an integer"),
        std::string::npos)
        << e.what();
  }
}

TEST(MooncakeTrace, RowChecks) {
  const std::string ok =
      R"({"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]})";
  EXPECT_EQ(first_error(ok + "\n{\"timestamp\": 0, \"input_length\": 600,\n").line, 2);  // syntax
  Diagnostic d =
      first_error(ok + "\n\n" +
                  R"({"timestamp": 1, "input_length": 600, "output_length": 5, "hash_ids": [1]})");
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.path, "hash_ids");
  EXPECT_NE(d.message.find("ceil(600/512) = 2"), std::string::npos) << d.message;
  d = first_error(R"({"timestamp": 0, "input_length": 600, "hash_ids": [1, 2]})");
  EXPECT_EQ(d.message, "missing key 'output_length'");
  d = first_error(
      R"({"timestamp": -1, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]})");
  EXPECT_EQ(d.path, "timestamp");
  d = first_error(
      R"({"timestamp": 0, "input_length": 600, "output_length": 0, "hash_ids": [1, 2]})");
  EXPECT_EQ(d.path, "output_length");
  d = first_error(
      R"({"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, -2]})");
  EXPECT_EQ(d.path, "hash_ids[1]");
  EXPECT_EQ(first_error("[1, 2]").message, "a trace row must be a JSON object");
}

// The row reader without a JSON parser takes the rows of the real trace and random rows in the
// same form (keys in any order, JSON whitespace anywhere between tokens) and gives the values
// written; every row it does not take goes to the general reader.
TEST(MooncakeTrace, FastRowReaderGivesTheWrittenValues) {
  std::mt19937_64 rng(7);
  const char* spaces[] = {"", " ", "  ", "\t", " \r\n "};
  const auto sp = [&] { return std::string(spaces[rng() % 5]); };
  for (int n = 0; n < 500; ++n) {
    const std::int64_t ts = static_cast<std::int64_t>(rng() % 4'000'000'000ULL);
    const std::int64_t input = 1 + static_cast<std::int64_t>(rng() % 5000);
    const std::int64_t output = 1 + static_cast<std::int64_t>(rng() % 900);
    std::vector<std::int64_t> ids;
    std::string list = "[" + sp();
    for (std::int64_t b = 0; b < (input + 511) / 512; ++b) {
      ids.push_back(static_cast<std::int64_t>(rng() % 100'000'000));
      list += (b > 0 ? "," + sp() : "") + std::to_string(ids.back()) + sp();
    }
    list += "]";
    std::vector<std::string> fields = {
        "\"timestamp\"" + sp() + ":" + sp() + std::to_string(ts),
        "\"input_length\":" + sp() + std::to_string(input),
        "\"output_length\"" + sp() + ":" + std::to_string(output),
        "\"hash_ids\":" + sp() + list};
    std::shuffle(fields.begin(), fields.end(), rng);
    std::string row = sp() + "{" + sp();
    for (std::size_t f = 0; f < fields.size(); ++f) row += (f > 0 ? sp() + "," + sp() : "") + fields[f];
    row += sp() + "}" + sp();
    const auto r = read_mooncake_row(row, 512);
    ASSERT_TRUE(r.has_value()) << row;
    EXPECT_EQ(r->timestamp_ms, static_cast<double>(ts));
    EXPECT_EQ(r->input_length, input);
    EXPECT_EQ(r->output_length, output);
    EXPECT_EQ(r->hash_ids, ids);
    EXPECT_EQ(r->conversation, -1);
    EXPECT_EQ(r->parent, -1);
  }
  // The real trace: the rows read back equal a JSON parser's reading of each line.
  std::ifstream in(kConversationTrace);
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    const auto r = read_mooncake_row(line, 512);
    ASSERT_TRUE(r.has_value()) << line;
    const auto j = nlohmann::json::parse(line);
    ASSERT_EQ(r->timestamp_ms, j.at("timestamp").get<double>());
    ASSERT_EQ(r->input_length, j.at("input_length").get<std::int64_t>());
    ASSERT_EQ(r->output_length, j.at("output_length").get<std::int64_t>());
    ASSERT_EQ(r->hash_ids, j.at("hash_ids").get<std::vector<std::int64_t>>());
    ++rows;
  }
  EXPECT_EQ(rows, 12031);
}

// Rows valid or not in any other form are left to the general reader, which reads the valid
// ones to the same values and reports the others as before.
TEST(MooncakeTrace, FastRowReaderLeavesOtherFormsToTheGeneralReader) {
  const std::string ids = R"("hash_ids": [1, 2])";
  for (const std::string& row : std::vector<std::string>{
           R"({"timestamp": 1.5, "input_length": 600, "output_length": 5, )" + ids + "}",
           R"({"timestamp": 1e3, "input_length": 600, "output_length": 5, )" + ids + "}",
           R"({"timestamp": 01, "input_length": 600, "output_length": 5, )" + ids + "}",
           R"({"timestamp": -1, "input_length": 600, "output_length": 5, )" + ids + "}",
           R"({"timestamp": 1234567890123456789, "input_length": 600, "output_length": 5, )" + ids + "}",
           // Past int64: refused without accumulating past 18 digits (UBSan: no overflow).
           R"({"timestamp": 1, "input_length": 18446744073709551616, "output_length": 5, )" + ids + "}",
           R"({"timestamp": 99999999999999999999999999999, "input_length": 600, "output_length": 5, )" + ids + "}",
           R"({"timestamp": 1, "input_length": 600, "output_length": 0, )" + ids + "}",
           R"({"timestamp": 1, "input_length": 600, "output_length": 5, "hash_ids": [1]})",
           R"({"timestamp": 1, "input_length": 600, "output_length": 5, "hash_ids": [1, -2]})",
           R"({"timestamp": 1, "input_length": 600, "output_length": 5, )" + ids + R"(, "x": 1})",
           R"({"timestamp": 1, "timestamp": 2, "input_length": 600, "output_length": 5, )" + ids + "}",
           R"({"timestamp": 1, "input_length": 600, )" + ids + "}",
           R"({"timestamp": 1, "input_length": 600, "output_length": 5, )" + ids + "} x",
           R"({"timestamp": 1, "input_length": "600", "output_length": 5, )" + ids + "}",
           R"({"timest\u0061mp": 1, "input_length": 600, "output_length": 5, )" + ids + "}",
           "[1, 2]", "{}"}) {
    EXPECT_FALSE(read_mooncake_row(row, 512).has_value()) << row;
  }
  // Valid rows in another form read as the general reader reads them.
  std::istringstream in(R"({"timestamp": 1.5, "input_length": 600, "output_length": 5, "hash_ids": [1, 2], "x": 1})"
                        "\n" R"({"timest\u0061mp": 2, "input_length": 600, "output_length": 5, "hash_ids": [3, 4]})");
  const auto reqs = parse_mooncake_trace(in, "t.jsonl");
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].timestamp_ms, 1.5);
  EXPECT_EQ(reqs[1].timestamp_ms, 2.0);
  EXPECT_EQ(reqs[1].hash_ids, (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(reqs[1].line, 2);
}

// Rows are sorted stably by timestamp; the blank line is skipped; line numbers stay the file's.
TEST(MooncakeTrace, SortedStablyByTimestamp) {
  const auto reqs = read_mooncake_trace(kFixtures + "small_trace.jsonl");
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[0].line, 1);
  EXPECT_EQ(reqs[1].line, 4);  // timestamp 100
  EXPECT_EQ(reqs[2].line, 2);  // timestamp 250, before line 5's equal timestamp
  EXPECT_EQ(reqs[3].line, 5);
}

// Full blocks are shared streams of their hash id; the partial last block is unique per request:
// two requests with ids [0, 1, 2] and [0, 1, 3] of 1100 tokens share two 512-token blocks.
TEST(MooncakeTrace, PromptBlocks) {
  const auto reqs = read_mooncake_trace(kFixtures + "small_trace.jsonl");
  const TokenSequence a = trace_prompt(reqs[0], 0, 512);
  const TokenSequence b = trace_prompt(reqs[2], 2, 512);
  ASSERT_EQ(a.size(), 3u);  // 512 + 512 + 76
  EXPECT_EQ(a[0], (TokenSegment{content_id(ContentKind::kTraceBlock, 0), 0, 512}));
  EXPECT_EQ(a[1], b[1]);
  EXPECT_EQ(a[2].length, 76);
  EXPECT_NE(a[2].content_id, b[2].content_id);  // same hash id 2 vs 3 aside, tails never match
  TraceRequest same = reqs[0];
  EXPECT_NE(trace_prompt(same, 7, 512).back(), trace_prompt(same, 8, 512).back());
  EXPECT_EQ(trace_prompt(reqs[1], 1, 512).size(), 1u);  // exactly one full block, no tail
}

// Open loop: request i is sent at timestamp_i * time_scale ms, whatever the completions do.
TEST(TraceDriver, SubmitsAtScaledTimestamps) {
  TraceSpec spec;
  spec.time_scale = 0.5;
  spec.file = "small_trace.jsonl";
  TraceDriver d(read_trace(kFixtures + "small_trace.jsonl"), spec);
  testing::FakeContext ctx;
  ctx.latency = [](const RequestSpec&) { return 10 * kSecond; };
  ctx.run(d);
  ASSERT_EQ(ctx.sent.size(), 4u);
  EXPECT_EQ(ctx.sent[0].at, 0);
  EXPECT_EQ(ctx.sent[1].at, 50 * kMillisecond);
  EXPECT_EQ(ctx.sent[2].at, 125 * kMillisecond);
  EXPECT_EQ(ctx.sent[3].at, 125 * kMillisecond);
  EXPECT_EQ(ctx.sent[1].spec.output_tokens, 5);
  EXPECT_EQ(ctx.sent[1].spec.input_num_tokens, 512);
  EXPECT_EQ(total_tokens(ctx.sent[2].spec.prompt), 1100);
  EXPECT_EQ(ctx.sent[2].spec.conversation_id, -1);
  EXPECT_EQ(d.describe().front(), "trace=small_trace.jsonl");
}

TEST(TraceDriver, MaxRequestsAndValidation) {
  TraceSpec spec;
  spec.max_requests = 2;
  TraceDriver d(read_trace(kFixtures + "small_trace.jsonl"), spec);
  testing::FakeContext ctx;
  ctx.run(d);
  EXPECT_EQ(ctx.sent.size(), 2u);
  spec.time_scale = 0;
  EXPECT_THROW(TraceDriver(Trace{}, spec), InputError);
}

}  // namespace
}  // namespace kvsim::workload
