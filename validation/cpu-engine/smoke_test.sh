#!/usr/bin/env bash
# Smoke test of the CPU engine: generates a tiny model, starts server.mjs on a free port, runs a
# two-turn conversation (the second turn resends the history) and a few other requests, checks
# token counts against the documented tokenization rule and chat template, exact completion
# lengths, prefix reuse (cached_tokens) on turn 2, the /metrics counters, error handling, and
# stops the server. Exits non-zero on any failure.
#
#   validation/cpu-engine/smoke_test.sh [--model EXISTING.gguf]
#
# Without --model it generates a small model (2 layers, width 128) so the test is quick; the
# checks do not depend on the model size. SMOKE_THREADS sets --threads (default 1). Needs node
# (20+), python3, and ./install.sh to have run (it runs it; that is a no-op once installed).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=test_lib.sh
source "$here/test_lib.sh"
use_model "${1:-}" "${2:-}" 2 128 384
start_server --slots 2 --ctx 1024
[ "$(wc -l <"$work/server.out")" -eq 1 ] || { echo "FAIL: server stdout is not exactly one line"; exit 1; }
echo "server at $url"

cat >"$work/client.mjs" <<'EOF'
// Checks against independent expectations:
// - tokenization rule: an ASCII text is one token per character (a space is the token "\u2581");
// - chat template: BOS + per message (ROLE + CONTENT + 5 tokens: header start, header end, "\n", "\n",
//   eot) + generation prompt ("assistant" + 4 tokens);
// - a sequence keeps every token it evaluated: after a turn it holds the prompt and all generated
//   tokens but the last one (which is sampled, never fed back), so the next turn of the same
//   conversation reuses prompt + answer - 1 tokens.
const url = process.argv[2];
let failures = 0;
const check = (cond, what) => {
  console.log(`${cond ? "ok  " : "FAIL"} ${what}`);
  if (!cond) failures++;
};
const expectedPromptTokens = (messages) =>
  1 + messages.reduce((n, m) => n + m.role.length + m.content.length + 5, 0) + "assistant".length + 4;

async function post(path, body, raw = false) {
  const r = await fetch(url + path, {method: "POST", headers: {"content-type": "application/json"},
    body: raw ? body : JSON.stringify(body)});
  return {status: r.status, json: await r.json().catch(() => null)};
}

async function metrics() {
  const text = await (await fetch(url + "/metrics")).text();
  const out = {};
  for (const line of text.split("\n")) {
    const m = /^(vllm:[a-z_]+)\{[^}]*\} (\S+)$/.exec(line);
    if (m && !(m[1] in out)) out[m[1]] = Number(m[2]);
  }
  return out;
}

// Streams one chat completion; returns {chunks, content, usage, done, firstRole}.
async function streamChat(messages, n) {
  const r = await fetch(url + "/v1/chat/completions", {method: "POST", headers: {"content-type": "application/json"},
    body: JSON.stringify({model: "tiny-llama", messages, stream: true, stream_options: {include_usage: true},
      max_tokens: n, min_tokens: n, temperature: 0, seed: 0})});
  check(r.status === 200 && (r.headers.get("content-type") ?? "").startsWith("text/event-stream"),
    `stream status 200 text/event-stream (got ${r.status})`);
  const text = await r.text();
  const events = text.split("\n\n").filter((e) => e.length > 0);
  const out = {chunks: 0, content: "", usage: null, done: false, firstRole: null, finish: null};
  events.forEach((e, i) => {
    if (!e.startsWith("data: ")) throw new Error(`bad SSE event ${JSON.stringify(e)}`);
    const data = e.slice(6);
    if (data === "[DONE]") {
      out.done = i === events.length - 1;
      return;
    }
    const c = JSON.parse(data);
    if (i === 0) out.firstRole = c.choices?.[0]?.delta?.role ?? null;
    if (c.usage) out.usage = c.usage;
    const ch = c.choices?.[0];
    if (ch?.delta?.content) {
      out.chunks++;
      out.content += ch.delta.content;
    }
    if (ch?.finish_reason) out.finish = ch.finish_reason;
  });
  return out;
}

const health = await fetch(url + "/health");
check(health.status === 200, "GET /health is 200");
const models = await (await fetch(url + "/v1/models")).json();
check(models.data?.[0]?.id === "tiny-llama", "GET /v1/models lists tiny-llama");

// Tokenization rule.
const t1 = await post("/tokenize", {prompt: "hello world", add_special_tokens: false});
check(t1.json?.count === 11 && t1.json.tokens.length === 11, `"hello world" is 11 tokens (got ${t1.json?.count})`);
const t2 = await post("/tokenize", {prompt: "a  b"});
check(t2.json?.count === 5, `"a  b" with BOS is 5 tokens (got ${t2.json?.count})`);
const hi = [{role: "user", content: "hello world"}];
const t3 = await post("/tokenize", {messages: hi});
check(t3.json?.count === expectedPromptTokens(hi), `chat template of one user message: ${expectedPromptTokens(hi)} tokens (got ${t3.json?.count})`);

const before = await metrics();
for (const name of ["vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total", "vllm:kv_cache_usage_perc",
  "vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:num_preemptions_total",
  "vllm:prompt_tokens_total", "vllm:generation_tokens_total"])
  check(name in before, `/metrics has ${name}`);

// Two-turn conversation, the second turn resends the history with the real answer.
const user1 = "You are a helpful assistant. Tell me about caches in sixty words or so please.";
const conv = [{role: "user", content: user1}];
const a1 = await streamChat(conv, 24);
check(a1.firstRole === "assistant", "turn 1: first chunk has delta.role = assistant");
check(a1.chunks === 24 && a1.content.length === 24, `turn 1: 24 content chunks / characters (got ${a1.chunks}/${a1.content.length})`);
check(a1.done, "turn 1: stream ends with data: [DONE]");
check(a1.finish === "length", `turn 1: finish_reason length (got ${a1.finish})`);
const p1 = expectedPromptTokens(conv);
check(a1.usage?.prompt_tokens === p1, `turn 1: prompt_tokens ${p1} (got ${a1.usage?.prompt_tokens})`);
check(a1.usage?.completion_tokens === 24 && a1.usage?.total_tokens === p1 + 24, "turn 1: completion_tokens 24, total");
check(a1.usage?.prompt_tokens_details?.cached_tokens === 0, `turn 1: cached_tokens 0 (got ${a1.usage?.prompt_tokens_details?.cached_tokens})`);

conv.push({role: "assistant", content: a1.content}, {role: "user", content: "And what about eviction?"});
const a2 = await streamChat(conv, 17);
const p2 = expectedPromptTokens(conv);
check(a2.chunks === 17 && a2.usage?.completion_tokens === 17, `turn 2: exactly 17 tokens (got ${a2.chunks}/${a2.usage?.completion_tokens})`);
check(a2.usage?.prompt_tokens === p2, `turn 2: prompt_tokens ${p2} (got ${a2.usage?.prompt_tokens})`);
const c2 = a2.usage?.prompt_tokens_details?.cached_tokens;
check(c2 > 0, `turn 2: cached_tokens > 0 (got ${c2})`);
check(c2 === p1 + 24 - 1, `turn 2: cached_tokens = turn-1 prompt + answer - 1 = ${p1 + 23} (got ${c2})`);

// Non-streaming, min_tokens = max_tokens forces the length.
const ns = await post("/v1/chat/completions", {model: "tiny-llama", messages: [{role: "user", content: "hi"}],
  max_tokens: 9, min_tokens: 9, temperature: 0});
check(ns.status === 200 && ns.json?.choices?.[0]?.message?.content?.length === 9 && ns.json?.usage?.completion_tokens === 9,
  "non-streaming: 200, 9 characters, usage.completion_tokens 9");
check(ns.json?.object === "chat.completion" && ns.json?.choices?.[0]?.message?.role === "assistant", "non-streaming: response shape");

// ignore_eos alone also forces max_tokens; temperature 0 is greedy, hence repeatable.
const ie = await post("/v1/chat/completions", {messages: [{role: "user", content: "hi"}], max_tokens: 12,
  ignore_eos: true, temperature: 0});
check(ie.json?.usage?.completion_tokens === 12 && ie.json?.choices?.[0]?.finish_reason === "length",
  "ignore_eos: exactly max_tokens, finish_reason length");
check(ie.json?.choices?.[0]?.message?.content?.slice(0, 9) === ns.json?.choices?.[0]?.message?.content,
  "temperature 0: the same prompt gives the same tokens");

const after = await metrics();
const queried = p1 + p2 + 2 * expectedPromptTokens([{role: "user", content: "hi"}]);
check(after["vllm:prefix_cache_queries_total"] - before["vllm:prefix_cache_queries_total"] === queried,
  `metrics: prefix_cache_queries_total +${queried}`);
// The "hi" prompt is sent twice; the second time it reuses all but its last token.
const hits = c2 + expectedPromptTokens([{role: "user", content: "hi"}]) - 1;
check(after["vllm:prefix_cache_hits_total"] - before["vllm:prefix_cache_hits_total"] === hits,
  `metrics: prefix_cache_hits_total +${hits} (got +${after["vllm:prefix_cache_hits_total"] - before["vllm:prefix_cache_hits_total"]})`);
check(after["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"] === 24 + 17 + 9 + 12,
  "metrics: generation_tokens_total +62");
check(after["vllm:prompt_tokens_total"] - before["vllm:prompt_tokens_total"] === queried, "metrics: prompt_tokens_total");
check(after["vllm:num_requests_running"] === 0 && after["vllm:num_requests_waiting"] === 0, "metrics: idle after the requests");

// Concurrency beyond --slots (2): all complete, with exact lengths.
const par = await Promise.all([0, 1, 2, 3].map((i) => streamChat([{role: "user", content: `parallel ${i}`}], 5 + i)));
check(par.every((r, i) => r.chunks === 5 + i && r.done), "4 concurrent streams on 2 slots: all complete with exact lengths");

// A client that disconnects mid-stream does not hurt the server.
const ac = new AbortController();
const r = await fetch(url + "/v1/chat/completions", {method: "POST", signal: ac.signal,
  body: JSON.stringify({messages: [{role: "user", content: "x"}], stream: true, max_tokens: 200, min_tokens: 200})});
const reader = r.body.getReader();
await reader.read();
ac.abort();
await new Promise((res) => setTimeout(res, 300));

// Bad requests: 400/404 with an OpenAI-style error object; the server keeps serving.
const bad = [
  ["invalid JSON", "{not json", 400, true],
  ["no messages", {model: "tiny-llama"}, 400],
  ["empty messages", {messages: []}, 400],
  ["bad role", {messages: [{role: "wizard", content: "x"}]}, 400],
  ["content not a string", {messages: [{role: "user", content: 7}]}, 400],
  ["max_tokens not an integer", {messages: hi, max_tokens: "ten"}, 400],
  ["min_tokens > max_tokens", {messages: hi, max_tokens: 3, min_tokens: 4}, 400],
  ["too long for the context", {messages: hi, max_tokens: 100000}, 400],
  ["unknown model", {model: "gpt-9", messages: hi}, 404],
  ["body not an object", "[1,2]", 400, true],
];
for (const [what, body, status, raw] of bad) {
  const res = await post("/v1/chat/completions", body, raw);
  check(res.status === status && typeof res.json?.error?.message === "string", `bad request (${what}): ${status} with error.message (got ${res.status})`);
}
const nf = await fetch(url + "/nope");
check(nf.status === 404, "unknown path: 404");
const after2 = await post("/v1/chat/completions", {messages: hi, max_tokens: 3, min_tokens: 3});
check(after2.status === 200 && after2.json?.usage?.completion_tokens === 3, "server still serves after bad input and a disconnect");
const m3 = await metrics();
check(m3["vllm:num_requests_running"] === 0 && m3["vllm:num_requests_waiting"] === 0, "metrics: idle at the end");

console.log(failures === 0 ? "smoke test passed" : `smoke test FAILED (${failures} checks)`);
process.exit(failures === 0 ? 0 : 1);
EOF

status=0
(cd "$here" && node "$work/client.mjs" "$url") || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- server stderr ---"
  cat "$work/server.err"
fi
kill "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
server_pid=""
exit "$status"
