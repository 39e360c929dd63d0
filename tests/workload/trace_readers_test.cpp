// Trace readers: detection by content, parsing of every format, and errors located at the
// offending line (and column) of the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/core/error.hpp"
#include "sim/workload/azure_trace.hpp"
#include "sim/workload/trace.hpp"

namespace kvsim::workload {
namespace {

const std::string kSamples = std::string(KVSIM_SOURCE_DIR) + "/scenarios/traces/";

// Writes `text` to a temporary file and returns its path.
std::string temp_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("kvsim_trace_readers_" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

Diagnostic read_error(const std::string& name, const std::string& text,
                      TraceFormat format = TraceFormat::kAuto) {
  const std::string path = temp_file(name, text);
  try {
    TraceReadOptions opt;
    opt.format = format;
    read_trace(path, opt);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":"), std::string::npos) << e.what();
    return e.diagnostics().at(0);
  }
  ADD_FAILURE() << "expected InputError for " << name;
  return {};
}

TEST(TraceDetect, EachSampleByContent) {
  EXPECT_EQ(detect_trace_format(kSamples + "mooncake_conversation_head250.jsonl"),
            TraceFormat::kMooncake);
  EXPECT_EQ(detect_trace_format(kSamples + "bailian_example.jsonl"), TraceFormat::kBailian);
  EXPECT_EQ(detect_trace_format(kSamples + "azure_conv_2023_head250.csv"), TraceFormat::kAzure);
  EXPECT_EQ(detect_trace_format(kSamples + "azure_code_2024_example.csv"), TraceFormat::kAzure);
  EXPECT_EQ(detect_trace_format(kSamples + "burstgpt_example.csv"), TraceFormat::kBurstGpt);
  EXPECT_EQ(detect_trace_format(kSamples + "sharegpt_example.json"), TraceFormat::kShareGpt);
  EXPECT_EQ(detect_trace_format(temp_file("openai.json", R"([{"id": "x", "messages": []}])")),
            TraceFormat::kOpenAi);
  EXPECT_THROW(detect_trace_format(temp_file("unknown.txt", "hello,world\n1,2\n")), InputError);
}

// The first 250 lines of the FAST'25 conversation trace; sums by a Python one-liner over the file:
// 3,534,037 input and 91,107 output tokens, last timestamp 86,999 ms.
TEST(TraceRead, MooncakeSample) {
  const Trace t = read_trace(kSamples + "mooncake_conversation_head250.jsonl");
  EXPECT_EQ(t.format, "mooncake");
  EXPECT_EQ(t.hash_block_tokens, 512);
  ASSERT_EQ(t.requests.size(), 250u);
  std::int64_t in = 0, out = 0;
  for (const auto& r : t.requests) {
    in += r.input_length;
    out += r.output_length;
    EXPECT_EQ(r.conversation, -1);
    EXPECT_EQ(r.parent, -1);
  }
  EXPECT_EQ(in, 3'534'037);
  EXPECT_EQ(out, 91'107);
  EXPECT_EQ(t.requests.back().timestamp_ms, 86'999.0);
}

// Bailian: seconds become milliseconds, chat ids become conversations (the root's chat_id) and
// parent links point at the previous turn's position in the time-sorted trace.
TEST(TraceRead, BailianSample) {
  const Trace t = read_trace(kSamples + "bailian_example.jsonl");
  EXPECT_EQ(t.format, "bailian");
  EXPECT_EQ(t.hash_block_tokens, 16);
  ASSERT_EQ(t.requests.size(), 8u);
  EXPECT_DOUBLE_EQ(t.requests[1].timestamp_ms, 1250.0);
  // chat 3 (line 4, parent chat 0 on line 1) and chat 5 (parent chat 3) are turns 2 and 3 of
  // conversation 0; chat 7 (parent chat 2) is turn 2 of conversation 2.
  EXPECT_EQ(t.requests[3].line, 4);
  EXPECT_EQ(t.requests[3].parent, 0);
  EXPECT_EQ(t.requests[3].conversation, 0);
  EXPECT_EQ(t.requests[5].parent, 3);
  EXPECT_EQ(t.requests[5].conversation, 0);
  EXPECT_EQ(t.requests[5].turn, 3);
  EXPECT_EQ(t.requests[7].parent, 2);
  EXPECT_EQ(t.requests[7].conversation, 2);
  EXPECT_EQ(t.requests[6].parent, -1);
  EXPECT_EQ(t.requests[6].conversation, 6);
  EXPECT_EQ(t.requests[6].turn, 1);
}

// A parent given after its child in the file is linked by chat_id; rows sort by timestamp.
TEST(TraceRead, BailianOutOfOrderAndCountedTurns) {
  const std::string path = temp_file(
      "bailian_order.jsonl",
      R"({"chat_id": 9, "parent_chat_id": 4, "timestamp": 2, "input_length": 16, "output_length": 1, "hash_ids": [1]})"
      "\n"
      R"({"chat_id": 4, "timestamp": 1, "input_length": 17, "output_length": 1, "hash_ids": [1, 2]})"
      "\n");
  const Trace t = read_trace(path);
  ASSERT_EQ(t.requests.size(), 2u);
  EXPECT_EQ(t.requests[0].line, 2);
  EXPECT_EQ(t.requests[1].parent, 0);
  EXPECT_EQ(t.requests[1].turn, 2);  // no "turn" key: counted along the parent links
  EXPECT_EQ(t.requests[1].conversation, 4);
}

// Azure 2023: the sample is the first 250 rows of the conv trace; re-based to its earliest
// row. Python's datetime over the file: span 72,258.986 ms, 223,189 / 61,122 tokens, the second
// row 4,314.579 ms after the first.
TEST(TraceRead, Azure2023Sample) {
  const Trace t = read_trace(kSamples + "azure_conv_2023_head250.csv");
  EXPECT_EQ(t.format, "azure");
  EXPECT_EQ(t.hash_block_tokens, 0);
  ASSERT_EQ(t.requests.size(), 250u);
  std::int64_t in = 0, out = 0;
  for (const auto& r : t.requests) {
    in += r.input_length;
    out += r.output_length;
    EXPECT_TRUE(r.hash_ids.empty());
  }
  EXPECT_EQ(in, 223'189);
  EXPECT_EQ(out, 61'122);
  EXPECT_DOUBLE_EQ(t.requests.front().timestamp_ms, 0.0);
  EXPECT_NEAR(t.requests[1].timestamp_ms, 4314.579, 1e-6);
  EXPECT_NEAR(t.requests.back().timestamp_ms, 72'258.986, 1e-6);
}

// Both timestamp styles and time zones: 00:00:00.009930+00:00 is 9.93 ms past midnight UTC;
// 01:00:00+01:00 is midnight UTC. 2024-05-10 is day 19,853 since 1970-01-01 (19,853 x 86,400 s).
TEST(TraceRead, AzureTimestamps) {
  const std::int64_t midnight = 19'853LL * 86'400 * 1'000'000'000;
  EXPECT_EQ(parse_azure_timestamp("2024-05-10 00:00:00.009930+00:00"), midnight + 9'930'000);
  EXPECT_EQ(parse_azure_timestamp("2024-05-10 01:00:00+01:00"), midnight);
  EXPECT_EQ(parse_azure_timestamp("2024-05-09T23:30:00-00:30"), midnight);
  EXPECT_EQ(parse_azure_timestamp("2024-05-10 00:00:00Z"), midnight);
  EXPECT_EQ(parse_azure_timestamp("2023-11-16 18:15:46.6805900"),
            (19'677LL * 86'400 + 18 * 3600 + 15 * 60 + 46) * 1'000'000'000 + 680'590'000);
  EXPECT_FALSE(parse_azure_timestamp("2024-02-30 00:00:00"));
  // From 1970 to 2199, so that nanoseconds and their differences fit int64 (found by fuzzing:
  // signed overflow for years past 2262 and for 1700 against 2250).
  EXPECT_EQ(parse_azure_timestamp("1970-01-01 00:00:00"), 0);
  EXPECT_TRUE(parse_azure_timestamp("2199-12-31 23:59:59"));
  EXPECT_FALSE(parse_azure_timestamp("2200-01-01 00:00:00"));
  EXPECT_FALSE(parse_azure_timestamp("2263-01-01 00:00:00"));
  EXPECT_FALSE(parse_azure_timestamp("1969-12-31 23:59:59"));
  EXPECT_FALSE(parse_azure_timestamp("2024-05-10"));
  EXPECT_FALSE(parse_azure_timestamp("2024-05-10 00:00:00 UTC"));
  const Trace t = read_trace(kSamples + "azure_code_2024_example.csv");
  ASSERT_EQ(t.requests.size(), 6u);
  EXPECT_NEAR(t.requests[1].timestamp_ms, 11.63, 1e-9);  // 21.560 - 9.930 ms
  EXPECT_NEAR(t.requests[5].timestamp_ms, 2000.0, 1e-9);
  EXPECT_EQ(t.requests[5].output_length, 0);
}

// BurstGPT: 8 rows, of which 2 failed (Response tokens 0) and are skipped; seconds -> ms, not
// re-based (the first request is at 5 s).
TEST(TraceRead, BurstGptSample) {
  const Trace t = read_trace(kSamples + "burstgpt_example.csv");
  EXPECT_EQ(t.format, "burstgpt");
  ASSERT_EQ(t.requests.size(), 6u);
  EXPECT_EQ(t.skipped_rows, 2);
  EXPECT_DOUBLE_EQ(t.requests[0].timestamp_ms, 5000.0);
  EXPECT_DOUBLE_EQ(t.requests[2].timestamp_ms, 47'500.0);
  EXPECT_EQ(t.requests[1].line, 4);
  EXPECT_EQ(t.requests[1].input_length, 417);
  EXPECT_EQ(t.requests[1].output_length, 505);
}

// One malformed row per format: the diagnostic names the file, the line, the field and the
// column of the field's value.
TEST(TraceErrors, LineAndColumnPerFormat) {
  const std::string mc_ok =
      R"({"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]})";
  Diagnostic d = read_error(
      "mc.jsonl",
      mc_ok + "\n\n" +
          R"({"timestamp": 1, "input_length": 600, "output_length": "5", "hash_ids": [1, 2]})" +
          "\n");
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.path, "output_length");
  EXPECT_EQ(d.column, 56);

  const std::string bl_ok =
      R"({"chat_id": 1, "parent_chat_id": -1, "timestamp": 0.5, "input_length": 20, "output_length": 3, "hash_ids": [1, 2]})";
  d = read_error(
      "bl.jsonl",
      bl_ok + "\n" +
          R"({"chat_id": 2, "parent_chat_id": 1, "timestamp": 1.0, "input_length": 20, "output_length": 3, "hash_ids": [1]})" +
          "\n");
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.path, "hash_ids");
  EXPECT_NE(d.message.find("ceil(20/16) = 2"), std::string::npos) << d.message;
  d = read_error("bl_dup.jsonl", bl_ok + "\n" + bl_ok + "\n");
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.path, "chat_id");
  EXPECT_NE(d.message.find("already on line 1"), std::string::npos) << d.message;
  d = read_error(
      "bl_ts.jsonl",
      R"({"chat_id": 1, "timestamp": "soon", "input_length": 20, "output_length": 3, "hash_ids": [1, 2]})"
      "\n");
  EXPECT_EQ(d.path, "timestamp");
  // A turn that arrives before the turn it follows.
  d = read_error(
      "bl_late.jsonl",
      R"({"chat_id": 2, "parent_chat_id": 1, "timestamp": 1, "input_length": 16, "output_length": 3, "hash_ids": [1]})"
      "\n"
      R"({"chat_id": 1, "timestamp": 5, "input_length": 16, "output_length": 3, "hash_ids": [1]})"
      "\n");
  EXPECT_EQ(d.line, 1);
  EXPECT_NE(d.message.find("line 2"), std::string::npos) << d.message;

  d = read_error("az.csv",
                 "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"
                 "2023-11-16 18:15:47.1,-3,44\n");
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.path, "ContextTokens");
  EXPECT_EQ(d.column, 23);
  d = read_error("az_ts.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n16/11/2023 18:15,374,44\n");
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.path, "TIMESTAMP");
  d = read_error("az_short.csv",
                 "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374\n");
  EXPECT_EQ(d.line, 2);

  d = read_error("bg.csv",
                 "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                 "5,ChatGPT,472,18,490,Conversation log\n6,ChatGPT,4x2,18,490,API log\n");
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.path, "Request tokens");
  EXPECT_EQ(d.column, 11);
  d = read_error("bg_hdr.csv", "Timestamp,Model,Request tokens,Total tokens\n5,ChatGPT,472,490\n",
                 TraceFormat::kBurstGpt);
  EXPECT_EQ(d.line, 1);
  EXPECT_NE(d.message.find("Response tokens"), std::string::npos) << d.message;

  d = read_error(
      "sg.json",
      "[\n  {\"id\": \"a_0\", \"conversations\": [{\"from\": \"robot\", \"value\": \"x\"}]}\n]\n",
      TraceFormat::kShareGpt);
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.path, "[0].conversations[0].from");
  d = read_error("sg_id.json", "[{\"id\": \"a_0_1\", \"conversations\": []}]",
                 TraceFormat::kShareGpt);
  EXPECT_EQ(d.path, "[0].id");

  d = read_error("oa.json",
                 "[{\"id\": \"x\", \"messages\": [{\"role\": \"assistant\", \"content\": \"a\"}, "
                 "{\"role\": \"user\", \"content\": \"b\"}]}]",
                 TraceFormat::kOpenAi);
  EXPECT_EQ(d.path, "[0].messages[0].role");
}

// Conversation files as traces: the turns of a conversation share the templated history.
TEST(TraceRead, ConversationFileAsTrace) {
  const std::string path = temp_file(
      "conv.json", R"([{"id": "c", "messages": [{"role": "user", "content": "Hello there"},
       {"role": "assistant", "content": "Hi"}, {"role": "user", "content": "Tell me more"},
       {"role": "assistant", "content": "Sure"}]}])");
  const Trace t = read_trace(path);
  EXPECT_EQ(t.format, "openai");
  EXPECT_EQ(t.hash_block_tokens, 16);
  ASSERT_EQ(t.requests.size(), 2u);
  EXPECT_EQ(t.requests[1].parent, 0);
  EXPECT_EQ(t.requests[1].turn, 2);
  EXPECT_GT(t.requests[1].input_length, t.requests[0].input_length + t.requests[0].output_length);
  // Turn 1's full blocks are the first blocks of turn 2.
  const std::size_t full = static_cast<std::size_t>(t.requests[0].input_length / 16);
  for (std::size_t b = 0; b < full; ++b)
    EXPECT_EQ(t.requests[0].hash_ids[b], t.requests[1].hash_ids[b]);
}

}  // namespace
}  // namespace kvsim::workload

namespace kvsim::workload {
namespace {

// A JSON number past a double (1e400) is the JSON library's out_of_range, not a parse error:
// still bad input, with the file and line (found by fuzzing: it escaped as an exception).
TEST(TraceRead, JsonNumberOverflowIsBadInput) {
  const std::string path = testing::TempDir() + "overflow.jsonl";
  {
    std::ofstream out(path);
    out << R"({"timestamp": 1e400, "input_length": 10, "output_length": 5, "hash_ids": [1]})" << "\n";
  }
  try {
    read_trace(path);
    ADD_FAILURE() << "1e400 was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().front().line, 1);
    EXPECT_NE(std::string(e.what()).find("invalid JSON: number overflow"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvsim::workload
