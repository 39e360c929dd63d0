#include "validation/src/replay_file.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/core/json_error.hpp"

namespace kvsim::validation {
namespace {

using Json = nlohmann::ordered_json;

Json to_json(const ReplayRecord& r) {
  const io::RequestRecord& q = r.request;
  Json j;
  j["ttft_ms"] = q.ttft_ms;
  j["tpot_ms"] = q.tpot_ms;
  j["latency_ms"] = q.latency_ms;
  j["start_time_ms"] = q.start_time_ms;
  j["input_num_turns"] = q.input_num_turns;
  j["input_num_tokens"] = q.input_num_tokens;
  j["output_num_tokens"] = q.output_num_tokens;
  j["output_num_chunks"] = r.content_chunks > 0 ? r.content_chunks - 1 : 0;
  j["output_num_first_chunk_tokens"] = r.content_chunks > 0 ? 1 : 0;
  j["conversation_id"] = q.conversation_id;
  j["client_id"] = q.client_id;
  j["request_id"] = q.request_id;
  j["prompt_tokens"] = q.prompt_tokens;
  j["cached_tokens"] = q.cached_tokens;
  j["preemptions"] = q.preemptions;
  j["server"] = q.server;
  j["counted"] = q.counted;
  j["error"] = r.error;
  j["submit_index"] = r.submit_index;
  j["conversation_index"] = r.conversation_index;
  j["expected_output_tokens"] = r.expected_output_tokens;
  j["last_user_tokens"] = r.last_user_tokens;
  j["first_token_ms"] = r.first_token_ms;
  j["last_token_ms"] = r.last_token_ms;
  j["end_ms"] = r.end_ms;
  j["usage_reported"] = r.usage_reported;
  j["usage_prompt_tokens"] = r.usage_prompt_tokens;
  j["usage_completion_tokens"] = r.usage_completion_tokens;
  j["usage_cached_tokens"] = r.usage_cached_tokens;
  j["content_chunks"] = r.content_chunks;
  j["attempts"] = r.attempts;
  j["http_status"] = r.http_status;
  return j;
}

Json metrics_json(const MetricValues& m) {
  Json j = Json::object();
  for (const auto& [k, v] : m) {
    if (std::isfinite(v)) j[k] = v;
  }
  return j;
}

struct Reader {
  const std::string& file;
  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    throw InputError(Diagnostic{file, 0, 0, path, msg});
  }
  template <class T>
  T get(const Json& obj, const char* key, const std::string& where, T fallback,
        bool required = false) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
      if (required) fail(where + "." + key, "missing");
      return fallback;
    }
    try {
      return it->get<T>();
    } catch (const nlohmann::json::exception&) {
      fail(where + "." + key, "has the wrong type");
    }
  }
};

}  // namespace

std::int64_t ReplayRun::failed() const {
  std::int64_t n = 0;
  for (const auto& r : records) n += r.error.empty() ? 0 : 1;
  return n;
}

std::string record_json(const ReplayRecord& r) { return to_json(r).dump(); }

std::string replay_json(const ReplayRun& run) {
  Json j;
  j["format"] = "kvsim-replay";
  j["format_version"] = 1;
  j["kvsim_version"] = run.kvsim_version;
  j["scenario_file"] = run.scenario_file;
  j["scenario_name"] = run.scenario_name;
  j["seed"] = run.seed;
  j["workload_kind"] = run.workload_kind;
  j["url"] = run.url;
  j["model"] = run.model;
  j["tokenizer"] = run.tokenizer;
  j["interrupted"] = run.interrupted;
  j["stop_reason"] = run.stop_reason;
  if (!run.run_key.empty()) j["run_key"] = run.run_key;
  j["duration_s"] = run.duration_s;
  j["requests_sent"] = run.records.size();
  j["requests_failed"] = run.failed();
  j["header_lines"] = run.header_lines;
  j["metrics_before"] = metrics_json(run.metrics_before);
  j["metrics_after"] = metrics_json(run.metrics_after);
  // One request per line, so that the file reads like the --requests-out list.
  std::ostringstream os;
  std::string head = j.dump(2);
  head.pop_back();  // the closing brace
  os << head << ",\n  \"requests\": [";
  for (std::size_t i = 0; i < run.records.size(); ++i) {
    os << (i == 0 ? "\n    " : ",\n    ") << record_json(run.records[i]);
  }
  os << (run.records.empty() ? "]\n}\n" : "\n  ]\n}\n");
  return os.str();
}

ReplayRun read_replay_json(const std::string& text, const std::string& file_name) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file_name, 0, 0, "not valid JSON: " + json_error_text(e));
  }
  const Reader rd{file_name};
  if (!j.is_object() || j.value("format", std::string()) != "kvsim-replay") {
    rd.fail("format", "not a kvsim replay file (written by kvsim replay)");
  }
  ReplayRun run;
  run.kvsim_version = rd.get<std::string>(j, "kvsim_version", "", "");
  run.scenario_file = rd.get<std::string>(j, "scenario_file", "", "");
  run.scenario_name = rd.get<std::string>(j, "scenario_name", "", "");
  run.seed = rd.get<std::uint64_t>(j, "seed", "", 0);
  run.workload_kind = rd.get<std::string>(j, "workload_kind", "", "multi_turn");
  run.url = rd.get<std::string>(j, "url", "", "");
  run.model = rd.get<std::string>(j, "model", "", "");
  run.tokenizer = rd.get<std::string>(j, "tokenizer", "", "");
  run.interrupted = rd.get<bool>(j, "interrupted", "", false);
  run.stop_reason = rd.get<std::string>(j, "stop_reason", "", "");
  run.run_key = rd.get<std::string>(j, "run_key", "", "");
  run.duration_s = rd.get<double>(j, "duration_s", "", 0);
  run.header_lines = rd.get<std::vector<std::string>>(j, "header_lines", "", {});
  for (const char* key : {"metrics_before", "metrics_after"}) {
    MetricValues& m = std::string(key) == "metrics_before" ? run.metrics_before : run.metrics_after;
    if (const auto it = j.find(key); it != j.end() && it->is_object()) {
      for (const auto& [k, v] : it->items()) {
        if (v.is_number()) m[k] = v.get<double>();
      }
    }
  }
  const auto reqs = j.find("requests");
  if (reqs == j.end() || !reqs->is_array()) rd.fail("requests", "missing or not a list");
  for (std::size_t i = 0; i < reqs->size(); ++i) {
    const Json& o = (*reqs)[i];
    const std::string where = "requests[" + std::to_string(i) + "]";
    if (!o.is_object()) rd.fail(where, "not an object");
    ReplayRecord r;
    io::RequestRecord& q = r.request;
    q.ttft_ms = rd.get<double>(o, "ttft_ms", where, 0, true);
    q.tpot_ms = rd.get<double>(o, "tpot_ms", where, 0, true);
    q.latency_ms = rd.get<double>(o, "latency_ms", where, 0, true);
    q.start_time_ms = rd.get<double>(o, "start_time_ms", where, 0, true);
    q.input_num_turns = rd.get<int>(o, "input_num_turns", where, 0);
    q.input_num_tokens = rd.get<std::int64_t>(o, "input_num_tokens", where, 0);
    q.output_num_tokens = rd.get<std::int64_t>(o, "output_num_tokens", where, 0);
    q.conversation_id = rd.get<std::string>(o, "conversation_id", where, "");
    q.client_id = rd.get<int>(o, "client_id", where, -1);
    q.request_id = rd.get<std::uint64_t>(o, "request_id", where, i);
    q.prompt_tokens = rd.get<std::int64_t>(o, "prompt_tokens", where, 0);
    q.cached_tokens = rd.get<std::int64_t>(o, "cached_tokens", where, 0);
    q.counted = rd.get<bool>(o, "counted", where, true);
    r.error = rd.get<std::string>(o, "error", where, "");
    r.submit_index = rd.get<std::int64_t>(o, "submit_index", where, static_cast<std::int64_t>(i));
    r.conversation_index = rd.get<std::int64_t>(o, "conversation_index", where, -1);
    r.expected_output_tokens = rd.get<std::int64_t>(o, "expected_output_tokens", where, 0);
    r.last_user_tokens = rd.get<std::int64_t>(o, "last_user_tokens", where, 0);
    r.first_token_ms = rd.get<double>(o, "first_token_ms", where, -1);
    r.last_token_ms = rd.get<double>(o, "last_token_ms", where, -1);
    r.end_ms = rd.get<double>(o, "end_ms", where, 0);
    r.usage_reported = rd.get<bool>(o, "usage_reported", where, false);
    r.usage_prompt_tokens = rd.get<std::int64_t>(o, "usage_prompt_tokens", where, -1);
    r.usage_completion_tokens = rd.get<std::int64_t>(o, "usage_completion_tokens", where, -1);
    r.usage_cached_tokens = rd.get<std::int64_t>(o, "usage_cached_tokens", where, -1);
    r.content_chunks = rd.get<std::int64_t>(o, "content_chunks", where, 0);
    r.attempts = rd.get<int>(o, "attempts", where, 1);
    r.http_status = rd.get<long>(o, "http_status", where, 0);
    run.records.push_back(std::move(r));
  }
  return run;
}

ReplayRun load_replay(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "cannot read the replay file");
  std::ostringstream os;
  os << in.rdbuf();
  return read_replay_json(os.str(), path);
}

}  // namespace kvsim::validation
