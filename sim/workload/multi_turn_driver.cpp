#include "sim/workload/multi_turn_driver.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/error.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/units.hpp"
#include "sim/workload/prompt.hpp"

namespace kvsim::workload {
namespace {

int active_total(const ClientSpec& s) {
  return s.max_active_conversations > 0 ? s.max_active_conversations : s.num_clients;
}

}  // namespace

void validate_client_spec(const ClientSpec& s, std::size_t num_conversations) {
  std::vector<Diagnostic> errors;
  const auto add = [&](const char* field, std::string msg) {
    errors.push_back(Diagnostic{"", 0, 0, std::string("clients.") + field, std::move(msg)});
  };
  const auto convs = static_cast<std::int64_t>(num_conversations);
  if (s.num_clients < 1) {
    add("num_clients", "Number of clients must be a positive number");
  } else if (convs < s.num_clients) {
    add("num_clients", "Number of conversations (" + std::to_string(convs) +
                           ") must be equal or larger than the number of clients");
  }
  if (s.max_num_requests < 0) {
    add("max_num_requests", "must be >= 0 (0 = no limit)");
  } else if (s.max_num_requests > 0 && s.num_clients >= 1 &&
             s.max_num_requests / s.num_clients < 1) {
    add("max_num_requests", "Number of requests should be at least one per client");
  }
  if (s.max_active_conversations < 0) {
    add("max_active_conversations", "must be >= 0 (0 = num_clients)");
  } else if (s.num_clients >= 1) {
    const int k = active_total(s);
    if (k > convs) {
      add("max_active_conversations",
          "Max active conversations " + std::to_string(k) +
              " must be equal or less than the total number of conversations");
    } else if (k / s.num_clients < 1) {
      add("max_active_conversations", "Max active conversations " + std::to_string(k) +
                                          " must be equal or greater than the number of clients");
    }
  }
  if (!std::isfinite(s.request_rate) || s.request_rate < 0) {
    add("request_rate", "must be >= 0 requests/s per client (0 = no delay)");
  }
  if (s.max_turns < 0) add("max_turns", "Max turns must be a positive number");
  if (s.limit_min_tokens > 0 || s.limit_max_tokens > 0) {
    if (s.limit_min_tokens < 1 || s.limit_max_tokens < 1) {
      add("limit_min_tokens", "Invalid min/max tokens limits (both limits should be provided)");
    } else if (s.limit_min_tokens > s.limit_max_tokens) {
      add("limit_min_tokens", "Invalid min/max tokens limits (min should not be larger than max)");
    }
  }
  if (!errors.empty()) throw InputError(std::move(errors));
}

MultiTurnDriver::MultiTurnDriver(std::vector<Conversation> conversations, const ClientSpec& clients,
                                 const ChatTemplate& chat_template, std::uint64_t seed,
                                 const GenerationConfig* generation)
    : conversations_(std::move(conversations)),
      spec_(clients),
      chat_template_(chat_template),
      seed_(seed) {
  validate_client_spec(spec_, conversations_.size());
  if (chat_template_.preamble_tokens < 0 || chat_template_.per_message_tokens < 0 ||
      chat_template_.generation_prompt_tokens < 0) {
    throw InputError(Diagnostic{"", 0, 0, "chat_template", "token counts must be >= 0"});
  }
  for (const Conversation& conv : conversations_) {
    KVSIM_ASSERT(!conv.messages.empty() && conv.messages.front().role == Message::Role::kUser,
                 "conversation " + conv.id + " must start with a user message");
  }
  if (generation != nullptr) {
    generated_ = true;
    generation_lines_ = generation_param_lines(*generation);
  }
  input_conversations_ = conversations_.size();
  benchmark_conversations_ = conversations_.size();
  max_requests_per_client_ =
      spec_.max_num_requests > 0 ? spec_.max_num_requests / spec_.num_clients : 0;
  clients_.resize(static_cast<std::size_t>(spec_.num_clients));
}

void MultiTurnDriver::start(WorkloadContext& ctx) {
  KVSIM_ASSERT(phase_ == Phase::kIdle, "MultiTurnDriver::start called twice");
  std::vector<std::size_t> order(conversations_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  begin_phase(spec_.warmup_step ? Phase::kWarmup : Phase::kBenchmark, std::move(order), ctx);
}

void MultiTurnDriver::begin_phase(Phase phase, std::vector<std::size_t> order,
                                  WorkloadContext& ctx) {
  const bool warmup = phase == Phase::kWarmup;
  phase_ = phase;
  // main(): the warmup pass runs with max_turns=1, max_active_conversations=1 per client,
  // skip_first_turn=False and early_stop=False; the benchmark then skips the first turn.
  per_client_active_ = warmup ? 1 : active_total(spec_) / spec_.num_clients;
  phase_max_turns_ = warmup ? 1 : spec_.max_turns;
  skip_first_turn_ = !warmup && spec_.warmup_step;
  early_stop_ = !warmup && spec_.early_stop;
  if (!warmup) benchmark_conversations_ = order.size();
  queue_ = std::move(order);
  queue_pos_ = 0;
  terms_left_ = spec_.num_clients;
  turns_count_.assign(conversations_.size(), 0);
  finished_order_.clear();
  stop_ = false;
  exited_ = 0;
  const RngFactory factory(seed_);
  for (std::size_t i = 0; i < clients_.size(); ++i) {
    Client& c = clients_[i];
    c = Client{};
    c.index = static_cast<int>(i);
    c.choice_rng = factory.stream("client", i);
    c.sleep_rng = factory.stream("client_sleep", i);
  }
  for (Client& c : clients_) {
    if (phase_ != phase) break;
    advance(c, ctx);
  }
}

std::int64_t MultiTurnDriver::pop_queue() {
  if (queue_pos_ < queue_.size()) return static_cast<std::int64_t>(queue_[queue_pos_++]);
  KVSIM_ASSERT(terms_left_ > 0, "a client read the conversation queue after its TERM");
  --terms_left_;
  return -1;
}

void MultiTurnDriver::remove_active(Client& c, std::size_t conv) {
  c.active.erase(std::remove(c.active.begin(), c.active.end(), conv), c.active.end());
}

void MultiTurnDriver::advance(Client& c, WorkloadContext& ctx) {
  // client_main's loop: request cap, stop flag, refill, then one request.
  if (max_requests_per_client_ > 0 && c.requests == max_requests_per_client_) {
    exit_client(c, ctx);
    return;
  }
  if (stop_) {
    exit_client(c, ctx);
    return;
  }
  while (static_cast<int>(c.active.size()) < per_client_active_ && !c.queue_empty) {
    const std::int64_t next = pop_queue();
    if (next < 0) {
      c.queue_empty = true;
      break;
    }
    const auto conv = static_cast<std::size_t>(next);
    if (skip_first_turn_) turns_count_[conv] += 2;
    if (static_cast<std::size_t>(turns_count_[conv]) < conversations_[conv].messages.size()) {
      c.active.push_back(conv);
      c.rr_queue.push_back(conv);
    }
  }
  if (c.active.empty() || c.queue_empty) {
    exit_client(c, ctx);
    return;
  }
  std::size_t conv = 0;
  switch (spec_.conversation_sampling) {
    case ConversationSampling::kRoundRobin:
      conv = c.rr_queue.back();
      c.rr_queue.pop_back();
      break;
    case ConversationSampling::kRandom: {
      const auto last = static_cast<std::int64_t>(c.active.size()) - 1;
      conv = c.active[static_cast<std::size_t>(c.choice_rng.uniform_int(0, last))];
      break;
    }
  }
  turns_count_[conv] += 1;
  const auto messages_to_use = static_cast<std::size_t>(turns_count_[conv]);
  KVSIM_ASSERT(messages_to_use < conversations_[conv].messages.size(),
               "turn " + std::to_string(messages_to_use) + " is invalid for conversation " +
                   conversations_[conv].id);
  RequestSpec spec = build_turn_request(conversations_[conv], messages_to_use, chat_template_,
                                        spec_.limit_min_tokens, spec_.limit_max_tokens);
  spec.conversation_id = static_cast<std::int64_t>(conv);
  spec.client_id = c.index;
  spec.counted = phase_ != Phase::kWarmup;
  c.in_flight = true;
  c.conv = conv;
  c.messages_to_use = messages_to_use;
  c.forced_output = spec.output_tokens;
  if (phase_ == Phase::kWarmup) {
    ++warmup_requests_sent_;
  } else {
    ++requests_sent_;
  }
  const std::uint64_t id = ctx.submit(std::move(spec));
  in_flight_[id] = c.index;
}

void MultiTurnDriver::exit_client(Client& c, WorkloadContext& ctx) {
  KVSIM_ASSERT(!c.exited && !c.in_flight, "client exits twice or with a request in flight");
  c.exited = true;
  ++exited_;
  // main_mp: the first TERM on the result queue sets the stop event (early stop).
  if (early_stop_) stop_ = true;
  if (exited_ < spec_.num_clients) return;
  if (phase_ == Phase::kWarmup) {
    warmup_ran_ = true;
    std::vector<std::size_t> next = finished_order_;
    begin_phase(Phase::kBenchmark, std::move(next), ctx);
  } else {
    phase_ = Phase::kDone;
  }
}

void MultiTurnDriver::on_complete(const Completion& done, WorkloadContext& ctx) {
  const auto it = in_flight_.find(done.request_id);
  KVSIM_ASSERT(it != in_flight_.end(),
               "completion of an unknown request " + std::to_string(done.request_id));
  Client& c = clients_[static_cast<std::size_t>(it->second)];
  in_flight_.erase(it);
  KVSIM_ASSERT(c.in_flight, "completion for a client without a request in flight");
  c.in_flight = false;
  ++c.requests;
  Conversation& conv = conversations_[c.conv];
  if (done.ok) {
    turns_count_[c.conv] += 1;
    // The answer replaces the dataset's (or is appended), so later turns re-send it.
    const std::int64_t answer_tokens =
        done.output_tokens > 0 ? done.output_tokens : c.forced_output;
    Message answer = make_message(Message::Role::kAssistant, conversation_key(conv.id),
                                  c.messages_to_use, answer_tokens);
    if (c.messages_to_use < conv.messages.size()) {
      conv.messages[c.messages_to_use] = std::move(answer);
    } else {
      conv.messages.push_back(std::move(answer));
    }
    std::size_t max_turns = conv.messages.size();
    if (phase_max_turns_ > 0)
      max_turns = std::min(max_turns, static_cast<std::size_t>(phase_max_turns_));
    if (static_cast<std::size_t>(turns_count_[c.conv]) >= max_turns) {
      remove_active(c, c.conv);
      finished_order_.push_back(c.conv);
      if (phase_ == Phase::kBenchmark) ++conversations_finished_;
    } else if (spec_.conversation_sampling == ConversationSampling::kRoundRobin) {
      c.rr_queue.push_front(c.conv);
    }
  } else {
    remove_active(c, c.conv);  // a failed conversation is not used again
  }
  if (spec_.request_rate > 0) {
    const SimTime sleep = from_seconds(c.sleep_rng.exponential(1.0 / spec_.request_rate));
    ctx.wake_at(limits::saturating_add(ctx.now(), sleep), c.index);
    return;
  }
  advance(c, ctx);
}

void MultiTurnDriver::on_wake(std::int64_t tag, WorkloadContext& ctx) {
  KVSIM_ASSERT(tag >= 0 && tag < static_cast<std::int64_t>(clients_.size()), "unknown timer tag");
  Client& c = clients_[static_cast<std::size_t>(tag)];
  KVSIM_ASSERT(!c.exited && !c.in_flight, "a sleeping client must be idle");
  advance(c, ctx);
}

std::vector<std::string> MultiTurnDriver::describe() const {
  std::vector<std::string> out;
  out.push_back("num_clients=" + std::to_string(spec_.num_clients));
  out.push_back("num_conversations=" +
                std::to_string(warmup_ran_ ? benchmark_conversations_ : input_conversations_));
  out.push_back("active_conversations=" + (spec_.max_active_conversations > 0
                                               ? std::to_string(spec_.max_active_conversations)
                                               : std::string("None")));
  out.push_back("seed=" + std::to_string(seed_));
  if (spec_.limit_min_tokens > 0)
    out.push_back("min_tokens=" + std::to_string(spec_.limit_min_tokens));
  if (spec_.limit_max_tokens > 0)
    out.push_back("max_tokens=" + std::to_string(spec_.limit_max_tokens));
  if (generated_) out.insert(out.end(), generation_lines_.begin(), generation_lines_.end());
  return out;
}

}  // namespace kvsim::workload
