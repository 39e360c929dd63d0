#include "validation/src/replay.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <queue>
#include <thread>

#include "sim/core/error.hpp"
#include "sim/core/version.hpp"
#include "sim/workload/make_driver.hpp"
#include "sim/workload/multi_turn_driver.hpp"
#include "validation/src/text_maker.hpp"

namespace kvsim::validation {
namespace {

using nlohmann::json;

struct Timer {
  SimTime at = 0;
  std::uint64_t seq = 0;
  std::int64_t tag = 0;
  bool operator>(const Timer& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

struct MessageText {
  bool set = false;
  std::string text;
  std::int64_t tokens = 0;
};

struct Pending {
  std::uint64_t submit_index = 0;
  workload::RequestSpec spec;  // prompt dropped (not needed after sending)
  std::int64_t content_tokens = 0;
  std::int64_t last_user_tokens = 0;
};

std::string scenario_dir(const scenario::Scenario& sc) {
  const std::string dir = sc.source_file.empty()
                              ? std::string()
                              : std::filesystem::path(sc.source_file).parent_path().string();
  return dir.empty() ? std::string(".") : dir;
}

class ReplayContext final : public workload::WorkloadContext {
 public:
  ReplayContext(const ReplayOptions& opts, workload::Driver& driver, TextMaker& maker,
                const WallClock& clock, std::ofstream* journal)
      : opts_(opts),
        driver_(driver),
        multi_turn_(dynamic_cast<workload::MultiTurnDriver*>(&driver)),
        maker_(maker),
        clock_(clock),
        client_(opts.url, opts.timeouts, opts.retry, clock),
        journal_(journal) {}

  SimTime now() const override { return clock_.now(); }
  void wake_at(SimTime t, std::int64_t tag) override { timers_.push(Timer{t, timer_seq_++, tag}); }
  std::uint64_t submit(workload::RequestSpec spec) override;

  // Runs until the driver is done or the run is stopped; returns the stop reason ("" = none).
  std::string run();
  std::vector<ReplayRecord>& records() { return records_; }

 private:
  MessageText& message(std::int64_t conv, std::size_t index);
  void handle(const StreamOutcome& o, bool report);
  void progress(const std::string& line) const {
    if (opts_.progress) opts_.progress(line);
  }

  const ReplayOptions& opts_;
  workload::Driver& driver_;
  workload::MultiTurnDriver* multi_turn_;
  TextMaker& maker_;
  const WallClock& clock_;
  StreamingClient client_;
  std::ofstream* journal_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::uint64_t timer_seq_ = 0;
  std::uint64_t next_submit_ = 0;
  std::map<std::uint64_t, Pending> pending_;                // transfer id -> request
  std::map<std::int64_t, std::vector<MessageText>> texts_;  // conversation -> its messages as sent
  std::vector<ReplayRecord> records_;
};

MessageText& ReplayContext::message(std::int64_t conv, std::size_t index) {
  auto& list = texts_[conv];
  if (list.size() <= index) list.resize(index + 1);
  MessageText& m = list[index];
  if (!m.set) {
    // A user message (or, should an answer be missing, the dataset's answer) made to its count.
    const auto& source =
        multi_turn_->conversations()[static_cast<std::size_t>(conv)].messages[index];
    m.text = maker_.message_text(source);
    const std::int64_t counted = maker_.tokenizer().count(m.text);
    m.tokens = counted >= 0 ? counted : source.content_tokens;
    m.set = true;
  }
  return m;
}

std::uint64_t ReplayContext::submit(workload::RequestSpec spec) {
  Pending p;
  p.submit_index = next_submit_++;
  json messages = json::array();
  if (spec.conversation_id >= 0 && multi_turn_ != nullptr) {
    const auto& conv = multi_turn_->conversations()[static_cast<std::size_t>(spec.conversation_id)];
    const auto used = static_cast<std::size_t>(spec.input_num_turns);
    for (std::size_t i = 0; i < used; ++i) {
      const MessageText& m = message(spec.conversation_id, i);
      const bool user = conv.messages[i].role == workload::Message::Role::kUser;
      messages.push_back({{"role", user ? "user" : "assistant"}, {"content", m.text}});
      p.content_tokens += m.tokens;
      if (user) p.last_user_tokens = m.tokens;
    }
  } else {
    workload::Message m;
    m.content = spec.prompt;
    const std::string text = maker_.message_text(m);
    const std::int64_t counted = maker_.tokenizer().count(text);
    p.content_tokens = counted >= 0 ? counted : total_tokens(spec.prompt);
    p.last_user_tokens = p.content_tokens;
    messages.push_back({{"role", "user"}, {"content", text}});
  }
  const json body{{"model", opts_.model},
                  {"messages", std::move(messages)},
                  {"seed", 0},
                  {"temperature", 0.0},
                  {"stream", true},
                  {"stream_options", {{"include_usage", true}}},
                  {"min_tokens", spec.output_tokens},
                  {"max_tokens", spec.output_tokens}};
  spec.prompt.clear();
  p.spec = std::move(spec);
  const std::uint64_t id = p.submit_index;
  const std::uint64_t transfer = client_.start("/v1/chat/completions", body.dump());
  pending_.emplace(transfer, std::move(p));
  return id;
}

void ReplayContext::handle(const StreamOutcome& o, bool report) {
  const auto it = pending_.find(o.id);
  KVSIM_ASSERT(it != pending_.end(), "an unknown transfer finished");
  const Pending p = std::move(it->second);
  pending_.erase(it);

  ReplayRecord r;
  io::RequestRecord& q = r.request;
  const ChatResult& chat = o.chat;
  r.error = o.error;
  r.submit_index = static_cast<std::int64_t>(p.submit_index);
  r.conversation_index = p.spec.conversation_id;
  r.expected_output_tokens = p.spec.output_tokens;
  r.last_user_tokens = p.last_user_tokens;
  r.first_token_ms = chat.first_token >= 0 ? to_ms(chat.first_token) : -1;
  r.last_token_ms = chat.last_token >= 0 ? to_ms(chat.last_token) : -1;
  r.end_ms = to_ms(o.finished);
  r.usage_reported = chat.usage_reported;
  r.usage_prompt_tokens = chat.prompt_tokens;
  r.usage_completion_tokens = chat.completion_tokens;
  r.usage_cached_tokens = chat.cached_tokens;
  r.content_chunks = chat.content_chunks;
  r.attempts = o.attempts;
  r.http_status = o.http_status;

  q.start_time_ms = to_ms(o.first_sent);
  q.input_num_turns = p.spec.input_num_turns;
  q.input_num_tokens = p.content_tokens;
  q.conversation_id = p.spec.conversation_name;
  q.client_id = p.spec.client_id;
  q.request_id = p.submit_index;
  q.counted = p.spec.counted;
  q.prompt_tokens = std::max<std::int64_t>(chat.prompt_tokens, 0);
  q.cached_tokens = std::max<std::int64_t>(chat.cached_tokens, 0);
  const std::int64_t out_tokens =
      chat.completion_tokens >= 0 ? chat.completion_tokens : chat.content_chunks;
  q.output_num_tokens = out_tokens;
  if (chat.first_token >= 0) {
    q.ttft_ms = to_ms(chat.first_token - o.sent);
    q.latency_ms = to_ms(o.finished - o.sent);
    q.tpot_ms =
        out_tokens > 1 ? (q.latency_ms - q.ttft_ms) / static_cast<double>(out_tokens - 1) : 0.0;
  } else {
    q.latency_ms = to_ms(o.finished - o.sent);
  }
  if (o.ok && multi_turn_ != nullptr && p.spec.conversation_id >= 0) {
    MessageText answer;
    answer.set = true;
    answer.text = chat.content;
    answer.tokens = out_tokens;
    auto& list = texts_[p.spec.conversation_id];
    const auto index = static_cast<std::size_t>(p.spec.input_num_turns);
    if (list.size() <= index) list.resize(index + 1);
    list[index] = std::move(answer);
  }
  if (journal_ != nullptr) {
    *journal_ << record_json(r) << '\n';
    journal_->flush();
  }
  if (opts_.on_record) opts_.on_record(r);
  if (!o.ok) {
    progress("request " + std::to_string(p.submit_index) + " (" + p.spec.conversation_name +
             ", client " + std::to_string(p.spec.client_id) + ", " +
             std::to_string(p.spec.input_num_turns) + " messages) failed: " + o.error);
  } else if ((records_.size() + 1) % 10 == 0) {
    progress(std::to_string(records_.size() + 1) + " requests done at " +
             std::to_string(static_cast<int>(to_seconds(o.finished))) + " s");
  }
  records_.push_back(std::move(r));
  if (!report) return;
  workload::Completion c;
  c.request_id = p.submit_index;
  c.ok = o.ok;
  c.sent = o.sent;
  c.first_token = chat.first_token;
  c.finished = o.finished;
  c.output_tokens = o.ok ? out_tokens : 0;
  driver_.on_complete(c, *this);
}

std::string ReplayContext::run() {
  driver_.start(*this);
  while (true) {
    std::string stop;
    if (opts_.stop != nullptr && opts_.stop->load()) stop = "interrupted";
    if (opts_.max_duration_s > 0 && to_seconds(clock_.now()) > opts_.max_duration_s)
      stop = "time limit reached";
    if (!stop.empty()) {
      for (const StreamOutcome& o : client_.abort_all(stop)) handle(o, false);
      return stop;
    }
    if (client_.active() == 0 && timers_.empty()) return {};
    SimTime wait = 100 * kMillisecond;
    if (!timers_.empty()) wait = std::clamp<SimTime>(timers_.top().at - clock_.now(), 0, wait);
    if (client_.active() > 0) {
      for (const StreamOutcome& o : client_.poll(wait)) handle(o, true);
    } else if (wait > 0) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
    }
    while (!timers_.empty() && timers_.top().at <= clock_.now()) {
      const Timer t = timers_.top();
      timers_.pop();
      driver_.on_wake(t.tag, *this);
    }
  }
}

}  // namespace

void check_base_url(const std::string& url) {
  std::string_view rest(url);
  bool scheme = false;
  for (const std::string_view prefix : {"http://", "https://"}) {
    if (rest.substr(0, prefix.size()) == prefix) {
      rest.remove_prefix(prefix.size());
      scheme = true;
      break;
    }
  }
  const std::string_view host = rest.substr(0, rest.find_first_of("/:?#"));
  if (!scheme || host.empty() ||
      rest.find_first_of(" \t\r\n") != std::string_view::npos) {
    throw InputError("", 0, 0,
                     "--url: '" + url +
                         "' is not a server base URL: give http://HOST[:PORT] or https://HOST[:PORT]");
  }
}

ReplayRun run_replay(const scenario::Scenario& sc, const ReplayOptions& opts) {
  if (opts.url.empty()) throw InputError("", 0, 0, "--url: the server's base URL is required");
  check_base_url(opts.url);
  ReplayRun run;
  run.kvsim_version = kVersion;
  run.scenario_file = sc.source_file;
  run.scenario_name = sc.name;
  run.seed = sc.seed;
  run.workload_kind =
      sc.workload.kind == workload::WorkloadSpec::Kind::kTrace ? "trace" : "multi_turn";
  run.url = opts.url;
  run.model = opts.model;

  std::unique_ptr<workload::Driver> driver =
      workload::make_driver(sc.workload, scenario_dir(sc), sc.seed);
  EstimateTokenizer estimate;
  std::unique_ptr<ServerTokenizer> server;
  if (opts.tokenize != TokenizeMode::kEstimate) {
    try {
      server = std::make_unique<ServerTokenizer>(opts.url, opts.model);
    } catch (const InputError&) {
      if (opts.tokenize == TokenizeMode::kServer) throw;
      if (opts.progress)
        opts.progress("the server has no working /tokenize: sizing text with the estimate");
    }
  }
  Tokenizer& tokenizer = server ? static_cast<Tokenizer&>(*server) : estimate;
  run.tokenizer = tokenizer.describe();
  TextMaker maker(tokenizer);

  std::ofstream journal;
  if (!opts.journal_path.empty()) {
    journal.open(opts.journal_path, std::ios::trunc);
    if (!journal) throw InputError(opts.journal_path, 0, 0, "cannot write the journal file");
  }
  run.metrics_before = scrape_metrics(opts.url);
  const WallClock clock;
  ReplayContext ctx(opts, *driver, maker, clock, opts.journal_path.empty() ? nullptr : &journal);
  run.stop_reason = ctx.run();
  run.interrupted = !run.stop_reason.empty();
  run.duration_s = to_seconds(clock.now());
  run.metrics_after = scrape_metrics(opts.url);
  run.header_lines = driver->describe();
  run.records = std::move(ctx.records());
  return run;
}

}  // namespace kvsim::validation
