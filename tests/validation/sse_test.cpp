// The SSE parser and the chat-chunk reader against the event-stream rules (WHATWG HTML 9.2) and
// vLLM's chunk format, fed in every possible split of the byte stream.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "validation/src/chat_stream.hpp"
#include "validation/src/prometheus.hpp"
#include "validation/src/sse_parser.hpp"

namespace kvsim::validation {
namespace {

std::vector<std::string> events_of(const std::vector<std::string>& chunks) {
  std::vector<std::string> out;
  SseParser p([&](const SseEvent& e) { out.push_back(e.data); });
  for (const auto& c : chunks) p.feed(c);
  return out;
}

TEST(SseParser, LineEndsCommentsMultiLineDataInAnySplit) {
  // Three events: LF, CRLF and CR line ends; a comment; a two-line data field; a field without
  // the space after the colon; an event with no data (not dispatched); an unterminated tail.
  const std::string stream =
      ": keep-alive\n\ndata: one\n\ndata: two\r\ndata:2b\r\n\r\nevent: x\n\ndata: three\r\rdata: "
      "tail";
  const std::vector<std::string> expected{"one", "two\n2b", "three"};
  EXPECT_EQ(events_of({stream}), expected);
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    EXPECT_EQ(events_of({stream.substr(0, cut), stream.substr(cut)}), expected)
        << "split at " << cut;
  }
  std::vector<std::string> bytes;
  for (const char c : stream) bytes.emplace_back(1, c);
  EXPECT_EQ(events_of(bytes), expected);
}

TEST(ChatStreamReader, ContentTimesUsageAndDone) {
  ChatStreamReader r;
  r.feed("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n", 10);
  r.feed("data: {\"choices\":[{\"delta\":{\"content\":\"He\"}}]}\n\nda", 20);
  r.feed("ta: {\"choices\":[{\"delta\":{\"content\":\"llo\"},\"finish_reason\":\"length\"}]}\n\n",
         35);
  r.feed(
      "data: "
      "{\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":2,\"total_tokens\":52,"
      "\"prompt_tokens_details\":{\"cached_tokens\":32}}}\n\ndata: [DONE]\n\n",
      40);
  const ChatResult& c = r.result();
  EXPECT_TRUE(c.error.empty()) << c.error;
  EXPECT_TRUE(c.done);
  EXPECT_EQ(c.content, "Hello");
  EXPECT_EQ(c.content_chunks, 2);  // the role chunk has empty content: not a token
  EXPECT_EQ(c.first_token, 20);
  EXPECT_EQ(c.last_token, 35);
  EXPECT_EQ(c.prompt_tokens, 50);
  EXPECT_EQ(c.completion_tokens, 2);
  EXPECT_EQ(c.cached_tokens, 32);
  EXPECT_EQ(c.finish_reason, "length");
}

TEST(ChatStreamReader, MissingUsageIsNotAnError) {
  ChatStreamReader r;
  r.feed("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":null}\n\ndata: [DONE]\n\n",
         1);
  EXPECT_TRUE(r.result().error.empty());
  EXPECT_FALSE(r.result().usage_reported);
  EXPECT_EQ(r.result().cached_tokens, -1);
}

TEST(ChatStreamReader, MalformedErrorAndLateEvents) {
  ChatStreamReader bad;
  bad.feed("data: {\"choices\": [{\"delta\": \n\n", 1);
  EXPECT_NE(bad.result().error.find("malformed event"), std::string::npos);

  ChatStreamReader err;
  err.feed("data: {\"error\":{\"message\":\"out of memory\",\"code\":500}}\n\n", 1);
  EXPECT_NE(err.result().error.find("out of memory"), std::string::npos);

  ChatStreamReader late;
  late.feed("data: [DONE]\n\ndata: {\"choices\":[]}\n\n", 1);
  EXPECT_EQ(late.result().error, "data after [DONE]");
}

TEST(ErrorMessage, OpenAiStyleBodies) {
  EXPECT_EQ(error_message_of(R"({"error":{"message":"bad","code":400}})"), "bad");
  EXPECT_EQ(error_message_of(R"({"object":"error","message":"too long"})"), "too long");
  EXPECT_EQ(error_message_of("Internal Server Error"), "Internal Server Error");
}

TEST(Prometheus, SumsLabelsSkipsCommentsAndReadsSpecialValues) {
  const std::string text =
      "# HELP vllm:prefix_cache_hits_total hits\n# TYPE vllm:prefix_cache_hits_total counter\n"
      "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 120\n"
      "vllm:prefix_cache_hits_total{engine=\"1\",model_name=\"a}b\"} 30\n"
      "vllm:kv_cache_usage_perc{engine=\"0\"} 0.25 1700000000\n"
      "vllm:odd NaN\nnot a sample line\n";
  const MetricValues m = parse_prometheus(text);
  EXPECT_DOUBLE_EQ(m.at("vllm:prefix_cache_hits_total"), 150.0);
  EXPECT_DOUBLE_EQ(m.at("vllm:kv_cache_usage_perc"), 0.25);
  EXPECT_TRUE(std::isnan(m.at("vllm:odd")));
  EXPECT_EQ(m.count("not"), 0U);
  const MetricValues after{{"vllm:prefix_cache_hits_total", 200}};
  EXPECT_DOUBLE_EQ(counter_delta(m, after, "vllm:prefix_cache_hits"), 50.0);
  EXPECT_TRUE(std::isnan(counter_delta(m, after, "vllm:missing")));
}

}  // namespace
}  // namespace kvsim::validation
