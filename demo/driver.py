#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""infertrace demo, Python twin of demo/driver.mjs: an LLM-inference experiment
loop on real llama.cpp, with the standard library's sqlite3.

Each cycle clears the context's memory, tokenizes the prompt, decodes it in one
batch (prefill) and generates exactly --tokens tokens greedily (generate: the
last token is sampled, not decoded, as in the node driver). Then the loop's own
step (update_memory: the output's vector goes into a memory ring, searched
first for its nearest earlier entry) and the database step (save_result: the
cycle's row and one row per token inserted, then committed). No tracing code.

llama.cpp comes from llama-cpp-python's low-level binding when it is
importable, otherwise from the minimal ctypes layer below over the libllama
that tools/demo-setup.sh installs (node-llama-cpp's prebuilt CPU libraries).

  python3 demo/driver.py --model demo/models/bench.gguf --cycles 5 --tokens 16

Prints one line per cycle and, last, one JSON line with the totals (the same
keys as the node driver's), so that a test can hold a tracer's figures against
the driver's own.
"""
import argparse
import ctypes
import json
import os
import sqlite3
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LIBDIR = os.path.join(HERE, "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64")


class Batch(ctypes.Structure):
    """struct llama_batch (llama.h): stable since the batch API began."""
    _fields_ = [("n_tokens", ctypes.c_int32), ("token", ctypes.POINTER(ctypes.c_int32)),
                ("embd", ctypes.c_void_p), ("pos", ctypes.c_void_p), ("n_seq_id", ctypes.c_void_p),
                ("seq_id", ctypes.c_void_p), ("logits", ctypes.c_void_p)]


class Opaque(ctypes.Structure):
    """llama_model_params / llama_context_params, only passed from the
    *_default_params() functions back into the library: their fields change
    between llama.cpp versions, so they are kept opaque and larger than either
    (a struct this size is returned through a hidden pointer and passed in
    memory, the callee reading its own size's prefix)."""
    _fields_ = [("raw", ctypes.c_ubyte * 1024)]


class ChainParams(ctypes.Structure):
    _fields_ = [("no_perf", ctypes.c_bool)]


LOG_CB = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
# llama.cpp and ggml keep the callback: a module-level object, never freed
QUIET = LOG_CB(lambda level, text, data: None)


def ctypes_llama():
    """libllama's C API, the few functions the loop needs."""
    P, I32, VP = ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p
    base = ctypes.CDLL(os.path.join(LIBDIR, "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
    base.ggml_log_set.restype, base.ggml_log_set.argtypes = None, [LOG_CB, ctypes.c_void_p]
    base.ggml_log_set(QUIET, None)  # quiet, as the node driver's LlamaLogLevel.error
    ggml = ctypes.CDLL(os.path.join(LIBDIR, "libggml.v0.5.0.so"), mode=ctypes.RTLD_GLOBAL)
    lib = ctypes.CDLL(os.path.join(LIBDIR, "libllama.v0.5.0.so"), mode=ctypes.RTLD_GLOBAL)
    sig = {
        "llama_log_set": (None, [LOG_CB, VP]),
        "llama_backend_init": (None, []),
        "llama_backend_free": (None, []),
        "llama_model_default_params": (Opaque, []),
        "llama_context_default_params": (Opaque, []),
        "llama_model_load_from_file": (P, [ctypes.c_char_p, Opaque]),
        "llama_init_from_model": (P, [P, Opaque]),
        "llama_set_n_threads": (None, [P, I32, I32]),
        "llama_model_get_vocab": (P, [P]),
        "llama_n_ctx": (ctypes.c_uint32, [P]),
        "llama_get_memory": (P, [P]),
        "llama_memory_clear": (None, [P, ctypes.c_bool]),
        "llama_tokenize": (I32, [P, ctypes.c_char_p, I32, ctypes.POINTER(I32), I32, ctypes.c_bool, ctypes.c_bool]),
        "llama_token_to_piece": (I32, [P, I32, ctypes.c_char_p, I32, I32, ctypes.c_bool]),
        "llama_batch_get_one": (Batch, [ctypes.POINTER(I32), I32]),
        "llama_decode": (I32, [P, Batch]),
        "llama_sampler_chain_default_params": (ChainParams, []),
        "llama_sampler_chain_init": (P, [ChainParams]),
        "llama_sampler_chain_add": (None, [P, P]),
        "llama_sampler_init_greedy": (P, []),
        "llama_sampler_sample": (I32, [P, P, I32]),
        "llama_sampler_free": (None, [P]),
        "llama_free": (None, [P]),
        "llama_model_free": (None, [P]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    # ggml's CPU backend is one of several libggml-cpu-<microarch>.so: load the best
    ggml.ggml_backend_load_all_from_path.argtypes = [ctypes.c_char_p]
    ggml.ggml_backend_load_all_from_path(LIBDIR.encode())
    return lib, "ctypes"


def binding():
    try:
        import llama_cpp  # llama-cpp-python: the same C API under the same names
        return llama_cpp, "llama-cpp-python"
    except ImportError:
        return ctypes_llama()


class Llama:
    def __init__(self, path, threads):
        self.L, self.binding = binding()
        L = self.L
        if self.binding == "ctypes":
            L.llama_log_set(QUIET, None)
        L.llama_backend_init()
        self.model = L.llama_model_load_from_file(path.encode(), L.llama_model_default_params())
        if not self.model:
            raise SystemExit(f"driver: cannot load model {path}")
        cp = L.llama_context_default_params()
        self.ctx = L.llama_init_from_model(self.model, cp)
        if not self.ctx:
            raise SystemExit("driver: cannot create a context")
        L.llama_set_n_threads(self.ctx, threads, threads)
        self.vocab = L.llama_model_get_vocab(self.model)
        self.n_ctx = L.llama_n_ctx(self.ctx)
        self.sampler = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
        L.llama_sampler_chain_add(self.sampler, L.llama_sampler_init_greedy())

    def tokenize(self, text):
        raw = text.encode()
        buf = (ctypes.c_int32 * (len(raw) + 8))()
        n = self.L.llama_tokenize(self.vocab, raw, len(raw), buf, len(buf), True, False)
        if n < 0:
            raise SystemExit(f"driver: prompt needs {-n} tokens")
        return buf, n

    def piece(self, tok):
        buf = ctypes.create_string_buffer(64)
        n = self.L.llama_token_to_piece(self.vocab, tok, buf, len(buf), 0, False)
        return buf.raw[:max(n, 0)].decode("utf-8", "replace")

    def close(self):
        L = self.L
        L.llama_sampler_free(self.sampler)
        L.llama_free(self.ctx)
        L.llama_model_free(self.model)
        L.llama_backend_free()


def prefill(llm, prompt):
    """The prompt: the memory cleared, tokenized, decoded in one batch (position 0)."""
    L = llm.L
    if hasattr(L, "llama_get_memory"):
        L.llama_memory_clear(L.llama_get_memory(llm.ctx), True)
    else:  # llama-cpp-python built on a llama.cpp from before the memory API
        getattr(L, "llama_kv_self_clear", getattr(L, "llama_kv_cache_clear", None))(llm.ctx)
    toks, n = llm.tokenize(prompt)
    if L.llama_decode(llm.ctx, L.llama_batch_get_one(toks, n)):
        raise SystemExit("driver: llama_decode failed on the prompt")
    return n


def generate(llm, n_tokens):
    """n_tokens tokens, greedy: each sampled token is fed back but the last."""
    L = llm.L
    out = []
    tok = (ctypes.c_int32 * 1)()
    while True:
        tok[0] = L.llama_sampler_sample(llm.sampler, llm.ctx, -1)
        out.append(tok[0])
        if len(out) >= n_tokens:
            return out
        if L.llama_decode(llm.ctx, L.llama_batch_get_one(tok, 1)):
            raise SystemExit("driver: llama_decode failed in generation")


DIM = 1024


class Memory:
    """The loop's own step: a ring of past outputs as DIM-wide vectors (hashed
    character trigrams, normalized); the nearest stored one is looked up
    before the new one is stored, the way an agent recalls its closest answer."""

    def __init__(self, slots):
        self.slots = [[0.0] * DIM for _ in range(slots)]
        self.used = 0


def update_memory(mem, text):
    v = [0.0] * DIM
    for i in range(len(text) - 2):
        v[(ord(text[i]) * 961 + ord(text[i + 1]) * 31 + ord(text[i + 2])) % DIM] += 1.0
    norm = sum(x * x for x in v) ** 0.5 or 1.0
    v = [x / norm for x in v]
    best, best_score = -1, float("-inf")
    for s, slot in enumerate(mem.slots):
        dot = sum(a * b for a, b in zip(slot, v))
        if dot > best_score:
            best, best_score = s, dot
    mem.slots[mem.used % len(mem.slots)] = v
    mem.used += 1
    return best, best_score


def open_db(path):
    db = sqlite3.connect(path)
    db.executescript("""
        DROP TABLE IF EXISTS cycles; DROP TABLE IF EXISTS tokens;
        CREATE TABLE cycles (id INTEGER PRIMARY KEY, ms REAL, prompt_tokens INTEGER,
                             generated INTEGER, text TEXT, nearest INTEGER, score REAL);
        CREATE TABLE tokens (cycle INTEGER, pos INTEGER, token INTEGER);
        CREATE INDEX tokens_token ON tokens(token);""")
    return db


def save_result(db, row, tokens):
    """One transaction: the cycle's row and its tokens, committed; then the
    running totals read back."""
    db.execute("INSERT INTO cycles VALUES (?, ?, ?, ?, ?, ?, ?)", row)
    db.executemany("INSERT INTO tokens VALUES (?, ?, ?)", [(row[0], i, t) for i, t in enumerate(tokens)])
    db.commit()
    return db.execute("""SELECT COUNT(*), (SELECT COUNT(DISTINCT token) FROM tokens),
                                (SELECT token FROM tokens GROUP BY token ORDER BY COUNT(*) DESC LIMIT 1)
                         FROM cycles""").fetchone()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=os.path.join(HERE, "models", "tiny.gguf"))
    ap.add_argument("--cycles", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--prompt", default="The quick brown fox jumps over the lazy dog.")
    ap.add_argument("--memory-slots", type=int, default=512)
    ap.add_argument("--db", help="SQLite file (default: a temporary file, removed at exit)")
    ap.add_argument("--json", action="store_true", help="print only the final JSON line")
    o = ap.parse_args()
    for k in ("cycles", "tokens", "threads", "memory_slots"):
        if getattr(o, k) < 1:
            ap.error(f"--{k.replace('_', '-')} wants a positive integer")

    t0 = time.perf_counter()
    llm = Llama(o.model, o.threads)
    load_ms = (time.perf_counter() - t0) * 1000
    tmp = None
    if not o.db:
        tmp = tempfile.TemporaryDirectory(prefix="driver-py-")
        o.db = os.path.join(tmp.name, "results.db")
    db = open_db(o.db)
    mem = Memory(o.memory_slots)

    keys = ("cycle_ms", "prefill_ms", "generation_ms", "memory_ms", "database_ms",
            "prompt_tokens", "generated_per_cycle")
    r = {k: [] for k in keys}
    first_text = None
    for c in range(o.cycles):
        start = time.perf_counter()
        n_prompt = prefill(llm, o.prompt)
        t1 = time.perf_counter()
        out = generate(llm, o.tokens)
        t2 = time.perf_counter()
        text = "".join(llm.piece(t) for t in out)
        nearest, score = update_memory(mem, text)
        t3 = time.perf_counter()
        save_result(db, (c, (t2 - start) * 1000, n_prompt, len(out), text, nearest, score), out)
        end = time.perf_counter()
        for k, v in zip(keys, ((end - start) * 1000, (t1 - start) * 1000, (t2 - t1) * 1000,
                               (t3 - t2) * 1000, (end - t3) * 1000, n_prompt, len(out))):
            r[k].append(v)
        if c == 0:
            first_text = text
        if not o.json:
            ms = (end - start) * 1000
            print(f"cycle {c}: {ms:.2f} ms, prompt {n_prompt} tok, generated {len(out)} tok, "
                  f"{len(out) / (ms / 1000):.1f} tok/s", flush=True)

    total_ms = sum(r["cycle_ms"])
    gen = sum(r["generated_per_cycle"])
    evaluated = [p + g - 1 for p, g in zip(r["prompt_tokens"], r["generated_per_cycle"])]
    r3 = lambda x: round(x, 3)  # noqa: E731
    result = {
        "driver": "python-" + llm.binding, "model": o.model, "threads": o.threads,
        "context_size": llm.n_ctx, "load_ms": r3(load_ms), "cycles": o.cycles,
        "tokens_per_cycle": o.tokens, "prompt_tokens": r["prompt_tokens"][0],
        "cycle_ms": [r3(x) for x in r["cycle_ms"]],
        "generated_per_cycle": r["generated_per_cycle"],
        "tokens_evaluated_per_cycle": evaluated,
        "decode_calls_per_cycle": r["generated_per_cycle"],  # 1 for the prompt + N - 1
        "prefill_ms": [r3(x) for x in r["prefill_ms"]],
        "generation_ms": [r3(x) for x in r["generation_ms"]],
        "total_ms": r3(total_ms), "avg_cycle_ms": r3(total_ms / o.cycles),
        "tokens_per_second": r3(gen / (total_ms / 1000)),
        "evaluated_tokens_per_second": r3(sum(evaluated) / (total_ms / 1000)),
        "first_cycle_text": first_text, "steps": "all",
        "memory_ms": [r3(x) for x in r["memory_ms"]],
        "database_ms": [r3(x) for x in r["database_ms"]],
        "db_rows": db.execute("SELECT (SELECT COUNT(*) FROM cycles) + (SELECT COUNT(*) FROM tokens)").fetchone()[0],
    }
    db.close()
    print(json.dumps(result), flush=True)
    llm.close()
    if tmp:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
