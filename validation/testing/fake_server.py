#!/usr/bin/env python3
"""A fake OpenAI-compatible chat server for testing kvsim replay and probe (Python standard library).

    python3 fake_server.py [--port 0] [--mode ok] [--ttft-ms 5] [--prefill-us 20] [--token-ms 1]
        [--tier-bytes-per-s 0] [--tier-latency-ms 0] [--kv-bytes-per-token 131072] [--tier-gate -1]

Prints one line `listening on http://127.0.0.1:PORT` when ready. Endpoints: POST
/v1/chat/completions (streamed Server-Sent Events like vLLM, or one JSON answer), POST /tokenize,
GET /metrics (vLLM's names), GET /health, GET /v1/models.

Tokens are bytes: a text of n bytes is n tokens (no special tokens). The chat template adds 3
tokens to a prompt and 5 per message. The answer has exactly max_tokens tokens, one per chunk.
Prefix cache: cached_tokens is the longest prefix, in whole 16-token blocks, that the prompt
shares with an earlier prompt or prompt + answer, never the whole prompt.
Timing: first token after ttft_ms + prefill_us x uncached tokens, then token_ms per token.
Offload tier (--tier-bytes-per-s R > 0): POST /reset_prefix_cache empties the GPU prefix cache
and keeps what it held in the tier (as vLLM's reset leaves offloaded KV in place); a prefix
found only in the tier costs tier_latency_ms + tokens x kv_bytes_per_token / R more before the
first token, and is back in the GPU cache afterwards. Without a tier the reset just empties
the cache. --tier-gate N >= 0: a load from the tier starts only once at most N other requests
are running (an engine that loads only between batches it has to itself, as the CPU engine of
validation/cpu-engine does while two or more sequences decode).

Modes (what the server does with each request attempt):
  ok          answer correctly
  http500     HTTP 500 with an OpenAI-style error body
  stall       stream two chunks, then send nothing more (the client must time out)
  stall_first send the headers, then nothing (the client must time out before the first token)
  close       stream three chunks, then close the connection (no [DONE])
  malformed   stream two chunks, then an event that is not JSON
  disconnect  close the connection without answering
  mixed       attempt k behaves as MIXED_CYCLE[k % len(MIXED_CYCLE)] (attempts counted over the
              whole server, in arrival order)
  retry       the first attempt of each distinct request body gets HTTP 503, the next is ok
"""
import argparse
import hashlib
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MIXED_CYCLE = ["ok", "http500", "ok", "stall", "ok", "close", "ok", "malformed", "ok", "disconnect",
               "ok", "stall_first"]
TEMPLATE_PROMPT = 3
TEMPLATE_PER_MESSAGE = 5
BLOCK = 16


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.done = threading.Condition(self.lock)  # notified when a request ends
        self.attempts = 0
        self.seen_bodies = set()
        self.prompts = []  # earlier prompt (+ answer) strings, for cached_tokens (GPU cache)
        self.tier = []  # prompts moved out of the GPU cache by /reset_prefix_cache
        self.metrics = {"vllm:prefix_cache_queries_total": 0, "vllm:prefix_cache_hits_total": 0,
                        "vllm:prompt_tokens_total": 0, "vllm:generation_tokens_total": 0,
                        "vllm:num_preemptions_total": 0, "vllm:num_requests_running": 0,
                        "vllm:kv_cache_usage_perc": 0.0}

    def behaviour(self, body):
        with self.lock:
            k = self.attempts
            self.attempts += 1
            mode = self.args.mode
            if mode == "mixed":
                return MIXED_CYCLE[k % len(MIXED_CYCLE)]
            if mode == "retry":
                digest = hashlib.sha256(body).hexdigest()
                if digest in self.seen_bodies:
                    return "ok"
                self.seen_bodies.add(digest)
                return "http503"
            return mode

    @staticmethod
    def longest(prompts, prompt):
        best = 0
        for p in prompts:
            n = 0
            limit = min(len(p), len(prompt))
            while n < limit and p[n] == prompt[n]:
                n += 1
            best = max(best, n)
        best = min(best, len(prompt) - 1)
        return max(0, best // BLOCK * BLOCK)

    def cached(self, prompt):
        """(tokens cached in all, of which loaded from the tier)"""
        with self.lock:
            gpu = self.longest(self.prompts, prompt)
            tier = self.longest(self.tier, prompt) if self.args.tier_bytes_per_s > 0 else 0
        return max(gpu, tier), max(0, tier - gpu)

    def reset(self):
        with self.lock:
            if self.args.tier_bytes_per_s > 0:
                self.tier.extend(self.prompts)
            self.prompts = []


def render(messages):
    text = "<s>"
    for m in messages:
        text += "<%s>%s|" % (m["role"][0], m["content"])
    return text


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, *a):  # quiet
        pass

    def setup(self):
        super().setup()
        # Small SSE writes must leave at once (no Nagle delay).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def event(self, obj):
        self.chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")

    def do_GET(self):
        if self.path == "/metrics":
            lines = []
            for k, v in self.state.metrics.items():
                lines.append("# TYPE %s %s" % (k, "counter" if k.endswith("_total") else "gauge"))
                lines.append('%s{model_name="fake"} %s' % (k, v))
            data = ("\n".join(lines) + "\n").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif self.path == "/health":
            self.send_json(200, {})
        elif self.path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [{"id": self.state.args.served_model_name}]})
        else:
            self.send_json(404, {"error": {"message": "not found", "type": "NotFoundError", "code": 404}})

    def read_body(self):
        n = int(self.headers.get("Content-Length", "0"))
        return self.rfile.read(n)

    def do_POST(self):
        raw = self.read_body()
        if self.path == "/reset_prefix_cache":
            self.state.reset()
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self.send_json(400, {"error": {"message": "invalid JSON", "type": "BadRequestError", "code": 400}})
            return
        if self.path == "/tokenize":
            if not self.state.args.tokenize:
                self.send_json(404, {"error": {"message": "not found", "code": 404}})
                return
            if "messages" in body:
                text = render(body["messages"])
            else:
                text = body.get("prompt", "")
            n = len(text.encode())
            self.send_json(200, {"tokens": list(range(n)), "count": n, "max_model_len": 1 << 20})
            return
        if self.path != "/v1/chat/completions":
            self.send_json(404, {"error": {"message": "not found", "code": 404}})
            return
        self.chat(body, raw)

    def chat(self, body, raw):
        st = self.state
        args = st.args
        mode = st.behaviour(raw)
        if mode == "disconnect":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if mode in ("http500", "http503"):
            code = 500 if mode == "http500" else 503
            self.send_json(code, {"error": {"message": "fake server error", "type": "InternalServerError",
                                            "code": code}})
            return
        messages = body.get("messages", [])
        prompt = render(messages)
        prompt_tokens = TEMPLATE_PROMPT + sum(TEMPLATE_PER_MESSAGE + len(m["content"].encode()) for m in messages)
        n_out = int(body.get("max_tokens") or 16)
        cached, from_tier = st.cached(prompt)
        with st.lock:
            st.metrics["vllm:num_requests_running"] += 1
        answer = "".join(chr(ord("a") + (i % 26)) for i in range(n_out))
        try:
            delay = args.ttft_ms / 1e3 + args.prefill_us / 1e6 * (len(prompt) - cached)
            if from_tier > 0:
                delay += args.tier_latency_ms / 1e3 + from_tier * args.kv_bytes_per_token / args.tier_bytes_per_s
                if args.tier_gate >= 0:
                    with st.done:
                        st.done.wait_for(lambda: st.metrics["vllm:num_requests_running"] - 1 <= args.tier_gate)
            time.sleep(delay)
            stream = body.get("stream", False)
            if not stream:
                with st.lock:
                    st.prompts.append(prompt + answer)
                time.sleep(args.token_ms / 1e3 * n_out)
                self.send_json(200, {"id": "x", "object": "chat.completion", "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "length"}],
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": n_out,
                              "total_tokens": prompt_tokens + n_out,
                              "prompt_tokens_details": {"cached_tokens": cached}}})
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if mode == "stall_first":
                self.wfile.flush()
                time.sleep(3600)
                return
            base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": args.served_model_name}
            self.event(dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}}]))
            for i in range(n_out):
                if mode == "stall" and i == 2:
                    time.sleep(3600)
                    return
                if mode == "close" and i == 3:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if mode == "malformed" and i == 2:
                    self.chunk(b"data: {\"choices\": [{\"delta\": {\"content\": \"x\"\n\n")
                if i > 0:
                    time.sleep(args.token_ms / 1e3)
                # A comment and CRLF line ends now and then: both are legal SSE.
                if i % 7 == 3:
                    self.chunk(b": keep-alive\r\n\r\n")
                finish = "length" if i == n_out - 1 else None
                self.event(dict(base, choices=[{"index": 0, "delta": {"content": answer[i]},
                                                "finish_reason": finish}]))
            include_usage = (body.get("stream_options") or {}).get("include_usage", False)
            if include_usage:
                self.event(dict(base, choices=[], usage={
                    "prompt_tokens": prompt_tokens, "completion_tokens": n_out,
                    "total_tokens": prompt_tokens + n_out,
                    "prompt_tokens_details": {"cached_tokens": cached}}))
            # The KV is cached before the stream ends (as in vLLM), so a request sent after the
            # last event finds it.
            with st.lock:
                st.prompts.append(prompt + answer)
                st.metrics["vllm:prefix_cache_queries_total"] += len(prompt)
                st.metrics["vllm:prefix_cache_hits_total"] += cached
                st.metrics["vllm:prompt_tokens_total"] += prompt_tokens
                st.metrics["vllm:generation_tokens_total"] += n_out
            self.chunk(b"data: [DONE]\n\n")
            self.chunk(b"")
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with st.lock:
                st.metrics["vllm:num_requests_running"] -= 1
                st.done.notify_all()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--mode", default="ok", choices=["ok", "http500", "stall", "stall_first", "close", "malformed",
                                                     "disconnect", "mixed", "retry"])
    ap.add_argument("--ttft-ms", type=float, default=5.0)
    ap.add_argument("--prefill-us", type=float, default=20.0)
    ap.add_argument("--token-ms", type=float, default=1.0)
    ap.add_argument("--tier-bytes-per-s", type=float, default=0.0, help="offload tier load rate (0: no tier)")
    ap.add_argument("--tier-latency-ms", type=float, default=0.0)
    ap.add_argument("--kv-bytes-per-token", type=float, default=131072.0)
    ap.add_argument("--tier-gate", type=int, default=-1,
                    help="a tier load waits until at most this many others run (-1: never waits)")
    ap.add_argument("--no-tokenize", dest="tokenize", action="store_false")
    ap.add_argument("--served-model-name", default="fake-model")
    args = ap.parse_args()
    Handler.state = State(args)
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    print("listening on http://%s:%d" % (args.host, server.server_address[1]), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
