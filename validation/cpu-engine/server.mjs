// A minimal OpenAI-compatible chat-completions server on llama.cpp's CPU engine (node-llama-cpp),
// for exercising kvsim's validation harness (replay / probe / validate) end to end without a GPU.
//
// What it models: one vLLM-like serving instance. One llama.cpp context holds --slots sequences of
// --ctx tokens each (KV cache = slots x ctx tokens). A request takes one sequence; it reuses the
// idle sequence whose evaluated tokens share the longest prefix with its prompt (real prefix
// reuse: only the prompt's new tokens are computed), reports the reused count as
// usage.prompt_tokens_details.cached_tokens, and evicts the least recently used sequence when it
// needs a fresh one. A sequence's KV is saved to a state file after each request, in the
// background (node-llama-cpp's LlamaContextSequence.saveStateToFile; on eviction if not saved
// yet), kept in an LRU of at most --saved-state-bytes, and loaded back (loadStateFromFile) into a
// sequence when a later prompt shares a longer prefix with it than with any idle sequence: a
// conversation's next turn finds its history even after its sequence went to others (an offload
// tier in file storage, written through as vLLM's offloading connector stores). Up to --slots requests run at once
// (llama.cpp evaluates their tokens in shared batches); more wait in a FIFO queue. Times are
// wall-clock; token counts are the model's tokens.
//
// Endpoints: POST /v1/chat/completions (streaming SSE or JSON), POST /tokenize, POST /detokenize,
// GET /v1/models, GET /health, GET /metrics (Prometheus text, vLLM metric names).
// See README.md for the chat template and the tokenization rule.

import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import {randomUUID} from "node:crypto";
import {parseArgs} from "node:util";

const USAGE = `usage: node server.mjs --model M.gguf --port P [--host 127.0.0.1] [--threads 2] [--slots 4]
                          [--ctx 4096] [--served-model-name tiny-llama] [--batch 512]
                          [--saved-state-bytes 1073741824] [--state-dir DIR]
       node server.mjs --check     (load the prebuilt CPU backend and exit)
--port 0 picks a free port; the line "listening on http://HOST:PORT" on stdout gives it.`;

const MAX_BODY_BYTES = 64 * 1024 * 1024;
// A sequence whose content the next prompt would erase is saved only when at least this many of
// its tokens would be lost; a saved state is loaded back only when it gives at least this many
// more reusable tokens than the best idle sequence (one vLLM block: below that, a load is not
// worth its file read).
const MIN_SAVE_TOKENS = 16;
const MIN_RESTORE_GAIN = 16;

// ---------------------------------------------------------------------------------------------
// Command line

function parseCommandLine(argv) {
  let values;
  try {
    ({values} = parseArgs({
      args: argv,
      options: {
        model: {type: "string"},
        port: {type: "string"},
        host: {type: "string", default: "127.0.0.1"},
        threads: {type: "string", default: "2"},
        slots: {type: "string", default: "4"},
        ctx: {type: "string", default: "4096"},
        batch: {type: "string", default: "512"},
        "served-model-name": {type: "string", default: "tiny-llama"},
        "saved-state-bytes": {type: "string", default: String(1 << 30)},
        "state-dir": {type: "string"},
        check: {type: "boolean", default: false},
        help: {type: "boolean", short: "h", default: false},
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    fail(`${e.message}\n${USAGE}`);
  }
  if (values.help) {
    process.stdout.write(USAGE + "\n");
    process.exit(0);
  }
  if (values.check) return {check: true};
  const int = (name, min, max) => {
    const s = values[name];
    if (!/^\d+$/.test(s ?? "") || Number(s) < min || Number(s) > max)
      fail(`--${name} must be an integer in [${min}, ${max}], got ${JSON.stringify(s)}\n${USAGE}`);
    return Number(s);
  };
  if (!values.model) fail(`--model is required\n${USAGE}`);
  if (values.port === undefined) fail(`--port is required\n${USAGE}`);
  return {
    check: false,
    model: values.model,
    port: int("port", 0, 65535),
    host: values.host,
    threads: int("threads", 1, 256),
    slots: int("slots", 1, 64),
    ctx: int("ctx", 64, 1 << 20),
    batch: int("batch", 1, 1 << 16),
    servedModelName: values["served-model-name"],
    savedStateBytes: int("saved-state-bytes", 0, Number.MAX_SAFE_INTEGER),
    stateDir: values["state-dir"],
  };
}

function fail(message) {
  process.stderr.write(`server.mjs: ${message}\n`);
  process.exit(2);
}

function log(message) {
  process.stderr.write(`[${new Date().toISOString()}] ${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Errors returned to clients (OpenAI style: {"error": {message, type, param, code}})

class ApiError extends Error {
  constructor(status, message, param = null) {
    super(message);
    this.status = status;
    this.param = param;
  }
}

const ERROR_TYPES = {400: "BadRequestError", 404: "NotFoundError", 405: "MethodNotAllowedError",
  413: "BadRequestError", 500: "InternalServerError", 503: "ServiceUnavailableError"};

function sendJson(res, status, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, {"content-type": "application/json", "content-length": Buffer.byteLength(data)});
  res.end(data);
}

function sendError(res, status, message, param = null) {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, {error: {message, type: ERROR_TYPES[status] ?? "Error", param, code: status}});
}

// ---------------------------------------------------------------------------------------------
// Request parsing and validation

async function readJsonBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new ApiError(413, `request body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  let body;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new ApiError(400, `invalid JSON body: ${e.message}`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new ApiError(400, "the request body must be a JSON object");
  return body;
}

function optInt(body, name, {min = 0, max = Number.MAX_SAFE_INTEGER} = {}) {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max)
    throw new ApiError(400, `'${name}' must be an integer in [${min}, ${max}]`, name);
  return v;
}

function optBool(body, name, dflt) {
  const v = body[name];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "boolean") throw new ApiError(400, `'${name}' must be a boolean`, name);
  return v;
}

function optNumber(body, name, dflt, min, max) {
  const v = body[name];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max)
    throw new ApiError(400, `'${name}' must be a number in [${min}, ${max}]`, name);
  return v;
}

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

function parseMessages(messages) {
  if (!Array.isArray(messages) || messages.length === 0)
    throw new ApiError(400, "'messages' must be a non-empty array", "messages");
  return messages.map((m, i) => {
    if (m === null || typeof m !== "object" || Array.isArray(m))
      throw new ApiError(400, `messages[${i}] must be an object`, "messages");
    if (typeof m.role !== "string" || !ROLES.has(m.role))
      throw new ApiError(400, `messages[${i}].role must be one of ${[...ROLES].join(", ")}`, "messages");
    let content = m.content;
    if (content === undefined || content === null) content = "";
    if (Array.isArray(content)) {
      content = content.map((part, j) => {
        if (part === null || typeof part !== "object" || part.type !== "text" || typeof part.text !== "string")
          throw new ApiError(400, `messages[${i}].content[${j}] must be {"type": "text", "text": string}`, "messages");
        return part.text;
      }).join("");
    }
    if (typeof content !== "string")
      throw new ApiError(400, `messages[${i}].content must be a string or an array of text parts`, "messages");
    return {role: m.role, content};
  });
}

// ---------------------------------------------------------------------------------------------
// Engine: model, chat template, sequences (slots), FIFO queue, metrics

class Engine {
  constructor(llamaModule, model, context, opts) {
    this.llamaModule = llamaModule;
    this.model = model;
    this.context = context;
    this.opts = opts;
    this.ctx = context.contextSize;
    this.slots = [];
    for (let i = 0; i < opts.slots; i++)
      this.slots.push({id: i, seq: context.getSequence(), busy: false, lastUsed: 0, heldTokens: 0, restore: null,
        saving: null});
    this.useCounter = 0;
    this.queue = [];  // FIFO of {prompt, resolve, reject}
    // Saved sequence states, least recently saved first: id -> {id, tokens, file, bytes, claimed}.
    // A claimed entry is being loaded back by a request and is not evicted or offered to others.
    this.saved = new Map();
    this.savedBytes = 0;
    this.savedCounter = 0;
    this.ownsStateDir = !opts.stateDir;
    this.stateDir = opts.stateDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "kvsim-cpu-engine-"));
    fs.mkdirSync(this.stateDir, {recursive: true});
    this.metrics = {
      prefixQueries: 0, prefixHits: 0, promptTokens: 0, generationTokens: 0, preemptions: 0,
      success: {stop: 0, length: 0, abort: 0},
      statesSaved: 0, statesRestored: 0, statesDropped: 0, restoredTokens: 0,
    };
    this.vocabSize = vocabularySize(model);
    this.bos = model.tokens.bos;
    this.special = {};
    for (const name of ["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]) {
      const ids = model.tokenize(name, true);
      if (ids.length !== 1) throw new Error(`the model has no ${name} token; generate it with make_gguf.py`);
      this.special[name] = ids[0];
    }
    // Tokens the model may generate: those whose text is one printable ASCII character and
    // re-tokenizes to the same token (not byte tokens), so the answer text sent back as history
    // in the next turn gives back exactly the generated tokens (and hits the cached KV).
    const never = [];
    const eog = [];
    for (let id = 0; id < this.vocabSize; id++) {
      if (model.isEogToken(id)) {
        eog.push(id);
        continue;
      }
      const text = model.detokenize([id]);
      const back = isPrintableChar(text) ? model.tokenize(text, false) : [];
      if (back.length !== 1 || back[0] !== id) never.push(id);
    }
    this.allowedCount = this.vocabSize - never.length - eog.length;
    this.biasNoEog = this.makeBias(never.concat(eog));
    this.biasWithEog = this.makeBias(never);
  }

  makeBias(tokens) {
    const bias = new this.llamaModule.TokenBias(this.model.tokenizer);
    for (const t of tokens) {
      if (this.model.isEogToken(t)) {
        // TokenBias.set() ignores end-of-generation tokens, but min_tokens / ignore_eos need EOS
        // and EOT banned; the sampler itself honours a -inf logit bias on them. Internal field of
        // the pinned node-llama-cpp 3.21.1 (checked at startup and by smoke_test.sh).
        if (!(bias._biases instanceof Map)) throw new Error("node-llama-cpp TokenBias has no _biases map");
        bias._biases.set(t, -Infinity);
      } else {
        bias.set(t, "never");
      }
    }
    return bias;
  }

  tokenizeText(text) {
    return this.model.tokenize(text, false);
  }

  // Chat template (Llama-3-like, special tokens are single tokens, text is not trimmed):
  //   <s> then per message: <|start_header_id|>ROLE<|end_header_id|>\n\nCONTENT<|eot_id|>
  //   then, with a generation prompt: <|start_header_id|>assistant<|end_header_id|>\n\n
  applyTemplate(messages, addGenerationPrompt = true) {
    const sp = this.special;
    const out = [this.bos];
    const header = (role) => {
      out.push(sp["<|start_header_id|>"], ...this.tokenizeText(role), sp["<|end_header_id|>"],
        ...this.tokenizeText("\n\n"));
    };
    for (const m of messages) {
      header(m.role);
      out.push(...this.tokenizeText(m.content), sp["<|eot_id|>"]);
    }
    if (addGenerationPrompt) header("assistant");
    return out;
  }

  // --- slots ---

  // Picks an idle slot for a prompt, or null when all are busy; sets slot.restore to the saved
  // state to load into it first, if any. Rule, longest common token prefix first: when a saved
  // state shares at least MIN_RESTORE_GAIN more tokens with the prompt than every idle sequence,
  // it is loaded into an empty sequence, else into the least recently used one (whose content is
  // saved first). Otherwise the idle sequence with the longest common prefix when that prefix is
  // its whole content (a conversation's next turn) or at least half the prompt; otherwise an empty
  // sequence; otherwise the least recently used one.
  pickSlot(prompt) {
    const idle = this.slots.filter((s) => !s.busy);
    if (idle.length === 0) return null;
    const usable = (c) => Math.min(c, prompt.length - 1);
    let best = null;
    let bestCommon = -1;
    for (const s of idle) {
      const c = commonPrefix(s.seq.contextTokens, prompt);
      if (c > bestCommon || (c === bestCommon && s.lastUsed < best.lastUsed)) {
        best = s;
        bestCommon = c;
      }
    }
    let restore = null;
    let restoreCommon = 0;
    for (const e of this.saved.values()) {
      if (e.claimed) continue;
      const c = commonPrefix(e.tokens, prompt);
      if (c > restoreCommon) {
        restore = e;
        restoreCommon = c;
      }
    }
    const empty = idle.find((s) => s.seq.nextTokenIndex === 0);
    const lru = () => idle.reduce((a, b) => (b.lastUsed < a.lastUsed ? b : a));
    if (restore && usable(restoreCommon) >= usable(bestCommon) + MIN_RESTORE_GAIN) {
      restore.claimed = true;
      const slot = empty ?? lru();
      slot.restore = restore;
      return slot;
    }
    const held = best.seq.nextTokenIndex;
    if (bestCommon > 0 && (bestCommon === held || 2 * bestCommon >= prompt.length)) return best;
    return empty ?? lru();
  }

  // --- saved sequence states (an LRU with a byte cap, --saved-state-bytes) ---

  // Saves a sequence's KV to a state file, unless a saved state already holds the same tokens or
  // more; drops saved states whose tokens are a prefix of the new one, then the least recently
  // saved ones until the total is under the cap. The entry is listed (pending) from the start, so
  // the conversation's next turn, if it comes while the file is being written, finds it and waits
  // for it. Failures are logged and leave nothing behind.
  async saveState(slot) {
    const cap = this.opts.savedStateBytes;
    if (cap === 0) return;
    const seq = slot.seq;
    const tokens = seq.contextTokens;
    for (const e of this.saved.values()) {
      if (!e.claimed && commonPrefix(e.tokens, tokens) === tokens.length) {
        this.saved.delete(e.id);  // already saved: refresh its place in the LRU
        this.saved.set(e.id, e);
        return;
      }
    }
    const id = ++this.savedCounter;
    const file = path.join(this.stateDir, `seq-${id}.state`);
    const entry = {id, tokens, file, bytes: 0, claimed: false, pending: null};
    let settle;
    entry.pending = new Promise((resolve) => (settle = resolve));
    this.saved.set(id, entry);
    let ok = false;
    try {
      ({fileSize: entry.bytes} = await seq.saveStateToFile(file));
      ok = entry.bytes <= cap;
      if (!ok) this.metrics.statesDropped++;
    } catch (e) {
      log(`cannot save a sequence state to ${file}: ${e?.message ?? e}`);
    }
    entry.pending = null;
    if (!ok) {
      this.saved.delete(id);
      fs.rmSync(file, {force: true});
      settle(false);
      return;
    }
    this.savedBytes += entry.bytes;
    this.metrics.statesSaved++;
    const idle = (e) => !e.claimed && e.pending === null;
    for (const e of [...this.saved.values()])
      if (e !== entry && idle(e) && commonPrefix(e.tokens, tokens) === e.tokens.length) this.dropSaved(e);
    for (const e of [...this.saved.values()]) {
      if (this.savedBytes <= cap) break;
      if (!idle(e)) continue;
      this.dropSaved(e);
      this.metrics.statesDropped++;
    }
    log(`saved sequence ${slot.id} (${tokens.length} tokens, ${entry.bytes} bytes) as state ${id}`);
    settle(true);
  }

  dropSaved(entry) {
    if (!this.saved.delete(entry.id)) return;
    this.savedBytes -= entry.bytes;
    fs.rmSync(entry.file, {force: true});
  }

  // At exit: deletes the state files (and the directory when the engine made it).
  removeStateDir() {
    for (const e of [...this.saved.values()]) this.dropSaved(e);
    if (this.ownsStateDir) fs.rmSync(this.stateDir, {recursive: true, force: true});
  }

  // Before a request computes on its slot: waits for the slot's background save, saves the
  // sequence's content (when not saved already) if the prompt (or a state to be loaded) would
  // erase at least MIN_SAVE_TOKENS of it, then loads the claimed saved
  // state, if any (and forgets it: its tokens now live in the sequence).
  async prepareSlot(slot, prompt) {
    const seq = slot.seq;
    if (slot.saving !== null) await slot.saving;
    const restore = slot.restore;
    slot.restore = null;
    const keep = restore ? 0 : Math.min(commonPrefix(seq.contextTokens, prompt), prompt.length - 1);
    if (seq.nextTokenIndex - keep >= MIN_SAVE_TOKENS) await this.saveState(slot);
    if (!restore) return;
    try {
      if (restore.pending !== null && !(await restore.pending)) return;  // its save failed
      await seq.loadStateFromFile(restore.file, {acceptRisk: true});
      this.metrics.statesRestored++;
      this.metrics.restoredTokens += seq.nextTokenIndex;
      log(`loaded state ${restore.id} (${seq.nextTokenIndex} tokens) into sequence ${slot.id}`);
    } catch (e) {
      log(`cannot load the sequence state ${restore.file}: ${e?.message ?? e}`);
      if (seq.nextTokenIndex > 0) await seq.eraseContextTokenRanges([{start: 0, end: seq.nextTokenIndex}]);
    } finally {
      this.dropSaved(restore);
    }
  }

  // Queues a request; returns {entry, slot: Promise}. cancel(entry) withdraws it while waiting.
  acquire(prompt) {
    const entry = {prompt};
    const slot = new Promise((resolve, reject) => {
      entry.resolve = resolve;
      entry.reject = reject;
    });
    this.queue.push(entry);
    this.dispatch();
    return {entry, slot};
  }

  cancel(entry) {
    const i = this.queue.indexOf(entry);
    if (i >= 0) {
      this.queue.splice(i, 1);
      entry.reject(new Error("cancelled"));
    }
  }

  dispatch() {
    while (this.queue.length > 0) {
      const head = this.queue[0];
      const slot = this.pickSlot(head.prompt);
      if (!slot) return;
      this.queue.shift();
      slot.busy = true;
      slot.lastUsed = ++this.useCounter;
      head.resolve(slot);
    }
  }

  // Frees a slot after its request. Its content is then saved in the background (write-through,
  // as vLLM's offloading connector stores a finished request's blocks), off every request's
  // critical path, so that evicting it later costs nothing; a request that takes the slot
  // first waits for that save (prepareSlot).
  release(slot) {
    if (slot.restore) {
      slot.restore.claimed = false;  // withdrawn before it was loaded
      slot.restore = null;
    }
    slot.busy = false;
    slot.heldTokens = 0;
    slot.lastUsed = ++this.useCounter;
    if (this.opts.savedStateBytes > 0 && slot.seq.nextTokenIndex >= MIN_SAVE_TOKENS && slot.saving === null) {
      slot.saving = this.saveState(slot)
        .catch((e) => log(`cannot save sequence ${slot.id}: ${e?.stack ?? e}`))
        .finally(() => {
          slot.saving = null;
        });
    }
    this.dispatch();
  }

  // --- generation ---

  // Runs one request on a slot. onToken(text, isLast) is called per generated token (isLast: it
  // is the max_tokens-th). Returns
  // {cachedTokens, completionTokens, finishReason}. isAborted() is polled between tokens.
  async generate(slot, prompt, {maxTokens, minTokens, ignoreEos, temperature, seed}, onToken, isAborted) {
    const seq = slot.seq;
    const prepareStart = performance.now();
    await this.prepareSlot(slot, prompt);
    const prepareMs = performance.now() - prepareStart;
    let firstTokenMs = -1;
    // Reuse the common prefix, at most prompt.length - 1 tokens (the last prompt token must be
    // evaluated to get the next-token distribution), and drop the rest of the sequence.
    const cached = Math.min(commonPrefix(seq.contextTokens, prompt), prompt.length - 1);
    if (seq.nextTokenIndex > cached)
      await seq.eraseContextTokenRanges([{start: cached, end: seq.nextTokenIndex}]);
    slot.heldTokens = prompt.length;
    this.metrics.prefixQueries += prompt.length;
    this.metrics.prefixHits += cached;
    this.metrics.promptTokens += prompt.length;

    let produced = 0;
    let finishReason = "length";
    const bias = () => (ignoreEos || produced < minTokens ? this.biasNoEog : this.biasWithEog);
    const options = {temperature, tokenBias: bias, yieldEogToken: true};
    if (temperature > 0 && seed !== undefined) options.seed = seed;
    if (maxTokens > 0) {
      for await (const token of seq.evaluate(prompt.slice(cached), options)) {
        if (this.model.isEogToken(token)) {
          finishReason = "stop";
          break;
        }
        produced++;
        if (produced === 1) firstTokenMs = performance.now() - prepareStart - prepareMs;
        this.metrics.generationTokens++;
        slot.heldTokens = prompt.length + produced;
        onToken(this.model.detokenize([token]), produced >= maxTokens);
        if (produced >= maxTokens) break;
        if (isAborted()) {
          finishReason = "abort";
          break;
        }
      }
    } else {
      await seq.evaluateWithoutGeneratingNewTokens(prompt.slice(cached));
    }
    this.metrics.success[finishReason]++;
    return {cachedTokens: cached, completionTokens: produced, finishReason, prepareMs, firstTokenMs};
  }

  kvUsage() {
    let used = 0;
    for (const s of this.slots) if (s.busy) used += s.heldTokens;
    return used / (this.ctx * this.slots.length);
  }

  running() {
    return this.slots.filter((s) => s.busy).length;
  }
}

function vocabularySize(model) {
  const md = model.fileInfo?.metadata;
  const n = md?.tokenizer?.ggml?.tokens?.length ?? md?.llama?.vocab_size;
  if (!Number.isInteger(n) || n <= 0) throw new Error("cannot read the vocabulary size from the model file");
  return n;
}

function isPrintableChar(text) {
  return text.length === 1 && text.charCodeAt(0) >= 0x20 && text.charCodeAt(0) < 0x7f;
}

function commonPrefix(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

// ---------------------------------------------------------------------------------------------
// HTTP handlers

function handleChat(engine, opts, body, req, res) {
  if (body.model !== undefined && body.model !== opts.servedModelName)
    throw new ApiError(404, `The model \`${body.model}\` does not exist.`, "model");
  const messages = parseMessages(body.messages);
  const stream = optBool(body, "stream", false);
  let includeUsage = false;
  if (body.stream_options !== undefined && body.stream_options !== null) {
    if (typeof body.stream_options !== "object" || Array.isArray(body.stream_options))
      throw new ApiError(400, "'stream_options' must be an object", "stream_options");
    includeUsage = optBool(body.stream_options, "include_usage", false);
  }
  const n = optInt(body, "n", {min: 1, max: 1});
  void n;
  const maxCompletion = optInt(body, "max_completion_tokens", {min: 1});
  const maxTokensField = optInt(body, "max_tokens", {min: 1});
  const minTokens = optInt(body, "min_tokens", {min: 0}) ?? 0;
  const temperature = optNumber(body, "temperature", 1.0, 0, 2);
  const ignoreEos = optBool(body, "ignore_eos", false);
  const seed = optInt(body, "seed", {min: 0, max: 2 ** 32 - 1});

  const prompt = engine.applyTemplate(messages);
  const room = engine.ctx - prompt.length;
  const requested = maxCompletion ?? maxTokensField;
  if (room < 1 || (requested !== undefined && requested > room)) {
    throw new ApiError(400,
      `This model's maximum context length is ${engine.ctx} tokens. However, you requested ` +
      `${prompt.length + (requested ?? 1)} tokens (${prompt.length} in the messages, ${requested ?? 1} in the ` +
      `completion). Please reduce the length of the messages or completion.`, "messages");
  }
  const maxTokens = requested ?? room;
  if (minTokens > maxTokens)
    throw new ApiError(400, `'min_tokens' (${minTokens}) must be at most max_tokens (${maxTokens})`, "min_tokens");

  const id = `chatcmpl-${randomUUID().replaceAll("-", "")}`;
  const created = Math.floor(Date.now() / 1000);
  const model = opts.servedModelName;
  let aborted = false;
  const queuedAt = performance.now();
  const waiting = engine.acquire(prompt);
  res.on("close", () => {
    if (!res.writableFinished) {
      aborted = true;
      engine.cancel(waiting.entry);
    }
  });

  return (async () => {
    let slot;
    try {
      slot = await waiting.slot;
    } catch {
      return;
    }
    if (aborted) {
      engine.release(slot);
      return;
    }
    const queueMs = performance.now() - queuedAt;
    const writeChunk = (choices, usage) => {
      const chunk = {id, object: "chat.completion.chunk", created, model, choices};
      if (usage !== undefined) chunk.usage = usage;
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    };
    let text = "";
    let sentFinish = false;
    try {
      if (stream) {
        res.writeHead(200, {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache",
          "connection": "keep-alive"});
        writeChunk([{index: 0, delta: {role: "assistant", content: ""}, logprobs: null, finish_reason: null}]);
      }
      const result = await engine.generate(slot, prompt, {maxTokens, minTokens, ignoreEos, temperature, seed},
        (piece, isLast) => {
          // As vLLM does, the chunk of the last token carries finish_reason "length".
          if (stream) {
            writeChunk([{index: 0, delta: {content: piece}, logprobs: null, finish_reason: isLast ? "length" : null,
              ...(isLast ? {stop_reason: null} : {})}]);
            sentFinish ||= isLast;
          } else {
            text += piece;
          }
        }, () => aborted);
      if (aborted) return;
      // Where a request's time to first token went (for comparing with a simulation).
      log(`request ${id}: ${prompt.length} prompt tokens, ${result.cachedTokens} reused; waited ` +
        `${queueMs.toFixed(1)} ms for a sequence, ${result.prepareMs.toFixed(1)} ms to prepare it ` +
        `(saves, loads), ${result.firstTokenMs.toFixed(1)} ms to the first token`);
      const usage = {
        prompt_tokens: prompt.length,
        completion_tokens: result.completionTokens,
        total_tokens: prompt.length + result.completionTokens,
        prompt_tokens_details: {cached_tokens: result.cachedTokens},
      };
      const finishReason = result.finishReason === "abort" ? "length" : result.finishReason;
      if (stream) {
        if (!sentFinish)
          writeChunk([{index: 0, delta: {content: ""}, logprobs: null, finish_reason: finishReason, stop_reason: null}]);
        if (includeUsage) writeChunk([], usage);
        res.end("data: [DONE]\n\n");
      } else {
        sendJson(res, 200, {
          id, object: "chat.completion", created, model,
          choices: [{index: 0, message: {role: "assistant", content: text}, logprobs: null,
            finish_reason: finishReason, stop_reason: null}],
          usage,
        });
      }
    } catch (e) {
      if (!stream || !res.headersSent) throw e;
      // Mid-stream failure: report it as an error event (as vLLM does) and close the stream.
      log(`internal error during generation: ${e?.stack ?? e}`);
      if (!res.writableEnded) {
        res.write(`data: ${JSON.stringify({error: {message: `internal error: ${e?.message ?? e}`,
          type: "InternalServerError", param: null, code: 500}})}\n\n`);
        res.end("data: [DONE]\n\n");
      }
    } finally {
      engine.release(slot);
    }
  })();
}

function handleTokenize(engine, opts, body) {
  if (body.model !== undefined && body.model !== opts.servedModelName)
    throw new ApiError(404, `The model \`${body.model}\` does not exist.`, "model");
  let tokens;
  if (body.messages !== undefined) {
    const messages = parseMessages(body.messages);
    tokens = engine.applyTemplate(messages, optBool(body, "add_generation_prompt", true));
  } else if (typeof body.prompt === "string") {
    tokens = engine.tokenizeText(body.prompt);
    if (optBool(body, "add_special_tokens", true)) tokens = [engine.bos, ...tokens];
  } else {
    throw new ApiError(400, "give either 'prompt' (a string) or 'messages'", "prompt");
  }
  return {count: tokens.length, max_model_len: engine.ctx, tokens};
}

function handleDetokenize(engine, body) {
  const t = body.tokens;
  if (!Array.isArray(t) || !t.every((x) => Number.isInteger(x) && x >= 0 && x < engine.vocabSize))
    throw new ApiError(400, "'tokens' must be an array of token ids", "tokens");
  return {prompt: engine.model.detokenize(t)};
}

function metricsText(engine, opts) {
  const labels = `{engine="0",model_name="${opts.servedModelName.replace(/["\\\n]/g, "_")}"}`;
  const m = engine.metrics;
  const lines = [];
  const fmt = (v) => (Number.isInteger(v) ? v.toFixed(1) : String(v));
  const metric = (name, type, help, value) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    const values = Array.isArray(value) ? value : [["", value]];
    for (const [extra, v] of values) {
      const l = extra ? labels.replace("}", `,${extra}}`) : labels;
      lines.push(`${name}${l} ${fmt(v)}`);
    }
  };
  metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", engine.running());
  metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", engine.queue.length);
  metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", engine.kvUsage());
  metric("vllm:prefix_cache_queries_total", "counter",
    "Prefix cache queries, in terms of number of queried tokens.", m.prefixQueries);
  metric("vllm:prefix_cache_hits_total", "counter",
    "Prefix cache hits, in terms of number of cached tokens.", m.prefixHits);
  metric("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", m.preemptions);
  metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", m.promptTokens);
  metric("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", m.generationTokens);
  metric("vllm:request_success_total", "counter", "Count of successfully processed requests.",
    [["finished_reason=\"stop\"", m.success.stop], ["finished_reason=\"length\"", m.success.length],
      ["finished_reason=\"abort\"", m.success.abort]]);
  // The engine's own figures (not vLLM metrics): sequence states saved to files and loaded back.
  metric("cpu_engine:saved_states", "gauge", "Sequence states held in state files.", engine.saved.size);
  metric("cpu_engine:saved_state_bytes", "gauge", "Bytes of the state files held.", engine.savedBytes);
  metric("cpu_engine:states_saved_total", "counter",
    "Sequence states saved to a file (after a request, or on eviction).", m.statesSaved);
  metric("cpu_engine:states_restored_total", "counter", "Sequence states loaded back from a file.",
    m.statesRestored);
  metric("cpu_engine:restored_tokens_total", "counter", "Tokens of KV loaded back from state files.",
    m.restoredTokens);
  metric("cpu_engine:states_dropped_total", "counter",
    "Saved states deleted to keep under --saved-state-bytes (or larger than it).", m.statesDropped);
  return lines.join("\n") + "\n";
}

async function route(engine, opts, req, res) {
  const url = new URL(req.url ?? "/", "http://localhost");
  const path = url.pathname.replace(/\/+$/, "") || "/";
  const method = req.method ?? "GET";
  const expect = (m) => {
    if (method !== m) throw new ApiError(405, `method ${method} not allowed on ${path}`);
  };
  switch (path) {
    case "/health":
      expect("GET");
      res.writeHead(200, {"content-length": 0});
      res.end();
      return;
    case "/v1/models":
      expect("GET");
      sendJson(res, 200, {object: "list", data: [{id: opts.servedModelName, object: "model", created: 0,
        owned_by: "kvsim", root: opts.model, parent: null, max_model_len: engine.ctx}]});
      return;
    case "/metrics": {
      expect("GET");
      const text = metricsText(engine, opts);
      res.writeHead(200, {"content-type": "text/plain; version=0.0.4; charset=utf-8",
        "content-length": Buffer.byteLength(text)});
      res.end(text);
      return;
    }
    case "/v1/chat/completions":
      expect("POST");
      await handleChat(engine, opts, await readJsonBody(req), req, res);
      return;
    case "/tokenize":
      expect("POST");
      sendJson(res, 200, handleTokenize(engine, opts, await readJsonBody(req)));
      return;
    case "/detokenize":
      expect("POST");
      sendJson(res, 200, handleDetokenize(engine, await readJsonBody(req)));
      return;
    default:
      throw new ApiError(404, `no route ${method} ${path}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Main

async function loadBackend(threads) {
  const mod = await import("node-llama-cpp");
  const llama = await mod.getLlama({gpu: false, build: "never", logLevel: "error", maxThreads: threads});
  return {mod, llama};
}

async function main() {
  const opts = parseCommandLine(process.argv.slice(2));
  if (opts.check) {
    const {llama} = await loadBackend(1);
    await llama.dispose();
    return;
  }
  const {mod, llama} = await loadBackend(opts.threads);
  let model;
  try {
    model = await llama.loadModel({modelPath: opts.model});
  } catch (e) {
    fail(`cannot load model ${opts.model}: ${e.message}`);
  }
  const context = await model.createContext({contextSize: opts.ctx, sequences: opts.slots, threads: opts.threads,
    batchSize: opts.batch});
  const engine = new Engine(mod, model, context, opts);
  process.on("exit", () => engine.removeStateDir());
  log(`model ${opts.model}: vocab ${engine.vocabSize} (${engine.allowedCount} generable), ` +
    `${opts.slots} sequences x ${engine.ctx} tokens, batch ${context.batchSize}, threads ${opts.threads}, ` +
    `saved states up to ${opts.savedStateBytes} bytes in ${engine.stateDir}`);

  const server = http.createServer({noDelay: true, keepAliveTimeout: 60_000, requestTimeout: 0}, (req, res) => {
    route(engine, opts, req, res).catch((e) => {
      if (e instanceof ApiError) {
        sendError(res, e.status, e.message, e.param);
      } else {
        log(`internal error on ${req.method} ${req.url}: ${e?.stack ?? e}`);
        sendError(res, 500, `internal error: ${e?.message ?? e}`);
      }
    });
  });
  server.on("clientError", (err, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
    else socket.destroy();
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, resolve);
  }).catch((e) => fail(`cannot listen on ${opts.host}:${opts.port}: ${e.message}`));
  const {port} = server.address();
  const hostForUrl = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  process.stdout.write(`listening on http://${hostForUrl}:${port}\n`);

  let closing = false;
  const shutdown = (signal) => {
    if (closing) return;
    closing = true;
    log(`${signal}: shutting down`);
    server.close();
    server.closeAllConnections?.();
    setTimeout(() => process.exit(0), 2000).unref();
    context.dispose().then(() => model.dispose()).then(() => llama.dispose()).finally(() => process.exit(0));
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}

main().catch((e) => {
  process.stderr.write(`server.mjs: ${e?.stack ?? e}\n`);
  process.exit(3);
});
