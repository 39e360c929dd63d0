#pragma once
// A workload rebuilt from a measured run (kvsim replay), driven as it was measured:
//   closed loop: each client sends its requests in the recorded order, one in flight; request j
//                of a client is sent `delay` after request j-1 of that client completes (its
//                first request: `delay` after the start). The delay is the gap the measured run
//                left there (the client model's think time, e.g. the benchmark's Poisson sleep,
//                plus the harness's own overhead), so the simulated clients wait as the real
//                ones did and the server's speed alone decides the rest.
//   open loop:   request i is sent at its recorded send time, whatever the server's state.
// Requests carry their prompt (token identities, so prefix sharing between turns and across
// conversations is explicit), answer length, conversation and client. Times in SimTime
// (nanoseconds, sim/core/units.hpp).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/workload/driver.hpp"

namespace kvsim::workload {

struct ReplayedRequest {
  RequestSpec spec;        // prompt, output_tokens, output_content_id, conversation, client, counted
  SimTime send_time = 0;   // open loop: when it is sent (since the start)
  SimTime delay = 0;       // closed loop: after the client's previous request completes
};

class ReplayedDriver final : public Driver {
 public:
  enum class Mode { kClosedLoop, kOpenLoop };
  // `requests` in the order the run sent them. Closed loop: requests are grouped by
  // spec.client_id, keeping that order within each client. Throws InputError for a negative
  // time or delay.
  ReplayedDriver(std::vector<ReplayedRequest> requests, Mode mode,
                 std::vector<std::string> header_lines = {});

  void start(WorkloadContext& ctx) override;
  void on_wake(std::int64_t tag, WorkloadContext& ctx) override;
  void on_complete(const Completion& c, WorkloadContext& ctx) override;
  std::vector<std::string> describe() const override;

  std::size_t size() const { return requests_.size(); }
  std::size_t submitted() const { return submitted_; }

 private:
  struct Client {
    std::vector<std::size_t> requests;  // indexes into requests_, in send order
    std::size_t next = 0;
  };
  void send(std::size_t index, WorkloadContext& ctx, std::size_t client);
  void advance(std::size_t client, WorkloadContext& ctx, SimTime after);

  std::vector<ReplayedRequest> requests_;
  Mode mode_;
  std::vector<std::string> header_lines_;
  std::vector<Client> clients_;                     // closed loop, by ascending client id
  std::map<std::uint64_t, std::size_t> in_flight_;  // request id -> client slot
  std::size_t submitted_ = 0;
};

}  // namespace kvsim::workload
