#include "validation/src/http_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cmath>
#include <mutex>

namespace kvsim::validation {
namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

long ms(double seconds) { return static_cast<long>(std::llround(seconds * 1000.0)); }

std::string fmt_s(double s) {
  std::string out = std::to_string(s);
  while (out.size() > 1 && out.back() == '0') out.pop_back();
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out + " s";
}

constexpr std::size_t kMaxErrorBody = 4096;

}  // namespace

struct StreamingClient::Transfer {
  std::uint64_t id = 0;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string url;
  std::string body;
  const WallClock* clock = nullptr;
  std::unique_ptr<ChatStreamReader> reader;
  std::string error_body;
  long status = 0;
  bool protocol_error = false;
  int attempts = 0;
  SimTime first_sent = 0;
  SimTime sent = 0;
  SimTime last_byte = 0;
  bool waiting = false;  // between attempts
  SimTime retry_at = 0;

  static size_t on_write(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t bytes = size * n;
    const SimTime now = t->clock->now();
    t->last_byte = now;
    if (t->status == 0) curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->status);
    if (t->status != 200) {
      if (t->error_body.size() < kMaxErrorBody)
        t->error_body.append(data, std::min(bytes, kMaxErrorBody));
      return bytes;
    }
    t->reader->feed(std::string_view(data, bytes), now);
    if (!t->reader->result().error.empty()) {
      t->protocol_error = true;
      return 0;  // abort the transfer (CURLE_WRITE_ERROR)
    }
    return bytes;
  }
};

StreamingClient::StreamingClient(std::string base_url, HttpTimeouts timeouts, RetryPolicy retry,
                                 const WallClock& clock)
    : base_url_(std::move(base_url)), timeouts_(timeouts), retry_(retry), clock_(clock) {
  global_init();
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  multi_ = curl_multi_init();
}

StreamingClient::~StreamingClient() {
  for (auto& [id, t] : transfers_) detach(*t);
  curl_multi_cleanup(static_cast<CURLM*>(multi_));
}

std::uint64_t StreamingClient::start(const std::string& path, std::string json_body) {
  auto t = std::make_unique<Transfer>();
  t->id = next_id_++;
  t->url = base_url_ + path;
  t->body = std::move(json_body);
  t->clock = &clock_;
  Transfer& ref = *t;
  transfers_.emplace(t->id, std::move(t));
  launch(ref);
  ref.first_sent = ref.sent;
  return ref.id;
}

void StreamingClient::launch(Transfer& t) {
  t.reader = std::make_unique<ChatStreamReader>();
  t.error_body.clear();
  t.status = 0;
  t.protocol_error = false;
  t.waiting = false;
  ++t.attempts;
  t.easy = curl_easy_init();
  t.headers = curl_slist_append(nullptr, "Content-Type: application/json");
  t.headers = curl_slist_append(t.headers, "Accept: text/event-stream");
  curl_easy_setopt(t.easy, CURLOPT_URL, t.url.c_str());
  curl_easy_setopt(t.easy, CURLOPT_HTTPHEADER, t.headers);
  curl_easy_setopt(t.easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t.body.size()));
  curl_easy_setopt(t.easy, CURLOPT_POSTFIELDS, t.body.c_str());
  curl_easy_setopt(t.easy, CURLOPT_WRITEFUNCTION, &Transfer::on_write);
  curl_easy_setopt(t.easy, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(t.easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(t.easy, CURLOPT_CONNECTTIMEOUT_MS, ms(timeouts_.connect_s));
  curl_easy_setopt(t.easy, CURLOPT_TIMEOUT_MS, ms(timeouts_.total_s));
  curl_easy_setopt(t.easy, CURLOPT_PRIVATE, &t);
  t.sent = clock_.now();
  t.last_byte = t.sent;
  curl_multi_add_handle(static_cast<CURLM*>(multi_), t.easy);
}

void StreamingClient::detach(Transfer& t) {
  if (t.easy != nullptr) {
    curl_multi_remove_handle(static_cast<CURLM*>(multi_), t.easy);
    curl_easy_cleanup(t.easy);
    t.easy = nullptr;
  }
  if (t.headers != nullptr) {
    curl_slist_free_all(t.headers);
    t.headers = nullptr;
  }
}

void StreamingClient::fail(Transfer& t, std::string error, std::vector<StreamOutcome>& out) {
  detach(t);
  StreamOutcome o;
  o.id = t.id;
  o.ok = false;
  o.error = std::move(error);
  o.http_status = t.status;
  o.attempts = t.attempts;
  o.first_sent = t.first_sent;
  o.sent = t.sent;
  o.finished = clock_.now();
  if (t.reader) o.chat = t.reader->result();
  out.push_back(std::move(o));
  transfers_.erase(t.id);
}

void StreamingClient::finish(Transfer& t, int curl_code, std::vector<StreamOutcome>& out) {
  const auto code = static_cast<CURLcode>(curl_code);
  if (t.status == 0) curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &t.status);
  const ChatResult& chat = t.reader->result();
  std::string error;
  bool retryable = false;
  if (t.protocol_error) {
    error = chat.error;
  } else if (code != CURLE_OK) {
    error = std::string(curl_easy_strerror(code));
    if (chat.content_chunks > 0) {
      error = "connection lost after " + std::to_string(chat.content_chunks) + " chunks: " + error;
    }
    retryable = chat.content_chunks == 0 && (t.status == 0 || t.status >= 500);
  } else if (t.status != 200) {
    error = "HTTP " + std::to_string(t.status) + ": " + error_message_of(t.error_body);
    retryable = t.status >= 500;
  } else if (!chat.done) {
    error = "stream ended before [DONE] after " + std::to_string(chat.content_chunks) + " chunks";
    if (t.reader->has_pending()) error += " (an event was cut off)";
  } else if (!chat.error.empty()) {
    error = chat.error;
  }
  if (error.empty()) {
    detach(t);
    StreamOutcome o;
    o.id = t.id;
    o.ok = true;
    o.http_status = t.status;
    o.attempts = t.attempts;
    o.first_sent = t.first_sent;
    o.sent = t.sent;
    o.finished = clock_.now();
    o.chat = chat;
    out.push_back(std::move(o));
    transfers_.erase(t.id);
    return;
  }
  if (retryable && t.attempts <= retry_.max_retries) {
    detach(t);
    t.waiting = true;
    const double delay = retry_.backoff_s * std::pow(2.0, t.attempts - 1);
    t.retry_at = clock_.now() + static_cast<SimTime>(delay * 1e9);
    return;
  }
  if (t.attempts > 1) error += " (after " + std::to_string(t.attempts) + " attempts)";
  fail(t, std::move(error), out);
}

void StreamingClient::check_timeouts(std::vector<StreamOutcome>& out) {
  const SimTime now = clock_.now();
  std::vector<Transfer*> expired;
  std::vector<std::string> why;
  for (auto& [id, t] : transfers_) {
    if (t->waiting) continue;
    const ChatResult& chat = t->reader->result();
    if (chat.first_token < 0 && to_seconds(now - t->sent) > timeouts_.first_token_s) {
      expired.push_back(t.get());
      why.push_back("timeout: no token within " + fmt_s(timeouts_.first_token_s));
    } else if (chat.first_token >= 0 && !chat.done &&
               to_seconds(now - t->last_byte) > timeouts_.idle_s) {
      expired.push_back(t.get());
      why.push_back("timeout: nothing received for " + fmt_s(timeouts_.idle_s) + " after " +
                    std::to_string(chat.content_chunks) + " chunks");
    }
  }
  for (std::size_t i = 0; i < expired.size(); ++i) fail(*expired[i], why[i], out);
}

void StreamingClient::start_due_retries() {
  const SimTime now = clock_.now();
  for (auto& [id, t] : transfers_) {
    if (t->waiting && t->retry_at <= now) launch(*t);
  }
}

SimTime StreamingClient::first_token(std::uint64_t id) const {
  const auto it = transfers_.find(id);
  if (it == transfers_.end() || !it->second->reader) return -1;
  return it->second->reader->result().first_token;
}

std::vector<StreamOutcome> StreamingClient::poll(SimTime max_wait) {
  std::vector<StreamOutcome> out;
  auto* multi = static_cast<CURLM*>(multi_);
  const SimTime deadline = clock_.now() + std::max<SimTime>(max_wait, 0);
  while (true) {
    start_due_retries();
    int running = 0;
    curl_multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
      if (t != nullptr) finish(*t, static_cast<int>(msg->data.result), out);
    }
    check_timeouts(out);
    const SimTime now = clock_.now();
    if (!out.empty() || now >= deadline) return out;
    SimTime wait = std::min<SimTime>(deadline - now, 50 * kMillisecond);
    for (const auto& [id, t] : transfers_) {
      if (t->waiting) wait = std::min(wait, std::max<SimTime>(t->retry_at - now, 0));
    }
    curl_multi_poll(multi, nullptr, 0, static_cast<int>(std::max<SimTime>(wait / kMillisecond, 1)),
                    nullptr);
  }
}

std::vector<StreamOutcome> StreamingClient::abort_all(const std::string& reason) {
  std::vector<StreamOutcome> out;
  std::vector<Transfer*> all;
  for (auto& [id, t] : transfers_) all.push_back(t.get());
  for (Transfer* t : all) fail(*t, reason, out);
  return out;
}

namespace {

size_t collect(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

HttpResponse perform(const std::string& url, const std::string* body, double timeout_s) {
  global_init();
  HttpResponse r;
  CURL* easy = curl_easy_init();
  curl_slist* headers = nullptr;
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, ms(timeout_s));
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, ms(std::min(timeout_s, 10.0)));
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &collect);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &r.body);
  if (body != nullptr) {
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body->c_str());
  }
  const CURLcode code = curl_easy_perform(easy);
  if (code != CURLE_OK) {
    r.error = curl_easy_strerror(code);
  } else {
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &r.status);
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(easy);
  return r;
}

}  // namespace

HttpResponse http_get(const std::string& url, double timeout_s) {
  return perform(url, nullptr, timeout_s);
}

HttpResponse http_post_json(const std::string& url, const std::string& body, double timeout_s) {
  return perform(url, &body, timeout_s);
}

}  // namespace kvsim::validation
