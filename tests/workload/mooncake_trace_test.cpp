#include "kvsim/workload/mooncake_trace.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "fake_context.hpp"
#include "kvsim/core/error.hpp"
#include "kvsim/workload/trace_driver.hpp"

namespace kvsim::workload {
namespace {

const std::string kFixtures = std::string(KVSIM_TEST_DATA_DIR) + "/fixtures/workload/";
const std::string kConversationTrace =
    std::string(KVSIM_SHARED_DATA_DIR) + "/traces/mooncake_fast25_conversation_trace.jsonl";

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
