// Trace selection (window, scales, max requests), open and closed replay, and how hash blocks
// of any size map onto vLLM's 16-token KV blocks.
#include <gtest/gtest.h>

#include <map>

#include "sim/core/error.hpp"
#include "sim/workload/trace.hpp"
#include "sim/workload/trace_driver.hpp"
#include "tests/workload/fake_context.hpp"

namespace kvsim::workload {
namespace {

const std::string kSamples = std::string(KVSIM_SOURCE_DIR) + "/scenarios/traces/";

TraceRequest req(double t_ms, std::int64_t in, std::int64_t parent = -1,
                 std::int64_t conversation = -1) {
  TraceRequest r;
  r.timestamp_ms = t_ms;
  r.input_length = in;
  r.output_length = 4;
  r.parent = parent;
  r.conversation = conversation;
  return r;
}

Trace small_trace() {
  Trace t;
  t.format = "test";
  // 0: t=0; 1: t=1 s; 2: t=2 s (child of 1); 3: t=3 s (child of 2); 4: t=10 s
  t.requests = {req(0, 10), req(1000, 10, -1, 7), req(2000, 10, 1, 7), req(3000, 10, 2, 7),
                req(10'000, 10)};
  return t;
}

// start 1 s, duration 2.5 s keeps t in [1, 3.5) s = requests 1, 2, 3, re-based to 0, 1, 2 s;
// time_scale 3 and rate_scale 2 multiply gaps by 1.5. Request 1's parent link stays inside.
TEST(TraceSelect, WindowRebaseAndScales) {
  TraceWindow w;
  w.start_s = 1;
  w.duration_s = 2.5;
  w.time_scale = 3;
  w.rate_scale = 2;
  const Trace s = select(small_trace(), w);
  ASSERT_EQ(s.requests.size(), 3u);
  EXPECT_DOUBLE_EQ(s.requests[0].timestamp_ms, 0);
  EXPECT_DOUBLE_EQ(s.requests[1].timestamp_ms, 1500);
  EXPECT_DOUBLE_EQ(s.requests[2].timestamp_ms, 3000);
  EXPECT_EQ(s.requests[0].parent, -1);
  EXPECT_EQ(s.requests[1].parent, 0);
  EXPECT_EQ(s.requests[2].parent, 1);
}

// A window that cuts a conversation: the first kept turn loses its parent; max_requests keeps
// the first n of the window.
TEST(TraceSelect, CutParentsAndMaxRequests) {
  TraceWindow w;
  w.start_s = 2;
  w.max_requests = 1;
  const Trace s = select(small_trace(), w);
  ASSERT_EQ(s.requests.size(), 1u);
  EXPECT_EQ(s.requests[0].parent, -1);
  EXPECT_EQ(s.requests[0].conversation, 7);
  w = TraceWindow{};
  w.rate_scale = 0;
  EXPECT_THROW(select(small_trace(), w), InputError);
  w = TraceWindow{};
  w.duration_s = -1;
  EXPECT_THROW(select(small_trace(), w), InputError);
}

// Open loop: request i at its scaled timestamp even when its parent is still running.
TEST(TraceReplay, OpenModeIgnoresCompletions) {
  TraceSpec spec;
  spec.rate_scale = 4;  // 4x the rate: arrivals at 0, 250, 500, 750, 2500 ms
  TraceDriver d(small_trace(), spec);
  testing::FakeContext ctx;
  ctx.latency = [](const RequestSpec&) { return 2 * kSecond; };
  ctx.run(d);
  ASSERT_EQ(ctx.sent.size(), 5u);
  EXPECT_EQ(ctx.sent[2].at, 500 * kMillisecond);
  EXPECT_EQ(ctx.sent[3].at, 750 * kMillisecond);
  EXPECT_EQ(ctx.sent[4].at, 2500 * kMillisecond);
  EXPECT_EQ(ctx.sent[2].spec.conversation_id, 7);
}

// Closed loop: a turn waits for its parent's answer. With 2 s latency and 4x rate:
// 1 sent at 250 ms, done 2250; 2 due 500 -> sent 2250, done 4250; 3 due 750 -> sent 4250;
// 0 and 4 (no parent) at 0 and 2500 ms.
TEST(TraceReplay, ClosedModeChildAfterParent) {
  TraceSpec spec;
  spec.rate_scale = 4;
  spec.mode = TraceMode::kClosed;
  TraceDriver d(small_trace(), spec);
  testing::FakeContext ctx;
  ctx.latency = [](const RequestSpec&) { return 2 * kSecond; };
  ctx.run(d);
  ASSERT_EQ(ctx.sent.size(), 5u);
  std::vector<SimTime> at;
  for (const auto& s : ctx.sent) at.push_back(s.at);
  EXPECT_EQ(at, (std::vector<SimTime>{0, 250 * kMillisecond, 2250 * kMillisecond,
                                      2500 * kMillisecond, 4250 * kMillisecond}));
  // Every child starts at or after its parent's completion, by the trace's own links.
  const Trace& t = d.trace();
  std::vector<SimTime> sent_of(t.requests.size()), done_of(t.requests.size());
  for (std::size_t k = 0; k < ctx.sent.size(); ++k) {
    // request ids are issued in submission order; the answer stream identifies the trace index
    for (std::size_t i = 0; i < t.requests.size(); ++i) {
      if (ctx.sent[k].spec.output_content_id == trace_output_stream(i)) {
        sent_of[i] = ctx.sent[k].at;
        for (const auto& done : ctx.done) {
          if (done.id == ctx.sent[k].id) done_of[i] = done.at;
        }
      }
    }
  }
  for (std::size_t i = 0; i < t.requests.size(); ++i) {
    if (t.requests[i].parent >= 0) {
      EXPECT_GE(sent_of[i], done_of[static_cast<std::size_t>(t.requests[i].parent)]);
    }
  }
}

// Closed mode over the Bailian sample with a long latency: no turn is sent before its parent
// completes, and the total sent is every request.
TEST(TraceReplay, ClosedModeBailianSample) {
  TraceSpec spec;
  spec.mode = TraceMode::kClosed;
  spec.time_scale = 0.1;
  TraceDriver d(read_trace(kSamples + "bailian_example.jsonl"), spec);
  testing::FakeContext ctx;
  ctx.latency = [](const RequestSpec&) { return 3 * kSecond; };
  ctx.run(d);
  ASSERT_EQ(ctx.sent.size(), 8u);
  const Trace& t = d.trace();
  std::map<std::uint64_t, std::size_t> index_of_stream;
  for (std::size_t i = 0; i < t.requests.size(); ++i) index_of_stream[trace_output_stream(i)] = i;
  std::vector<SimTime> sent(8), done(8);
  for (const auto& s : ctx.sent) {
    const std::size_t i = index_of_stream.at(s.spec.output_content_id);
    sent[i] = s.at;
    for (const auto& c : ctx.done) {
      if (c.id == s.id) done[i] = c.at;
    }
  }
  int children = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    const std::int64_t p = t.requests[i].parent;
    if (p < 0) continue;
    ++children;
    EXPECT_GE(sent[i], done[static_cast<std::size_t>(p)]) << "request " << i;
  }
  EXPECT_EQ(children, 4);
}

// Block mapping: a 512-token hash block is 32 vLLM blocks of 16 tokens. Two requests sharing
// their first hash id (1100 and 700 tokens) share exactly 32 engine blocks; the partial last
// block (1100 = 2 x 512 + 76) is never shared, even with an identical request.
TEST(TraceBlocks, FiveTwelveTokenBlockIsThirtyTwoVllmBlocks) {
  TraceRequest a = req(0, 1100);
  a.hash_ids = {5, 6, 7};
  TraceRequest b = req(0, 700);
  b.hash_ids = {5, 8};
  const auto ha = block_hashes(trace_prompt(a, 0, 512), 16);
  const auto hb = block_hashes(trace_prompt(b, 1, 512), 16);
  ASSERT_EQ(ha.size(), 1100u / 16);  // 68 full engine blocks
  ASSERT_EQ(hb.size(), 700u / 16);   // 43
  std::size_t shared = 0;
  while (shared < hb.size() && ha[shared] == hb[shared]) ++shared;
  EXPECT_EQ(shared, 32u);
  // The same request again under another index: 64 blocks (2 full hash blocks) shared, the
  // 76-token tail's 4 full engine blocks differ.
  const auto ha2 = block_hashes(trace_prompt(a, 2, 512), 16);
  std::size_t same = 0;
  while (same < ha.size() && ha[same] == ha2[same]) ++same;
  EXPECT_EQ(same, 64u);
}

// Bailian's 16-token hash blocks are one engine block each; a trace without prefix information
// (hash_block_tokens 0) gives prompts that share nothing.
TEST(TraceBlocks, SixteenTokenBlocksAndNoPrefixInfo) {
  const Trace t = read_trace(kSamples + "bailian_example.jsonl");
  // chat 0 [0,1,2] (40 tokens) and chat 3 [0,1,5,6,7] (75 tokens) share ids 0 and 1.
  const auto h0 = block_hashes(trace_prompt(t.requests[0], 0, 16), 16);
  const auto h3 = block_hashes(trace_prompt(t.requests[3], 3, 16), 16);
  ASSERT_EQ(h0.size(), 2u);
  ASSERT_EQ(h3.size(), 4u);
  EXPECT_EQ(h0[0], h3[0]);
  EXPECT_EQ(h0[1], h3[1]);
  // chat 5 [0,1,5,6,10,11,12] follows chat 3: it shares chat 3's four full blocks.
  const auto h5 = block_hashes(trace_prompt(t.requests[5], 5, 16), 16);
  ASSERT_EQ(h5.size(), 6u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(h5[i], h3[i]);
  EXPECT_NE(h5[2], h0[1]);
  TraceRequest x = req(0, 64);
  TraceRequest y = req(0, 64);
  const auto hx = block_hashes(trace_prompt(x, 0, 0), 16);
  const auto hy = block_hashes(trace_prompt(y, 1, 0), 16);
  ASSERT_EQ(hx.size(), 4u);
  for (std::size_t i = 0; i < hx.size(); ++i) EXPECT_NE(hx[i], hy[i]);
  EXPECT_EQ(total_tokens(trace_prompt(x, 0, 0)), 64);
}

// Hash ids that each follow one hash id (as Mooncake's name prefixes) give the driver names by
// position: 32 engine blocks per 512-token hash block, for the whole, prompts of the window;
// a hash id seen after two different ones gives none.
TEST(TraceBlocks, DriverNamesBlocksOnlyWhenHashIdsNamePrefixes) {
  Trace t;
  t.format = "test";
  t.hash_block_tokens = 512;
  TraceRequest a = req(0, 1100);
  a.hash_ids = {5, 6, 7};  // 7 is the partial tail: not a whole block, not registered
  TraceRequest b = req(1, 1600);
  b.hash_ids = {5, 8, 9};
  t.requests = {a, b};
  const auto names = TraceDriver(t, TraceSpec{}).prefix_names(16);
  ASSERT_NE(names, nullptr);
  EXPECT_EQ(names->size(), 4U * 32U);  // 5, 6, 8, 9
  EXPECT_EQ(names->named_blocks(trace_prompt(a, 0, 512)), 64);
  EXPECT_EQ(names->named_blocks(trace_prompt(b, 1, 512)), 96);
  EXPECT_EQ(TraceDriver(t, TraceSpec{}).prefix_names(48), nullptr) << "512 is not a whole number of 48-token blocks";
  TraceRequest c = req(2, 1024);
  c.hash_ids = {4, 6};  // 6 followed 5 before
  t.requests.push_back(c);
  EXPECT_EQ(TraceDriver(t, TraceSpec{}).prefix_names(16), nullptr);
}

}  // namespace
}  // namespace kvsim::workload
