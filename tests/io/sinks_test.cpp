#include "sim/io/sinks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <locale>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace kvsim::io {
namespace {

// Samples i = 1..n with every metric equal to i (output_num_chunks is then i - 1), starting
// one second apart and lasting i ms.
std::vector<RequestRecord> ramp(int n) {
  std::vector<RequestRecord> out;
  for (int i = 1; i <= n; ++i) {
    RequestRecord r;
    r.request_id = static_cast<std::uint64_t>(i);
    r.ttft_ms = i;
    r.tpot_ms = i;
    r.latency_ms = i;
    r.start_time_ms = 1000.0 * (i - 1);
    r.input_num_turns = i;
    r.input_num_tokens = i;
    r.output_num_tokens = i;
    r.conversation_id = "conv-" + std::to_string(i);
    r.client_id = i % 2;
    out.push_back(r);
  }
  return out;
}

RunInfo info_for_tests() {
  RunInfo info;
  info.scenario_name = "rtx4090-llama8b";
  info.kvsim_version = "9.9.9";
  info.seed = 42;
  info.header_lines = {"model=meta-llama/Llama-3.1-8B-Instruct", "num_clients=2"};
  info.gpu_kv_cache_tokens = 31232;
  info.num_gpu_blocks = 1952;
  info.max_concurrency = 3.8125;
  info.max_model_len = 8192;
  info.prefix_cache_queries = 200;
  info.prefix_cache_hits = 50;
  info.preemptions = 3;
  info.failed_requests = 1;
  info.engine_steps = 1234;
  info.simulated_seconds = 9.5;
  return info;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream is(text);
  for (std::string l; std::getline(is, l);) out.push_back(l);
  return out;
}

std::string table_of(const std::vector<RequestRecord>& records, double warmup = 0) {
  const RunInfo info = info_for_tests();
  std::ostringstream os;
  write_table(os, summarize(records, info, warmup), info);
  return os.str();
}

// The table for 1..10, worked by hand column by column as pandas prints it (2 decimals, a
// sign space, trailing zeros cut while the whole column ends in 0, right-aligned, one space
// between columns, the index left-aligned to len("output_num_tokens") = 17):
//   count 10.00 -> " 10.0"; mean 5.50/4.50 -> " 5.5"; std 3.03; min 1.00/0.00 -> " 1.0";
//   25% 3.25 (chunks 2.25); 50% 5.5 (4.5); 75% 7.75 (6.75); 90% 9.10/8.10 -> " 9.1";
//   max 10.00/9.00 -> " 10.0" / "  9.0".
TEST(Table, DescribeBlockMatchesPandasLayout) {
  const auto lines = lines_of(table_of(ramp(10)));
  const std::string header = "                  count mean   std  min   25%  50%   75%  90%   max";
  const std::string ttft = "ttft_ms            10.0  5.5  3.03  1.0  3.25  5.5  7.75  9.1  10.0";
  const std::string chunks = "output_num_chunks  10.0  4.5  3.03  0.0  2.25  4.5  6.75  8.1   9.0";
  std::size_t at = 0;
  while (at < lines.size() && lines[at] != header) ++at;
  ASSERT_LT(at + 7, lines.size()) << "no table header";
  EXPECT_EQ(lines[at + 1], ttft);
  EXPECT_EQ(lines[at + 2].substr(0, 18), "tpot_ms           ");
  EXPECT_EQ(lines[at + 3].substr(0, 18), "latency_ms        ");
  EXPECT_EQ(lines[at + 4].substr(0, 18), "input_num_turns   ");
  EXPECT_EQ(lines[at + 5].substr(0, 18), "input_num_tokens  ");
  EXPECT_EQ(lines[at + 6].substr(0, 18), "output_num_tokens ");
  EXPECT_EQ(lines[at + 7], chunks);
  EXPECT_EQ(lines[at + 8], std::string(100, '-'));
}

// vLLM's benchmarks/multi_turn/README.md shows the table pandas printed for a real run.
// Fed the same statistics, write_table must print the same lines, byte for byte.
TEST(Table, ReproducesTheBenchmarkReadmeSample) {
  Summary s;
  s.num_samples = 166;
  s.num_requests = 166;
  s.runtime_sec = 215.810;
  s.requests_per_sec = 0.769;
  s.table_percentiles = {0.25, 0.5, 0.75, 0.9, 0.99};
  // mean, std, min, 25%, 50%, 75%, 90%, 99%, max as the README prints them.
  const auto set = [](Describe& d, std::vector<double> v) {
    d.count = 166;
    d.mean = v[0];
    d.std = v[1];
    d.min = v[2];
    d.percentiles = {{0.25, v[3]}, {0.5, v[4]}, {0.75, v[5]}, {0.9, v[6]}, {0.99, v[7]}};
    d.max = v[8];
  };
  set(s.ttft_ms, {78.22, 67.63, 45.91, 59.94, 62.26, 64.43, 69.66, 353.18, 567.54});
  set(s.tpot_ms, {25.37, 0.57, 24.40, 25.07, 25.31, 25.50, 25.84, 27.50, 28.05});
  set(s.latency_ms,
      {2591.07, 326.90, 1998.53, 2341.62, 2573.01, 2860.10, 3003.50, 3268.46, 3862.94});
  set(s.input_num_turns, {7.43, 4.57, 1.00, 3.00, 7.00, 11.00, 13.00, 17.00, 17.00});
  set(s.input_num_tokens,
      {2006.20, 893.56, 522.00, 1247.75, 2019.00, 2718.00, 3233.00, 3736.45, 3899.00});
  set(s.output_num_tokens, {100.01, 11.80, 80.00, 91.00, 99.00, 109.75, 116.00, 120.00, 120.00});
  set(s.output_num_chunks, {99.01, 11.80, 79.00, 90.00, 98.00, 108.75, 115.00, 119.00, 119.00});
  std::ostringstream os;
  write_table(os, s, RunInfo{});
  const std::string readme =
      "--------------------------------------------------------------------------------------------"
      "--------\n"
      "Statistics summary:\n"
      "runtime_sec = 215.810\n"
      "requests_per_sec = 0.769\n"
      "--------------------------------------------------------------------------------------------"
      "--------\n"
      "                   count     mean     std      min      25%      50%      75%      90%      "
      "99%      max\n"
      "ttft_ms            166.0    78.22   67.63    45.91    59.94    62.26    64.43    69.66   "
      "353.18   567.54\n"
      "tpot_ms            166.0    25.37    0.57    24.40    25.07    25.31    25.50    25.84    "
      "27.50    28.05\n"
      "latency_ms         166.0  2591.07  326.90  1998.53  2341.62  2573.01  2860.10  3003.50  "
      "3268.46  3862.94\n"
      "input_num_turns    166.0     7.43    4.57     1.00     3.00     7.00    11.00    13.00    "
      "17.00    17.00\n"
      "input_num_tokens   166.0  2006.20  893.56   522.00  1247.75  2019.00  2718.00  3233.00  "
      "3736.45  3899.00\n"
      "output_num_tokens  166.0   100.01   11.80    80.00    91.00    99.00   109.75   116.00   "
      "120.00   120.00\n"
      "output_num_chunks  166.0    99.01   11.80    79.00    90.00    98.00   108.75   115.00   "
      "119.00   119.00\n"
      "--------------------------------------------------------------------------------------------"
      "--------\n";
  EXPECT_NE(os.str().find(readme), std::string::npos) << os.str();
}

// The benchmark's blocks in order: parameters, the runtime lines, the table; then ours.
TEST(Table, HeaderRuntimeAndExtraLines) {
  // 1..10: runtime = (9000 + 10 - 0) / 1000 = 9.010 s; 10 / 9.01 = 1.10988 -> "1.110";
  // output tokens 55 / 9.01 = 6.10433 -> "6.104"; hit rate 50 / 200 = 0.250.
  const auto lines = lines_of(table_of(ramp(10)));
  const std::vector<std::string> head{std::string(100, '-'),
                                      "Parameters:",
                                      "model=meta-llama/Llama-3.1-8B-Instruct",
                                      "num_clients=2",
                                      std::string(100, '-'),
                                      "Statistics summary:",
                                      "runtime_sec = 9.010",
                                      "requests_per_sec = 1.110",
                                      std::string(100, '-')};
  ASSERT_GE(lines.size(), head.size());
  for (std::size_t i = 0; i < head.size(); ++i) EXPECT_EQ(lines[i], head[i]) << i;
  const std::string text = table_of(ramp(10));
  EXPECT_NE(text.find("\noutput_tokens_per_sec = 6.104\n"), std::string::npos);
  EXPECT_NE(text.find("\nprefix_cache_hit_rate = 0.250\n"), std::string::npos);
  EXPECT_NE(text.find("\npreemptions = 3\n"), std::string::npos);
  EXPECT_NE(text.find("\nfailed_requests = 1\n"), std::string::npos);
  EXPECT_NE(text.find("\nGPU KV cache size: 31,232 tokens\n"), std::string::npos);
  EXPECT_NE(text.find("\nMaximum concurrency for 8,192 tokens per request: 3.81x\n"),
            std::string::npos);
  EXPECT_NE(text.find("\nseed = 42\n"), std::string::npos);
}

// With a warmup percentage the title says so, as f"{percent:.0%}" prints it.
TEST(Table, WarmupTitle) {
  EXPECT_NE(table_of(ramp(10), 20.0).find("\nStatistics summary (assuming 20% warmup samples):\n"),
            std::string::npos);
}

// The 99% column appears at 100 samples, not at 99; 99.9% needs 1000.
TEST(Table, NinetyNinthColumnOnlyFromHundredSamples) {
  const std::string small = table_of(ramp(99));
  EXPECT_NE(small.find(" 90%"), std::string::npos);
  EXPECT_EQ(small.find("99%"), std::string::npos);
  const std::string big = table_of(ramp(100));
  EXPECT_NE(big.find("90%"), std::string::npos);
  EXPECT_NE(big.find("99%"), std::string::npos);
  EXPECT_LT(big.find("90%"), big.find("99%"));
  EXPECT_LT(big.find("99%"), big.find("max"));
  EXPECT_EQ(big.find("99.9%"), std::string::npos);
}

TEST(Table, NoSamples) {
  const std::string text = table_of({});
  EXPECT_NE(text.find("\nNo samples to process\n"), std::string::npos);
  EXPECT_EQ(text.find("count"), std::string::npos);
}

// The summary JSON parses, holds the values computed by hand, keeps its key order and
// writes undefined numbers (std of one sample) as null.
TEST(SummaryJson, ParsesBackWithTheValues) {
  const RunInfo info = info_for_tests();
  std::ostringstream os;
  write_summary_json(os, summarize(ramp(10), info), info);
  const auto j = nlohmann::ordered_json::parse(os.str());
  EXPECT_EQ(j.at("kvsim_version"), "9.9.9");
  EXPECT_EQ(j.at("scenario"), "rtx4090-llama8b");
  EXPECT_EQ(j.at("seed"), 42);
  EXPECT_EQ(j.at("num_requests"), 10);
  EXPECT_DOUBLE_EQ(j.at("runtime_sec").get<double>(), 9.01);
  EXPECT_DOUBLE_EQ(j.at("requests_per_sec").get<double>(), 10 / 9.01);
  EXPECT_DOUBLE_EQ(j.at("output_tokens_per_sec").get<double>(), 55 / 9.01);
  EXPECT_TRUE(j.at("warmup_runtime_sec").is_null());
  const auto& ttft = j.at("ttft_ms");
  EXPECT_EQ(ttft.at("count"), 10);
  EXPECT_DOUBLE_EQ(ttft.at("mean").get<double>(), 5.5);
  EXPECT_NEAR(ttft.at("std").get<double>(), 3.0276503540974917, 1e-15);
  EXPECT_DOUBLE_EQ(ttft.at("min").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(ttft.at("p25").get<double>(), 3.25);
  EXPECT_DOUBLE_EQ(ttft.at("p50").get<double>(), 5.5);
  EXPECT_DOUBLE_EQ(ttft.at("p75").get<double>(), 7.75);
  EXPECT_NEAR(ttft.at("p90").get<double>(), 9.1, 1e-12);
  EXPECT_NEAR(ttft.at("p99").get<double>(), 9.91, 1e-12);  // rank 8.91: 9 + 0.91
  EXPECT_DOUBLE_EQ(ttft.at("max").get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(j.at("output_num_chunks").at("mean").get<double>(), 4.5);
  for (const char* key :
       {"tpot_ms", "latency_ms", "input_num_turns", "input_num_tokens", "output_num_tokens"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(j.at("prefix_cache_hit_rate").get<double>(), 0.25);
  EXPECT_EQ(j.at("preemptions"), 3);
  EXPECT_EQ(j.at("failed_requests"), 1);
  EXPECT_EQ(j.at("gpu_kv_cache_tokens"), 31232);
  EXPECT_EQ(j.at("num_gpu_blocks"), 1952);

  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  ASSERT_GE(keys.size(), 10u);
  EXPECT_EQ(keys[0], "schema_version");
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(keys[1], "kvsim_version");
  EXPECT_EQ(keys[2], "scenario");
  EXPECT_EQ(keys[3], "seed");

  std::ostringstream one;
  write_summary_json(one, summarize(ramp(1), info), info);
  EXPECT_TRUE(nlohmann::json::parse(one.str()).at("ttft_ms").at("std").is_null());
}

// A std::ostream imbued with a locale that groups digits and uses a decimal comma must not
// change a byte: every number is formatted without the locale.
struct GermanPunct : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};

TEST(Sinks, SameBytesTwiceAndWhateverTheLocale) {
  const RunInfo info = info_for_tests();
  const auto records = ramp(150);
  const Summary s = summarize(records, info, 10.0);
  const auto all = [&](std::ostream& os) {
    write_table(os, s, info);
    write_summary_json(os, s, info);
    write_summary_csv(os, s, info);
    write_requests_json(os, records);
    TimeseriesCsvWriter ts(os);
    StepRecord step;
    step.time_s = 1234.5;
    step.batch_tokens = 20480;
    ts.write(step);
  };
  std::ostringstream a;
  std::ostringstream b;
  std::ostringstream c;
  c.imbue(std::locale(std::locale::classic(), new GermanPunct));
  all(a);
  all(b);
  all(c);
  EXPECT_EQ(a.str(), b.str());
  EXPECT_EQ(a.str(), c.str());
}

// One header row and one value row with the same number of fields; names that need it are
// quoted.
TEST(SummaryCsv, HeaderAndOneRow) {
  RunInfo info = info_for_tests();
  info.scenario_name = "a,b";
  std::ostringstream os;
  write_summary_csv(os, summarize(ramp(10), info), info);
  const auto lines = lines_of(os.str());
  ASSERT_EQ(lines.size(), 2u);
  const auto split = [](const std::string& l) {
    std::vector<std::string> out{""};
    bool quoted = false;
    for (const char c : l) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) {
        out.emplace_back();
      } else {
        out.back().push_back(c);
      }
    }
    return out;
  };
  const auto names = split(lines[0]);
  const auto values = split(lines[1]);
  ASSERT_EQ(names.size(), values.size());
  const auto value_of = [&](const std::string& name) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return values[i];
    }
    return std::string("<missing>");
  };
  EXPECT_EQ(value_of("scenario"), "\"a,b\"");
  EXPECT_EQ(value_of("num_requests"), "10");
  EXPECT_EQ(value_of("runtime_sec"), "9.01");
  EXPECT_EQ(value_of("ttft_ms_p50"), "5.5");
  EXPECT_EQ(value_of("ttft_ms_count"), "10");
  EXPECT_EQ(value_of("warmup_runtime_sec"), "");
  EXPECT_EQ(value_of("gpu_kv_cache_tokens"), "31232");
}

// The per-request array parses back, one object per record in order, with the benchmark's
// keys first and ours after.
TEST(RequestsJson, ParsesBackWithTheBenchmarkKeys) {
  auto records = ramp(3);
  records[1].counted = false;
  records[2].conversation_id = "quote\"d";
  records[2].cached_tokens = 16;
  records[2].prompt_tokens = 40;
  records[2].server = 1;
  records[2].preemptions = 2;
  std::ostringstream os;
  write_requests_json(os, records);
  const auto j = nlohmann::ordered_json::parse(os.str());
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 3u);
  const std::vector<std::string> expected_keys{"ttft_ms",
                                               "tpot_ms",
                                               "latency_ms",
                                               "start_time_ms",
                                               "input_num_turns",
                                               "input_num_tokens",
                                               "output_num_tokens",
                                               "output_num_chunks",
                                               "output_num_first_chunk_tokens",
                                               "conversation_id",
                                               "client_id",
                                               "request_id",
                                               "prompt_tokens",
                                               "cached_tokens",
                                               "preemptions",
                                               "server",
                                               "counted"};
  std::vector<std::string> keys;
  for (const auto& [k, v] : j[0].items()) keys.push_back(k);
  EXPECT_EQ(keys, expected_keys);
  EXPECT_DOUBLE_EQ(j[2].at("ttft_ms").get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(j[2].at("start_time_ms").get<double>(), 2000.0);
  EXPECT_EQ(j[2].at("output_num_tokens"), 3);
  EXPECT_EQ(j[2].at("output_num_chunks"), 2);
  EXPECT_EQ(j[2].at("output_num_first_chunk_tokens"), 1);
  EXPECT_EQ(j[2].at("conversation_id"), "quote\"d");
  EXPECT_EQ(j[2].at("client_id"), 1);
  EXPECT_EQ(j[2].at("request_id"), 3);
  EXPECT_EQ(j[2].at("prompt_tokens"), 40);
  EXPECT_EQ(j[2].at("cached_tokens"), 16);
  EXPECT_EQ(j[2].at("preemptions"), 2);
  EXPECT_EQ(j[2].at("server"), 1);
  EXPECT_EQ(j[1].at("counted"), false);
  EXPECT_EQ(j[0].at("counted"), true);

  std::ostringstream empty;
  write_requests_json(empty, {});
  EXPECT_TRUE(nlohmann::json::parse(empty.str()).empty());
}

TEST(TimeseriesCsv, HeaderAndRows) {
  std::ostringstream os;
  TimeseriesCsvWriter w(os);
  StepRecord a;
  a.time_s = 1.5;
  a.server = 1;
  a.duration_ms = 12.25;
  a.running = 3;
  a.waiting = 2;
  a.batch_tokens = 2048;
  a.prefill_requests = 1;
  a.decode_requests = 2;
  a.kv_usage = 0.5;
  a.preemptions = 1;
  w.write(a);
  w.write(StepRecord{});
  EXPECT_EQ(os.str(),
            "time_s,server,duration_ms,running,waiting,batch_tokens,prefill_requests,"
            "decode_requests,kv_usage,preemptions\n"
            "1.5,1,12.25,3,2,2048,1,2,0.5,1\n"
            "0,0,0,0,0,0,0,0,0,0\n");
}

}  // namespace
}  // namespace kvsim::io
