#include "validation/src/replayed_workload.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <queue>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/workload/make_driver.hpp"
#include "sim/workload/multi_turn_driver.hpp"
#include "sim/workload/prompt.hpp"

namespace kvsim::validation {
namespace {

// Salt of the streams this file makes up ("REPLAY"), so they never meet the scenario's own.
constexpr std::uint64_t kSalt = 0x5245504C4159ULL;

std::string scenario_dir(const scenario::Scenario& sc) {
  const std::string dir = sc.source_file.empty()
                              ? std::string()
                              : std::filesystem::path(sc.source_file).parent_path().string();
  return dir.empty() ? std::string(".") : dir;
}

// Runs a driver with every request answered at once, recording what it submits in order: the
// open-loop trace driver's request stream (closed-loop traces: the order it would take if the
// server answered instantly).
std::vector<workload::RequestSpec> capture_requests(workload::Driver& driver) {
  struct Capture final : workload::WorkloadContext {
    struct Timer {
      SimTime at;
      std::uint64_t seq;
      std::int64_t tag;
      bool operator>(const Timer& o) const { return at != o.at ? at > o.at : seq > o.seq; }
    };
    SimTime clock = 0;
    std::uint64_t seq = 0;
    std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers;
    std::vector<workload::RequestSpec> sent;
    std::vector<std::uint64_t> done;
    SimTime now() const override { return clock; }
    std::uint64_t submit(workload::RequestSpec spec) override {
      sent.push_back(std::move(spec));
      done.push_back(sent.size() - 1);
      return sent.size() - 1;
    }
    void wake_at(SimTime t, std::int64_t tag) override { timers.push(Timer{t, seq++, tag}); }
  } ctx;
  const auto drain = [&] {
    while (!ctx.done.empty()) {
      const std::vector<std::uint64_t> batch = std::move(ctx.done);
      ctx.done.clear();
      for (const std::uint64_t id : batch) {
        workload::Completion c;
        c.request_id = id;
        c.sent = ctx.clock;
        c.first_token = ctx.clock;
        c.finished = ctx.clock;
        c.output_tokens = ctx.sent[id].output_tokens;
        driver.on_complete(c, ctx);
      }
    }
  };
  driver.start(ctx);
  drain();
  while (!ctx.timers.empty()) {
    const auto t = ctx.timers.top();
    ctx.timers.pop();
    ctx.clock = std::max(ctx.clock, t.at);
    driver.on_wake(t.tag, ctx);
    drain();
  }
  return std::move(ctx.sent);
}

std::int64_t measured_prompt(const ReplayRecord& r) { return r.usage_prompt_tokens; }

std::int64_t measured_output(const ReplayRecord& r) {
  const std::int64_t a =
      r.usage_completion_tokens >= 1 ? r.usage_completion_tokens : r.request.output_num_tokens;
  return std::max<std::int64_t>(a, 1);
}

workload::RequestSpec base_spec(const ReplayRecord& r) {
  workload::RequestSpec s;
  s.conversation_id = r.conversation_index;
  s.conversation_name = r.request.conversation_id;
  s.client_id = r.request.client_id;
  s.input_num_turns = r.request.input_num_turns;
  s.input_num_tokens = r.request.input_num_tokens;
  s.counted = r.request.counted;
  s.output_tokens = measured_output(r);
  s.output_content_id = content_id(ContentKind::kAssistantTurn, kSalt,
                                   static_cast<std::uint64_t>(r.submit_index), 1);
  return s;
}

}  // namespace

TokenSequence resize_prompt(TokenSequence prompt, std::int64_t tokens, std::uint64_t fill) {
  const std::int64_t have = total_tokens(prompt);
  if (have < tokens) {
    append_tokens(prompt, fill, tokens - have);
    return prompt;
  }
  std::int64_t cut = have - tokens;
  while (cut > 0 && !prompt.empty()) {
    TokenSegment& last = prompt.back();
    if (last.length <= cut) {
      cut -= last.length;
      prompt.pop_back();
    } else {
      last.length -= cut;
      cut = 0;
    }
  }
  return prompt;
}

ReplayedWorkload rebuild_workload(const ReplayRun& run, const scenario::Scenario& sc) {
  ReplayedWorkload out;
  std::vector<const ReplayRecord*> sent;
  std::int64_t failed = 0;
  for (const ReplayRecord& r : run.records) {
    if (r.error.empty()) {
      sent.push_back(&r);
    } else {
      ++failed;
    }
  }
  std::stable_sort(sent.begin(), sent.end(), [](const ReplayRecord* a, const ReplayRecord* b) {
    return a->submit_index < b->submit_index;
  });
  if (sent.empty()) throw InputError(run.scenario_file, 0, 0, "the replay has no successful request");
  if (failed > 0) {
    out.notes.push_back(std::to_string(failed) +
                        " failed measured requests are left out of the prediction");
  }
  std::unique_ptr<workload::Driver> driver =
      workload::make_driver(sc.workload, scenario_dir(sc), run.seed);
  std::int64_t no_usage = 0;

  if (run.workload_kind == "trace") {
    out.mode = workload::ReplayedDriver::Mode::kOpenLoop;
    const std::vector<workload::RequestSpec> trace = capture_requests(*driver);
    std::int64_t unmatched = 0;
    for (const ReplayRecord* r : sent) {
      workload::ReplayedRequest q;
      q.spec = base_spec(*r);
      const auto index = static_cast<std::size_t>(r->submit_index);
      TokenSequence prompt;
      if (index < trace.size()) {
        prompt = trace[index].prompt;
      } else {
        ++unmatched;
      }
      std::int64_t p = measured_prompt(*r);
      if (p < 1) {
        ++no_usage;
        p = std::max<std::int64_t>(total_tokens(prompt), std::max<std::int64_t>(r->request.input_num_tokens, 1));
      }
      q.spec.prompt = resize_prompt(std::move(prompt), p,
                                    content_id(ContentKind::kUnique, kSalt, index, 2));
      q.send_time = from_ms(std::max(r->request.start_time_ms, 0.0));
      out.requests.push_back(std::move(q));
    }
    if (unmatched > 0) {
      out.notes.push_back(std::to_string(unmatched) +
                          " replayed requests are not in the scenario's trace: sent with a prompt "
                          "shared with nothing");
    }
  } else {
    out.mode = workload::ReplayedDriver::Mode::kClosedLoop;
    const auto* multi_turn = dynamic_cast<const workload::MultiTurnDriver*>(driver.get());
    struct Turn {
      TokenSequence prompt;
      std::int64_t prompt_tokens = 0;
      std::int64_t output_tokens = 0;
      std::uint64_t output_stream = 0;
      int input_num_turns = 0;
    };
    std::map<std::string, Turn> last_turn;      // conversation name -> its latest request
    std::map<int, double> client_end_ms;        // client -> end of its previous request
    std::int64_t clamped = 0, rebuilt = 0;
    for (const ReplayRecord* r : sent) {
      workload::ReplayedRequest q;
      q.spec = base_spec(*r);
      const std::int64_t p = measured_prompt(*r);
      if (p < 1) ++no_usage;
      const auto conv = static_cast<std::uint64_t>(std::max<std::int64_t>(r->conversation_index, 0));
      const auto seq = static_cast<std::uint64_t>(r->submit_index);
      const auto prev = last_turn.find(r->request.conversation_id);
      if (prev != last_turn.end() && r->request.input_num_turns > prev->second.input_num_turns) {
        // History re-sent: the previous prompt and its answer, then the new messages.
        const Turn& t = prev->second;
        q.spec.prompt = t.prompt;
        append_tokens(q.spec.prompt, t.output_stream, t.output_tokens);
        std::int64_t fresh = p >= 1 ? p - t.prompt_tokens - t.output_tokens
                                    : r->last_user_tokens + sc.workload.chat_template.per_message_tokens +
                                          sc.workload.chat_template.generation_prompt_tokens;
        if (fresh < 1) {
          ++clamped;
          fresh = 1;
        }
        append_tokens(q.spec.prompt, content_id(ContentKind::kUserTurn, kSalt, conv, seq), fresh);
      } else {
        // A conversation's first request: the scenario's prompt for it (template preamble and
        // common prefix shared with the other conversations), sized as the server counted it.
        TokenSequence prompt;
        const auto index = static_cast<std::size_t>(r->conversation_index);
        const auto used = static_cast<std::size_t>(std::max(r->request.input_num_turns, 1));
        if (multi_turn != nullptr && r->conversation_index >= 0 &&
            index < multi_turn->conversations().size() &&
            used <= multi_turn->conversations()[index].messages.size() && used % 2 == 1) {
          prompt = workload::build_turn_request(multi_turn->conversations()[index], used,
                                                sc.workload.chat_template)
                       .prompt;
        } else {
          ++rebuilt;
          append_tokens(prompt, workload::template_preamble_stream(),
                        sc.workload.chat_template.preamble_tokens);
        }
        const std::int64_t size = p >= 1 ? p : std::max<std::int64_t>(total_tokens(prompt), 1);
        q.spec.prompt = resize_prompt(std::move(prompt), size,
                                      content_id(ContentKind::kUnique, kSalt, conv, seq));
      }
      Turn& t = last_turn[r->request.conversation_id];
      t.prompt = q.spec.prompt;
      t.prompt_tokens = total_tokens(q.spec.prompt);
      t.output_tokens = q.spec.output_tokens;
      t.output_stream = q.spec.output_content_id;
      t.input_num_turns = r->request.input_num_turns;

      const int client = r->request.client_id;
      const auto end = client_end_ms.find(client);
      const double gap = r->request.start_time_ms - (end == client_end_ms.end() ? 0.0 : end->second);
      q.delay = from_ms(std::max(gap, 0.0));
      client_end_ms[client] = r->end_ms;
      out.requests.push_back(std::move(q));
    }
    if (clamped > 0) {
      out.notes.push_back(std::to_string(clamped) +
                          " turns had a measured prompt shorter than the previous prompt and answer "
                          "(the server's template rewrote history): 1 new token assumed");
    }
    if (rebuilt > 0) {
      out.notes.push_back(std::to_string(rebuilt) +
                          " conversations are not in the scenario's workload: their first prompt "
                          "shares only the template preamble");
    }
  }
  if (no_usage > 0) {
    out.notes.push_back(std::to_string(no_usage) +
                        " requests had no usage.prompt_tokens: sized from the content sent");
  }
  return out;
}

}  // namespace kvsim::validation
