#pragma once
// The client model of vLLM's multi-turn benchmark (benchmarks/multi_turn/
// benchmark_serving_multi_turn.py: main, main_mp, client_main, get_client_config) as a Driver.
//
//   - A shared queue holds every conversation in input order, then one TERM per client.
//   - N clients, each with one request in flight (closed loop). Client i keeps up to
//     k // N active conversations (k = max_active_conversations, default N), refilling from the
//     queue before each request; a new conversation is appended at the right of its deque.
//   - round_robin: the next conversation is popped from the right; after a successful turn
//     that does not finish it, it is put back at the left (so a new conversation goes next).
//     random: a uniform choice among the active ones, in the order they were fetched, with the
//     client's own stream (RngFactory stream "client", index i).
//   - A turn sends messages[0 .. 2j+1) with the real answers of earlier turns; a conversation
//     ends when all its messages (or max_turns of them) are used; a failed request drops it.
//   - request_rate > 0: after every response the client sleeps Exp(1/rate) seconds (stream
//     "client_sleep", index i), latency not subtracted (poisson_sleep).
//   - A client stops when it has sent max_num_requests // N requests, when the stop flag is
//     set, or when a refill meets TERM: then it exits at once, abandoning its active
//     conversations (vLLM issue #57173). With early_stop (default) the first client to exit sets
//     the stop flag; the others finish the request in flight (it counts, as its result is
//     already queued in vLLM), sleep if they would, and exit at their next loop check.
//   - warmup_step: a first pass sends only turn 1 of every conversation (1 active conversation
//     per client, max_turns 1, no early stop, same request cap; these requests have
//     counted = false); the benchmark proper then runs on the conversations whose first turn
//     completed, in completion order, skipping their first turn (2-message ones are done).
//     The client streams restart for it, as vLLM reseeds each new client process.
// Clients of the real benchmark are processes racing for the queue; here simultaneous events
// run in time order, ties by client index (start() runs clients 0..N-1 in order).
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/core/rng.hpp"
#include "sim/workload/conversation.hpp"
#include "sim/workload/driver.hpp"
#include "sim/workload/workload_spec.hpp"

namespace kvsim::workload {

// Checks a ClientSpec against the conversation count as get_client_config does (and
// main's --max-turns and --limit-*-tokens checks); throws InputError naming the field.
void validate_client_spec(const ClientSpec& clients, std::size_t num_conversations);

class MultiTurnDriver final : public Driver {
 public:
  // `generation` (optional) is only reported by describe(). Throws InputError for a bad spec.
  MultiTurnDriver(std::vector<Conversation> conversations, const ClientSpec& clients,
                  const ChatTemplate& chat_template, std::uint64_t seed,
                  const GenerationConfig* generation = nullptr);

  void start(WorkloadContext& ctx) override;
  void on_wake(std::int64_t tag, WorkloadContext& ctx) override;
  void on_complete(const Completion& c, WorkloadContext& ctx) override;
  // num_clients, num_conversations (after the warmup step once it ran, as the benchmark
  // prints), active_conversations (None when not given), seed, min_tokens/max_tokens when set,
  // then the generation parameters when conversations were generated.
  std::vector<std::string> describe() const override;

  // Conversations with the answers received so far (answer lengths as generated).
  const std::vector<Conversation>& conversations() const { return conversations_; }
  bool finished() const { return phase_ == Phase::kDone; }
  // Requests sent in the benchmark proper / in the warmup step.
  std::int64_t requests_sent() const { return requests_sent_; }
  std::int64_t warmup_requests_sent() const { return warmup_requests_sent_; }
  // Conversations that ran to their end in the benchmark proper.
  std::int64_t conversations_finished() const { return conversations_finished_; }

 private:
  enum class Phase { kIdle, kWarmup, kBenchmark, kDone };
  struct Client {
    int index = 0;
    Rng choice_rng{0};
    Rng sleep_rng{0};
    std::vector<std::size_t> active;   // fetch order (Python dict order)
    std::deque<std::size_t> rr_queue;  // round-robin deque: pop right, appendleft
    bool queue_empty = false;          // met TERM
    std::int64_t requests = 0;         // successes + failures
    bool exited = false;
    bool in_flight = false;
    std::size_t conv = 0;
    std::size_t messages_to_use = 0;
    std::int64_t forced_output = 0;
  };

  void begin_phase(Phase phase, std::vector<std::size_t> order, WorkloadContext& ctx);
  void advance(Client& c, WorkloadContext& ctx);
  void exit_client(Client& c, WorkloadContext& ctx);
  void remove_active(Client& c, std::size_t conv);
  // Next entry of the shared queue: a conversation index, or -1 for TERM.
  std::int64_t pop_queue();

  std::vector<Conversation> conversations_;
  ClientSpec spec_;
  ChatTemplate chat_template_;
  std::uint64_t seed_;
  std::vector<std::string> generation_lines_;
  bool generated_ = false;
  std::size_t input_conversations_ = 0;

  Phase phase_ = Phase::kIdle;
  int per_client_active_ = 1;
  int phase_max_turns_ = 0;
  bool skip_first_turn_ = false;
  bool early_stop_ = true;
  std::int64_t max_requests_per_client_ = 0;
  std::vector<std::size_t> queue_;
  std::size_t queue_pos_ = 0;
  int terms_left_ = 0;
  std::vector<int> turns_count_;
  std::vector<std::size_t> finished_order_;
  std::vector<Client> clients_;
  bool stop_ = false;
  int exited_ = 0;
  std::unordered_map<std::uint64_t, int> in_flight_;  // request id -> client index
  std::int64_t requests_sent_ = 0;
  std::int64_t warmup_requests_sent_ = 0;
  std::int64_t conversations_finished_ = 0;
  bool warmup_ran_ = false;
  std::size_t benchmark_conversations_ = 0;
};

}  // namespace kvsim::workload
