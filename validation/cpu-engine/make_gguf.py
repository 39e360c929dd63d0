#!/usr/bin/env python3
"""Writes a tiny Llama-architecture model with random weights as a GGUF v3 file.

The model exists to give llama.cpp (the CPU engine behind server.mjs) real work to do: its
weights are random, so its output is meaningless, but its compute per token is that of a real
decoder-only transformer of the chosen size (parameters, layers, grouped-query attention, KV cache).

Format: GGUF v3 (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md): header, key/value
metadata, tensor infos, then tensor data aligned to 32 bytes. Weight matrices are F16; norm weights
are F32 (llama.cpp's CPU backend aborts on F16 norms). Tensor dims are in GGUF order (input features
first).

Vocabulary (SentencePiece-style, tokenizer.ggml.model = "llama", no space prefix):
  0 <unk>, 1 <s> (BOS), 2 </s> (EOS), 3..258 the byte tokens <0x00>..<0xFF>,
  259 "\u2581" (the SentencePiece space), 260..353 the printable ASCII characters '!'..'~',
  354 <|start_header_id|>, 355 <|end_header_id|>, 356 <|eot_id|> (control tokens of the chat template).
No token is longer than one character, so llama.cpp's tokenizer never merges: every space is one
token ("\u2581"), every other ASCII character is one token (a normal token or a byte token), and any
other character costs one byte token per UTF-8 byte.

Random values come from SHAKE-256 of (seed, tensor name), so a seed gives a byte-identical file.
Python standard library only.
"""

import argparse
import hashlib
import math
import os
import struct
import sys

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3
ALIGNMENT = 32

# GGUF metadata value types.
T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY = 4, 5, 6, 7, 8, 9
# GGML tensor types.
GGML_F32, GGML_F16 = 0, 1
# llama.cpp token types.
TOK_NORMAL, TOK_UNKNOWN, TOK_CONTROL, TOK_BYTE = 1, 2, 3, 6

SPECIAL_TOKENS = ["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]


def vocabulary():
    """Returns (tokens, scores, token_types)."""
    tokens = ["<unk>", "<s>", "</s>"]
    types = [TOK_UNKNOWN, TOK_CONTROL, TOK_CONTROL]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        types.append(TOK_BYTE)
    tokens.append("\u2581")
    types.append(TOK_NORMAL)
    for c in range(0x21, 0x7F):
        tokens.append(chr(c))
        types.append(TOK_NORMAL)
    for s in SPECIAL_TOKENS:
        tokens.append(s)
        types.append(TOK_CONTROL)
    # Scores only rank merges; with single-character tokens there are none. Normal tokens get
    # decreasing scores like a trained SentencePiece model, the rest 0.
    scores = [-float(i) if t == TOK_NORMAL else 0.0 for i, t in enumerate(types)]
    return tokens, scores, types


class Writer:
    def __init__(self):
        self.buf = bytearray()

    def u32(self, v):
        self.buf += struct.pack("<I", v)

    def u64(self, v):
        self.buf += struct.pack("<Q", v)

    def string(self, s):
        b = s.encode("utf-8")
        self.u64(len(b))
        self.buf += b

    def kv(self, key, vtype, value):
        self.string(key)
        self.u32(vtype)
        self.value(vtype, value)

    def value(self, vtype, value):
        if vtype == T_UINT32:
            self.u32(value)
        elif vtype == T_INT32:
            self.buf += struct.pack("<i", value)
        elif vtype == T_FLOAT32:
            self.buf += struct.pack("<f", value)
        elif vtype == T_BOOL:
            self.buf += struct.pack("<B", 1 if value else 0)
        elif vtype == T_STRING:
            self.string(value)
        else:
            raise ValueError(vtype)

    def array(self, key, elem_type, values):
        self.string(key)
        self.u32(T_ARRAY)
        self.u32(elem_type)
        self.u64(len(values))
        if elem_type == T_FLOAT32:
            self.buf += struct.pack(f"<{len(values)}f", *values)
        elif elem_type == T_INT32:
            self.buf += struct.pack(f"<{len(values)}i", *values)
        else:
            for v in values:
                self.value(elem_type, v)


def random_f16(seed, name, count, fan_in):
    """count F16 values with random sign and mantissa and magnitude in [s, 2s), s = 2^round(log2(1/sqrt(fan_in)))."""
    exponent = 15 + round(math.log2(1.0 / math.sqrt(fan_in)))  # biased F16 exponent
    raw = hashlib.shake_256(f"kvsim-tiny-llama/{seed}/{name}".encode()).digest(2 * count)
    keep = int.from_bytes(b"\xff\x83" * count, "little")  # sign bit + 10 mantissa bits per lane
    exp_bits = int.from_bytes(struct.pack("<H", exponent << 10) * count, "little")
    bits = (int.from_bytes(raw, "little") & keep) | exp_bits
    return bits.to_bytes(2 * count, "little")


def build(args):
    tokens, scores, types = vocabulary()
    n_vocab = len(tokens)
    h, ffn, n_head, n_kv = args.hidden, args.ffn, args.heads, args.kv_heads
    head_dim = h // n_head
    kv_dim = head_dim * n_kv

    # (name, dims in GGUF order, type, fan_in)
    tensors = [("token_embd.weight", [h, n_vocab], GGML_F16, h)]
    for i in range(args.layers):
        p = f"blk.{i}."
        tensors += [
            (p + "attn_norm.weight", [h], GGML_F32, 0),
            (p + "attn_q.weight", [h, h], GGML_F16, h),
            (p + "attn_k.weight", [h, kv_dim], GGML_F16, h),
            (p + "attn_v.weight", [h, kv_dim], GGML_F16, h),
            (p + "attn_output.weight", [h, h], GGML_F16, h),
            (p + "ffn_norm.weight", [h], GGML_F32, 0),
            (p + "ffn_gate.weight", [h, ffn], GGML_F16, h),
            (p + "ffn_up.weight", [h, ffn], GGML_F16, h),
            (p + "ffn_down.weight", [ffn, h], GGML_F16, ffn),
        ]
    tensors += [("output_norm.weight", [h], GGML_F32, 0), ("output.weight", [h, n_vocab], GGML_F16, h)]

    w = Writer()
    w.buf += GGUF_MAGIC
    w.u32(GGUF_VERSION)
    w.u64(len(tensors))
    kvs = []

    def kv(key, vtype, value):
        kvs.append(lambda: w.kv(key, vtype, value))

    def arr(key, elem_type, values):
        kvs.append(lambda: w.array(key, elem_type, values))

    kv("general.architecture", T_STRING, "llama")
    kv("general.name", T_STRING, "kvsim-tiny-llama")
    kv("general.alignment", T_UINT32, ALIGNMENT)
    kv("general.file_type", T_UINT32, 1)  # mostly F16
    kv("llama.context_length", T_UINT32, args.ctx)
    kv("llama.embedding_length", T_UINT32, h)
    kv("llama.block_count", T_UINT32, args.layers)
    kv("llama.feed_forward_length", T_UINT32, ffn)
    kv("llama.attention.head_count", T_UINT32, n_head)
    kv("llama.attention.head_count_kv", T_UINT32, n_kv)
    kv("llama.rope.dimension_count", T_UINT32, head_dim)
    kv("llama.rope.freq_base", T_FLOAT32, 10000.0)
    kv("llama.attention.layer_norm_rms_epsilon", T_FLOAT32, 1e-5)
    kv("llama.vocab_size", T_UINT32, n_vocab)
    kv("tokenizer.ggml.model", T_STRING, "llama")
    arr("tokenizer.ggml.tokens", T_STRING, tokens)
    arr("tokenizer.ggml.scores", T_FLOAT32, scores)
    arr("tokenizer.ggml.token_type", T_INT32, types)
    kv("tokenizer.ggml.unknown_token_id", T_UINT32, 0)
    kv("tokenizer.ggml.bos_token_id", T_UINT32, 1)
    kv("tokenizer.ggml.eos_token_id", T_UINT32, 2)
    kv("tokenizer.ggml.eot_token_id", T_UINT32, tokens.index("<|eot_id|>"))
    kv("tokenizer.ggml.add_bos_token", T_BOOL, True)
    kv("tokenizer.ggml.add_eos_token", T_BOOL, False)
    kv("tokenizer.ggml.add_space_prefix", T_BOOL, False)
    w.u64(len(kvs))
    for f in kvs:
        f()

    offset = 0
    layout = []
    for name, dims, ttype, fan_in in tensors:
        count = math.prod(dims)
        size = count * (4 if ttype == GGML_F32 else 2)
        w.string(name)
        w.u32(len(dims))
        for d in dims:
            w.u64(d)
        w.u32(ttype)
        w.u64(offset)
        layout.append((name, count, ttype, fan_in, size))
        offset += size + (-size) % ALIGNMENT
    w.buf += b"\0" * ((-len(w.buf)) % ALIGNMENT)

    params = sum(c for _, c, _, _, _ in layout)
    return w.buf, layout, params, n_vocab


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="output .gguf path")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--ffn", type=int, default=1536)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--ctx", type=int, default=8192)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    for k in ("layers", "hidden", "ffn", "heads", "kv_heads", "ctx"):
        if getattr(args, k) <= 0:
            ap.error(f"--{k.replace('_', '-')} must be positive")
    if args.hidden % args.heads or args.heads % args.kv_heads or (args.hidden // args.heads) % 2:
        ap.error("--hidden must be a multiple of --heads, --heads of --kv-heads, and the head size even")

    header, layout, params, n_vocab = build(args)
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(header)
        for name, count, ttype, fan_in, size in layout:
            if ttype == GGML_F32:
                f.write(struct.pack("<f", 1.0) * count)
            else:
                f.write(random_f16(args.seed, name, count, fan_in))
            f.write(b"\0" * ((-size) % ALIGNMENT))
    os.replace(tmp, args.out)
    print(f"{args.out}: {params / 1e6:.1f}M parameters, {args.layers} layers, hidden {args.hidden}, "
          f"ffn {args.ffn}, heads {args.heads}/{args.kv_heads}, vocab {n_vocab}, ctx {args.ctx}", file=sys.stderr)


if __name__ == "__main__":
    main()
