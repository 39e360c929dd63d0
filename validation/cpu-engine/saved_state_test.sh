#!/usr/bin/env bash
# Test of the CPU engine's saved sequence states: more conversations than sequences, and a
# conversation's next turn still reuses its history. Starts server.mjs with 2 sequences, sends
# turn 1 of conversations A..F (A long, the others short, so A's sequence is taken by later
# conversations and its KV saved to a state file), then turn 2 of A, then a cold request of
# exactly the same prompt length that shares nothing with earlier prompts beyond the template's
# first tokens. Checks:
#   - A's turn 2 reports cached_tokens >= A's turn-1 prompt + answer tokens - 16 (one vLLM block;
#     the engine reuses prompt + answer - 1, the last sampled token is never fed back);
#   - the cold request reports cached_tokens < 16;
#   - A's turn-2 TTFT is below half the cold request's TTFT (same run, same prompt length), a
#     ratio, not a wall-clock bound;
#   - /metrics counts at least one restored state and the saved bytes stay under the cap.
# Then, on a second server whose cap holds about two saved states of 223 tokens (each about
# 490 kB with this model's 2 KiB of KV per token and the logits): after six conversations the
# oldest states were dropped and the saved bytes stay under the cap.
#
#   validation/cpu-engine/saved_state_test.sh [--model EXISTING.gguf]
#
# Without --model it generates a small model (4 layers, width 256). Needs node (20+), python3,
# and ./install.sh (it runs it; a no-op once installed). Exits non-zero on any failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=test_lib.sh
source "$here/test_lib.sh"
use_model "${1:-}" "${2:-}" 4 256 768

start_server_capped() {  # $1 = --saved-state-bytes; sets server_pid and url
  start_server --slots 2 --ctx 2048 --saved-state-bytes "$1" --state-dir "$work/states"
  echo "server at $url (saved states up to $1 bytes)"
}

cat >"$work/client.mjs" <<'EOF'
const [url, capText, mode] = process.argv.slice(2);
const cap = Number(capText);
let failures = 0;
const check = (cond, what) => {
  console.log(`${cond ? "ok  " : "FAIL"} ${what}`);
  if (!cond) failures++;
};

// ASCII text of n characters (n tokens, README.md's tokenization rule), different for each seed:
// lowercase letters from a linear congruential generator.
function text(seed, n) {
  let x = (seed * 2654435761 + 12345) >>> 0;
  let out = "";
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out += String.fromCharCode(97 + (x >>> 24) % 26);
  }
  return out;
}

// One streamed chat completion (min_tokens = max_tokens, greedy); TTFT = time to the first
// content token (the role chunk is sent before any computation).
async function chat(messages, answerTokens) {
  const t0 = performance.now();
  const r = await fetch(url + "/v1/chat/completions", {method: "POST", headers: {"content-type": "application/json"},
    body: JSON.stringify({messages, stream: true, stream_options: {include_usage: true}, temperature: 0,
      max_tokens: answerTokens, min_tokens: answerTokens})});
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  let buf = "";
  let ttft = null;
  let answer = "";
  let usage = null;
  const decoder = new TextDecoder();
  for await (const chunk of r.body) {
    buf += decoder.decode(chunk, {stream: true});
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (!ev.startsWith("data: ") || ev === "data: [DONE]") continue;
      const j = JSON.parse(ev.slice(6));
      if (j.error) throw new Error(j.error.message);
      const piece = j.choices?.[0]?.delta?.content;
      if (piece) {
        if (ttft === null) ttft = performance.now() - t0;
        answer += piece;
      }
      if (j.usage) usage = j.usage;
    }
  }
  return {ttft, answer, usage};
}

async function metrics() {
  const out = {};
  for (const line of (await (await fetch(url + "/metrics")).text()).split("\n")) {
    const m = /^([a-z_:]+)\{[^}]*\} (\S+)$/.exec(line);
    if (m && !(m[1] in out)) out[m[1]] = Number(m[2]);
  }
  return out;
}

const answer = 16;
if (mode === "cap") {
  for (const name of "ABCDEF") await chat([{role: "user", content: text(name.charCodeAt(0), 200)}], answer);
  const m = await metrics();
  console.log(`metrics: states saved ${m["cpu_engine:states_saved_total"]}, dropped ` +
    `${m["cpu_engine:states_dropped_total"]}, held ${m["cpu_engine:saved_states"]} (${m["cpu_engine:saved_state_bytes"]} bytes)`);
  check(m["cpu_engine:states_saved_total"] >= 6, "the 6 conversations were saved (after each request; again on eviction once dropped)");
  check(m["cpu_engine:states_dropped_total"] >= 1, "the oldest saved states were dropped");
  check(m["cpu_engine:saved_states"] >= 1, "the newest saved state is kept");
  check(m["cpu_engine:saved_state_bytes"] <= cap, `saved bytes within the cap (${m["cpu_engine:saved_state_bytes"]} <= ${cap})`);
  process.exit(failures === 0 ? 0 : 1);
}
const first = {};
const lengths = {A: 700, B: 200, C: 200, D: 200, E: 200, F: 200};
for (const [name, n] of Object.entries(lengths)) {
  const messages = [{role: "user", content: text(name.charCodeAt(0), n)}];
  first[name] = {messages, ...(await chat(messages, answer))};
  console.log(`turn 1 of ${name}: prompt ${first[name].usage.prompt_tokens}, cached ` +
    `${first[name].usage.prompt_tokens_details.cached_tokens}, TTFT ${first[name].ttft.toFixed(0)} ms`);
}
const a1 = first.A;
const a2messages = [...a1.messages, {role: "assistant", content: a1.answer},
  {role: "user", content: text(1001, 40)}];
const a2 = await chat(a2messages, answer);
const a1tokens = a1.usage.prompt_tokens + a1.usage.completion_tokens;
console.log(`turn 2 of A: prompt ${a2.usage.prompt_tokens}, cached ${a2.usage.prompt_tokens_details.cached_tokens}, ` +
  `TTFT ${a2.ttft.toFixed(0)} ms`);
// One user message of L characters is L + 9 (message) + 14 (BOS, generation prompt) tokens.
const coldMessages = [{role: "user", content: text(2002, a2.usage.prompt_tokens - 23)}];
const cold = await chat(coldMessages, answer);
console.log(`cold request: prompt ${cold.usage.prompt_tokens}, cached ${cold.usage.prompt_tokens_details.cached_tokens}, ` +
  `TTFT ${cold.ttft.toFixed(0)} ms`);
const m = await metrics();
console.log(`metrics: states saved ${m["cpu_engine:states_saved_total"]}, restored ` +
  `${m["cpu_engine:states_restored_total"]}, held ${m["cpu_engine:saved_states"]} (${m["cpu_engine:saved_state_bytes"]} bytes)`);

check(a1.usage.completion_tokens === answer, `turn 1 of A has ${answer} answer tokens`);
check(a2.usage.prompt_tokens_details.cached_tokens >= a1tokens - 16,
  `A's turn 2 reuses >= turn-1 prompt + answer - 16 = ${a1tokens - 16} tokens ` +
  `(got ${a2.usage.prompt_tokens_details.cached_tokens})`);
check(a2.usage.prompt_tokens_details.cached_tokens <= a2.usage.prompt_tokens - 1,
  "cached_tokens < prompt_tokens (the last prompt token is always computed)");
check(cold.usage.prompt_tokens === a2.usage.prompt_tokens, `the cold request has A's turn-2 length (${cold.usage.prompt_tokens})`);
check(cold.usage.prompt_tokens_details.cached_tokens < 16,
  `the cold request reuses < 16 tokens (got ${cold.usage.prompt_tokens_details.cached_tokens})`);
check(a2.ttft < 0.5 * cold.ttft,
  `A's turn-2 TTFT is below half the cold TTFT (ratio ${(a2.ttft / cold.ttft).toFixed(3)})`);
check(m["cpu_engine:states_restored_total"] >= 1, "at least one saved state was loaded back");
check(m["cpu_engine:states_saved_total"] >= 6, "the conversations were saved (>= 6)");
check(m["cpu_engine:saved_state_bytes"] > 0 && m["cpu_engine:saved_state_bytes"] <= cap,
  `saved bytes within the cap (${m["cpu_engine:saved_state_bytes"]} <= ${cap})`);
process.exit(failures === 0 ? 0 : 1);
EOF

start_server_capped $((256 * 1024 * 1024))
node "$work/client.mjs" "$url" $((256 * 1024 * 1024)) || { echo "FAIL (server log below)"; tail -20 "$work/server.err"; exit 1; }
stop_server
start_server_capped 1200000
node "$work/client.mjs" "$url" 1200000 cap || { echo "FAIL (server log below)"; tail -20 "$work/server.err"; exit 1; }
stop_server
[ -z "$(ls -A "$work/states" 2>/dev/null)" ] || { echo "FAIL: state files left after shutdown"; exit 1; }
echo "ok   no state files left after shutdown"
echo "PASS"
