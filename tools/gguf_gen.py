#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Generate a tiny random-weight llama model as a GGUF v3 file.

The file holds F32 tensors under llama.cpp's standard llama tensor names and a
small byte-level SentencePiece ("llama") vocabulary: <unk>, <s>, </s>, the 256
byte tokens <0x00>..<0xFF>, then printable characters and character pairs up to
--vocab tokens. llama.cpp (and node-llama-cpp, which bundles it) loads it like
any llama model; the output is nonsense but the work per token is the real one.

Only the Python standard library is used. Weights come from random.Random(seed)
bytes shaped into float32 values of magnitude in [2^-k, 2^-k+2) with a random
sign (k chosen from the fan-in), so a given seed and shape always give the same
file, byte for byte.

  gguf_gen.py --preset tiny -o demo/models/tiny.gguf
  gguf_gen.py --layers 4 --embd 512 --ff 1408 --heads 8 -o model.gguf
"""
import argparse
import math
import os
import random
import struct
import sys

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3
ALIGNMENT = 32

# gguf_type
T_UINT8, T_INT8, T_UINT16, T_INT16, T_UINT32, T_INT32, T_FLOAT32, T_BOOL, \
    T_STRING, T_ARRAY, T_UINT64, T_INT64, T_FLOAT64 = range(13)
GGML_TYPE_F32 = 0
LLAMA_FTYPE_ALL_F32 = 0
# llama_token_type
TOK_NORMAL, TOK_UNKNOWN, TOK_CONTROL, TOK_USER_DEFINED, TOK_UNUSED, TOK_BYTE = 1, 2, 3, 4, 5, 6

PRESETS = {
    # loads in milliseconds, well under a millisecond per token
    "tiny": dict(layers=2, embd=64, ff=176, heads=4, heads_kv=2, ctx=512, vocab=512),
    # ~107 MB of F32 weights: most of the time goes to libggml-cpu's matmuls
    "bench": dict(layers=4, embd=768, ff=2048, heads=12, heads_kv=4, ctx=1024, vocab=1024),
}


def gguf_str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, value):
    out = gguf_str(key) + struct.pack("<I", vtype)
    if vtype == T_STRING:
        return out + gguf_str(value)
    fmt = {T_UINT32: "<I", T_INT32: "<i", T_FLOAT32: "<f", T_BOOL: "<?", T_UINT64: "<Q"}[vtype]
    return out + struct.pack(fmt, value)


def kv_array(key, etype, values):
    out = gguf_str(key) + struct.pack("<IIQ", T_ARRAY, etype, len(values))
    if etype == T_STRING:
        return out + b"".join(gguf_str(v) for v in values)
    fmt = {T_FLOAT32: "f", T_INT32: "i"}[etype]
    return out + struct.pack("<%d%s" % (len(values), fmt), *values)


def build_vocab(n_vocab):
    tokens = ["<unk>", "<s>", "</s>"]
    types = [TOK_UNKNOWN, TOK_CONTROL, TOK_CONTROL]
    tokens += ["<0x%02X>" % b for b in range(256)]
    types += [TOK_BYTE] * 256
    if n_vocab < len(tokens):
        sys.exit("gguf_gen: --vocab must be at least %d (specials + 256 bytes)" % len(tokens))
    chars = ["\u2581"] + [chr(c) for c in range(0x21, 0x7f)]
    seen = set(tokens)
    extra = []
    for c in chars:                      # single characters, then "▁x", then pairs
        extra.append(c)
    for c in chars[1:]:
        extra.append("\u2581" + c)
    for a in chars[1:]:
        for b in chars[1:]:
            extra.append(a + b)
    for t in extra:
        if len(tokens) >= n_vocab:
            break
        if t not in seen:
            seen.add(t)
            tokens.append(t)
            types.append(TOK_NORMAL)
    if len(tokens) < n_vocab:
        sys.exit("gguf_gen: --vocab at most %d" % len(tokens))
    # SentencePiece scores: higher merges first; bytes and specials never merge
    scores = [0.0] * 259 + [-float(i) for i in range(len(tokens) - 259)]
    return tokens, scores, types


def random_f32(rng, n, fan_in):
    """n float32 values, |x| in [2^-k, 2^(-k+2)) with 2^-k ~ 1/(2 sqrt(fan_in))."""
    k = max(1, min(30, int(round(math.log2(2.0 * math.sqrt(fan_in))))))
    exp = 127 - k                       # biased exponent; low bit comes from random byte 2
    hi = exp >> 1                       # 7 bits of exponent in byte 3
    table = bytes((hi | (0x80 if b & 1 else 0)) for b in range(256))
    buf = bytearray(rng.randbytes(4 * n))
    buf[3::4] = buf[3::4].translate(table)
    low = 0x80 if exp & 1 else 0x00      # exponent's low bit is byte 2's top bit
    buf[2::4] = buf[2::4].translate(bytes(low | (b & 0x7F) for b in range(256)))
    return buf


def ones_f32(n):
    return struct.pack("<f", 1.0) * n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), help="start from a preset (options below override it)")
    ap.add_argument("--layers", type=int)
    ap.add_argument("--embd", type=int)
    ap.add_argument("--ff", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--heads-kv", type=int, help="KV heads (grouped-query attention); default --heads")
    ap.add_argument("--ctx", type=int)
    ap.add_argument("--vocab", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--name", help="general.name (default: file name)")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()

    p = dict(PRESETS[a.preset or "tiny"])
    if a.heads is not None or not a.preset:
        p["heads_kv"] = None             # default: as many KV heads as heads
    for k in ("layers", "embd", "ff", "heads", "heads_kv", "ctx", "vocab"):
        v = getattr(a, k)
        if v is not None:
            p[k] = v
    if p["heads_kv"] is None:
        p["heads_kv"] = p["heads"]
    L, E, F, H, HKV, C, V = (p[k] for k in ("layers", "embd", "ff", "heads", "heads_kv", "ctx", "vocab"))
    if E % H or H % HKV or (E // H) % 2:
        sys.exit("gguf_gen: --embd must be a multiple of --heads, --heads of --heads-kv, head size even")
    head_dim = E // H
    E_KV = head_dim * HKV
    name = a.name or os.path.splitext(os.path.basename(a.output))[0]

    tokens, scores, types = build_vocab(V)
    meta = [
        kv("general.architecture", T_STRING, "llama"),
        kv("general.name", T_STRING, name),
        kv("general.file_type", T_UINT32, LLAMA_FTYPE_ALL_F32),
        kv("general.alignment", T_UINT32, ALIGNMENT),
        kv("llama.vocab_size", T_UINT32, V),
        kv("llama.context_length", T_UINT32, C),
        kv("llama.embedding_length", T_UINT32, E),
        kv("llama.block_count", T_UINT32, L),
        kv("llama.feed_forward_length", T_UINT32, F),
        kv("llama.attention.head_count", T_UINT32, H),
        kv("llama.attention.head_count_kv", T_UINT32, HKV),
        kv("llama.rope.dimension_count", T_UINT32, head_dim),
        kv("llama.rope.freq_base", T_FLOAT32, 10000.0),
        kv("llama.attention.layer_norm_rms_epsilon", T_FLOAT32, 1e-5),
        kv("tokenizer.ggml.model", T_STRING, "llama"),
        kv_array("tokenizer.ggml.tokens", T_STRING, tokens),
        kv_array("tokenizer.ggml.scores", T_FLOAT32, scores),
        kv_array("tokenizer.ggml.token_type", T_INT32, types),
        kv("tokenizer.ggml.unknown_token_id", T_UINT32, 0),
        kv("tokenizer.ggml.bos_token_id", T_UINT32, 1),
        kv("tokenizer.ggml.eos_token_id", T_UINT32, 2),
        kv("tokenizer.ggml.add_bos_token", T_BOOL, True),
        kv("tokenizer.ggml.add_eos_token", T_BOOL, False),
    ]

    # (name, shape in ggml order: ne[0] is the row length = fan-in, kind)
    tensors = [("token_embd.weight", (E, V), "w")]
    for i in range(L):
        b = "blk.%d." % i
        tensors += [
            (b + "attn_norm.weight", (E,), "1"),
            (b + "attn_q.weight", (E, E), "w"),
            (b + "attn_k.weight", (E, E_KV), "w"),
            (b + "attn_v.weight", (E, E_KV), "w"),
            (b + "attn_output.weight", (E, E), "w"),
            (b + "ffn_norm.weight", (E,), "1"),
            (b + "ffn_gate.weight", (E, F), "w"),
            (b + "ffn_up.weight", (E, F), "w"),
            (b + "ffn_down.weight", (F, E), "w"),
        ]
    tensors += [("output_norm.weight", (E,), "1"), ("output.weight", (E, V), "w")]

    infos = []
    offset = 0
    for tname, shape, _ in tensors:
        n = math.prod(shape)
        infos.append(gguf_str(tname) + struct.pack("<I", len(shape)) +
                     struct.pack("<%dQ" % len(shape), *shape) + struct.pack("<IQ", GGML_TYPE_F32, offset))
        offset += (4 * n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT

    header = GGUF_MAGIC + struct.pack("<IQQ", GGUF_VERSION, len(tensors), len(meta))
    head = header + b"".join(meta) + b"".join(infos)
    head += b"\0" * (-len(head) % ALIGNMENT)

    rng = random.Random(a.seed)
    tmp = a.output + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(a.output)), exist_ok=True)
    with open(tmp, "wb") as f:
        f.write(head)
        for tname, shape, kind in tensors:
            n = math.prod(shape)
            data = ones_f32(n) if kind == "1" else random_f32(rng, n, shape[0])
            f.write(data)
            f.write(b"\0" * (-len(data) % ALIGNMENT))
    os.replace(tmp, a.output)
    params = sum(math.prod(shape) for _, shape, _ in tensors)
    print("gguf_gen: %s: llama, %d layers, embd %d, ff %d, heads %d/%d, ctx %d, vocab %d, "
          "%.1fM params, %.1f MB" % (a.output, L, E, F, H, HKV, C, V, params / 1e6,
                                     os.path.getsize(a.output) / 1e6))


if __name__ == "__main__":
    main()
