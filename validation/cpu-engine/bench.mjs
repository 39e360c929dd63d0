// Measures a running server.mjs (or any OpenAI-compatible server with the same tokenization)
// through its HTTP API, the way a client sees it:
//   - cold prefill: TTFT of single requests (max_tokens 1) with prompts of several lengths that
//     share nothing with the cached sequences; least-squares fit TTFT = a + b * uncached_tokens
//     gives b = prefill ms/token and a = fixed overhead;
//   - cached-prefix TTFT: the same long prompt sent twice; the second reuses prompt - 1 tokens;
//   - decode: time between the first and last streamed token / (tokens - 1), one stream alone
//     (batch 1) and N streams at once (batch N).
// Wall-clock times in ms. Usage: node bench.mjs URL [--lengths 256,512,1024,2048] [--decode 64]
//   [--batch 4] [--reps 3]
import {parseArgs} from "node:util";

const {values, positionals} = parseArgs({
  allowPositionals: true,
  options: {
    lengths: {type: "string", default: "256,512,1024,2048"},
    decode: {type: "string", default: "64"},
    batch: {type: "string", default: "4"},
    reps: {type: "string", default: "3"},
  },
});
if (positionals.length !== 1) {
  process.stderr.write("usage: node bench.mjs URL [--lengths 256,512,1024,2048] [--decode 64] [--batch 4] [--reps 3]\n");
  process.exit(2);
}
const url = positionals[0].replace(/\/+$/, "");
const lengths = values.lengths.split(",").map(Number);
const decodeTokens = Number(values.decode);
const batch = Number(values.batch);
const reps = Number(values.reps);
let salt = 0;

// Text of exactly n tokens (ASCII letters and spaces: one token per character), unique per call
// from its first characters on so it shares no prefix with earlier prompts beyond the template.
function text(n) {
  const tag = `${(salt++).toString(36)}${"qzxj"[salt % 4]}`;
  const words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu ";
  let s = tag + " ";
  while (s.length < n) s += words;
  return s.slice(0, n);
}

async function chat(content, maxTokens) {
  const t0 = performance.now();
  const r = await fetch(`${url}/v1/chat/completions`, {method: "POST", headers: {"content-type": "application/json"},
    body: JSON.stringify({model: "tiny-llama", messages: [{role: "user", content}], stream: true,
      stream_options: {include_usage: true}, max_tokens: maxTokens, min_tokens: maxTokens, temperature: 0})});
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  const decoder = new TextDecoder();
  let buf = "";
  let first = null;
  let last = null;
  let usage = null;
  let tokens = 0;
  for await (const chunk of r.body) {
    buf += decoder.decode(chunk, {stream: true});
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (!ev.startsWith("data: ") || ev === "data: [DONE]") continue;
      const c = JSON.parse(ev.slice(6));
      if (c.usage) usage = c.usage;
      if (c.choices?.[0]?.delta?.content) {
        const now = performance.now();
        first ??= now;
        last = now;
        tokens++;
      }
    }
  }
  return {ttft: first - t0, decodeSpan: last - first, tokens, usage};
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x, d = 2) => x.toFixed(d);

// Warm-up (first evaluation allocates buffers).
await chat(text(64), 2);

console.log(`server ${url}`);
console.log("\ncold prefill (max_tokens 1), median of", reps);
const pts = [];
for (const n of lengths) {
  const runs = [];
  for (let r = 0; r < reps; r++) runs.push(await chat(text(n), 1));
  const ttft = median(runs.map((x) => x.ttft));
  const u = runs[0].usage;
  const uncached = u.prompt_tokens - u.prompt_tokens_details.cached_tokens;
  pts.push([uncached, ttft]);
  console.log(`  prompt ${u.prompt_tokens} tokens (${uncached} computed): TTFT ${fmt(ttft, 1)} ms = ${fmt(ttft / uncached, 3)} ms/token`);
}
const mx = pts.reduce((s, p) => s + p[0], 0) / pts.length;
const my = pts.reduce((s, p) => s + p[1], 0) / pts.length;
const slope = pts.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0) / pts.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
console.log(`  fit: TTFT = ${fmt(my - slope * mx, 1)} ms + ${fmt(slope, 3)} ms/token x computed tokens`);

console.log("\ncached-prefix TTFT (same prompt twice)");
const nLong = Math.max(...lengths);
const longText = text(nLong);
const cold = await chat(longText, 1);
const hot = [];
for (let r = 0; r < reps; r++) hot.push(await chat(longText, 1));
console.log(`  prompt ${cold.usage.prompt_tokens}: cold TTFT ${fmt(cold.ttft, 1)} ms; cached ` +
  `(${hot[0].usage.prompt_tokens_details.cached_tokens} reused) TTFT ${fmt(median(hot.map((x) => x.ttft)), 1)} ms`);

console.log(`\ndecode (${decodeTokens} tokens, short prompt)`);
const one = [];
for (let r = 0; r < reps; r++) one.push(await chat(text(32), decodeTokens));
const tpot1 = median(one.map((x) => x.decodeSpan / (x.tokens - 1)));
console.log(`  batch 1: ${fmt(tpot1)} ms/token`);
const many = await Promise.all(Array.from({length: batch}, () => chat(text(32), decodeTokens)));
const tpotN = median(many.map((x) => x.decodeSpan / (x.tokens - 1)));
console.log(`  batch ${batch}: ${fmt(tpotN)} ms/token per stream (${fmt(tpotN / batch)} ms per token generated)`);
