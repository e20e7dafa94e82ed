#!/usr/bin/env node
// infertrace demo: an LLM-inference experiment loop on real llama.cpp.
//
// Each cycle clears the sequence, tokenizes the prompt, evaluates it in one batch
// and generates exactly --tokens tokens greedily (temperature 0; end-of-generation
// tokens are yielded like any other, so random weights still give N tokens).
// Then, unless --steps none, the loop's own step (updateMemory: the output's
// vector goes into a memory buffer, which is searched for its nearest earlier
// entry) and the database step (saveResult: the cycle's row and its tokens are
// written to SQLite through sql.js, SQLite compiled to WebAssembly).
// The loop is JavaScript: node-llama-cpp calls into libllama / libggml through its
// addon, which runs llama_decode on a libuv worker thread.
//
//   node demo/driver.mjs --model demo/models/tiny.gguf --cycles 5 --tokens 16 --threads 2
//
// Prints one line per cycle and, last, one JSON line with the totals, so that a
// test can compare a tracer's figures with the driver's own. Native calls per
// cycle (see docs/demo.md): llama_tokenize once, first; llama_decode once for the
// prompt (one batch while the prompt fits --ctx's batch) and once per generated
// token but the last, i.e. --tokens calls.
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import initSqlJs from "sql.js";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
    options: {
        model: { type: "string", default: new URL("./models/tiny.gguf", import.meta.url).pathname },
        cycles: { type: "string", default: "5" },
        tokens: { type: "string", default: "16" },
        threads: { type: "string", default: "2" },
        prompt: { type: "string", default: "The quick brown fox jumps over the lazy dog." },
        ctx: { type: "string", default: "512" },
        tokenize: { type: "string", default: "each" },
        steps: { type: "string", default: "all" },
        "memory-slots": { type: "string", default: "4096" },
        json: { type: "boolean", default: false },
        quiet: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
    },
});
if (opt.help) {
    console.log(`usage: node driver.mjs [--model PATH] [--cycles N] [--tokens N] [--threads N]
                        [--prompt TEXT] [--ctx N] [--steps all|none] [--memory-slots N]
                        [--json] [--quiet]
  --steps   all: after inference, updateMemory and saveResult (SQLite) each cycle;
            none: inference only
  --json    print only the final JSON line (no per-cycle lines)
  --quiet   same as --json`);
    process.exit(0);
}
const int = (name) => {
    const v = Number.parseInt(opt[name], 10);
    if (!Number.isFinite(v) || v < (name === "threads" ? 0 : 1)) {
        console.error(`driver: --${name} wants a positive integer, got '${opt[name]}'`);
        process.exit(2);
    }
    return v;
};
const cycles = int("cycles"), nTokens = int("tokens"), threads = int("threads"), ctxSize = int("ctx");
const memorySlots = int("memory-slots");
const perCycleLines = !(opt.json || opt.quiet);
if (opt.tokenize !== "each" && opt.tokenize !== "once") {
    console.error(`driver: --tokenize wants 'each' or 'once', got '${opt.tokenize}'`);
    process.exit(2);
}
if (opt.steps !== "all" && opt.steps !== "none") {
    console.error(`driver: --steps wants 'all' or 'none', got '${opt.steps}'`);
    process.exit(2);
}
const steps = opt.steps === "all";

// The loop's own step: a memory of past outputs. Each output becomes a DIM-wide
// vector (hashed character trigrams, normalized) stored in a ring of memorySlots
// slots; the nearest stored vector by dot product is looked up first, the way an
// agent recalls its closest earlier answer.
const DIM = 1024;
const memory = new Float32Array(memorySlots * DIM);
let memoryUsed = 0;
function updateMemory(text) {
    const v = new Float32Array(DIM);
    for (let i = 0; i + 2 < text.length; i++) {
        const h = (text.charCodeAt(i) * 961 + text.charCodeAt(i + 1) * 31 + text.charCodeAt(i + 2)) % DIM;
        v[h] += 1;
    }
    let norm = 0;
    for (let d = 0; d < DIM; d++) norm += v[d] * v[d];
    norm = Math.sqrt(norm) || 1;
    for (let d = 0; d < DIM; d++) v[d] /= norm;
    // search the whole buffer: empty slots are zero vectors
    let best = -1, bestScore = -Infinity;
    for (let s = 0; s < memorySlots; s++) {
        let dot = 0;
        const base = s * DIM;
        for (let d = 0; d < DIM; d++) dot += memory[base + d] * v[d];
        if (dot > bestScore) { bestScore = dot; best = s; }
    }
    memory.set(v, (memoryUsed % memorySlots) * DIM);
    memoryUsed++;
    return { nearest: best, score: bestScore };
}

// The database step: the cycle's result row and one row per generated token,
// in one transaction, then the running totals read back.
let db = null, insertCycle = null, insertToken = null;
if (steps) {
    const SQL = await initSqlJs();
    db = new SQL.Database();
    db.run(`CREATE TABLE cycles (id INTEGER PRIMARY KEY, ms REAL, prompt_tokens INTEGER,
                generated INTEGER, text TEXT, nearest INTEGER, score REAL);
            CREATE TABLE tokens (cycle INTEGER, pos INTEGER, token INTEGER);
            CREATE INDEX tokens_token ON tokens(token);`);
    insertCycle = db.prepare("INSERT INTO cycles VALUES (?, ?, ?, ?, ?, ?, ?)");
    insertToken = db.prepare("INSERT INTO tokens VALUES (?, ?, ?)");
}
function saveResult(row, tokens) {
    db.run("BEGIN");
    insertCycle.run([row.id, row.ms, row.promptTokens, row.generated, row.text, row.nearest, row.score]);
    for (let i = 0; i < tokens.length; i++) insertToken.run([row.id, i, tokens[i]]);
    db.run("COMMIT");
    const stats = db.exec(`SELECT COUNT(*), (SELECT COUNT(DISTINCT token) FROM tokens),
                                  (SELECT token FROM tokens GROUP BY token ORDER BY COUNT(*) DESC LIMIT 1)
                           FROM cycles`);
    return stats[0].values[0];
}

const t0 = performance.now();
const llama = await getLlama({
    gpu: false,
    build: "never",
    usePrebuiltBinaries: true,
    skipDownload: true,
    progressLogs: false,
    logLevel: LlamaLogLevel.error,
    maxThreads: threads,
});
const model = await llama.loadModel({ modelPath: opt.model, gpuLayers: 0, useMmap: true });
const context = await model.createContext({
    contextSize: ctxSize,
    threads: { ideal: threads, min: threads },
    sequences: 1,
    flashAttention: false,
});
const sequence = context.getSequence();
const loadMs = performance.now() - t0;

const promptOnce = opt.tokenize === "once" ? model.tokenize(opt.prompt) : null;
const prefillMs = [], memoryMs = [], databaseMs = [];
const cycleMs = [], genMs = [], promptTokens = [], generated = [], evaluated = [], decodeCalls = [];
let firstTokens = null;
for (let c = 0; c < cycles; c++) {
    const start = performance.now();
    // llama_tokenize: the one native call at the very start of each cycle (the marker)
    const input = promptOnce ?? model.tokenize(opt.prompt); // adds BOS: the model says add_bos_token
    await sequence.clearHistory();                     // llama_memory_seq_rm, from cycle 1 on
    const out = [];
    let firstTokenAt = 0;
    const evalStart = performance.now();
    // evaluate() decodes the prompt in one batch, samples, yields the token; each
    // next() decodes the yielded token and samples again. Stop after N tokens: the
    // last one is sampled but not decoded.
    for await (const tok of sequence.evaluate(input, { temperature: 0, yieldEogToken: true })) {
        if (out.length === 0) firstTokenAt = performance.now();
        out.push(tok);
        if (out.length >= nTokens) break;
    }
    const inferEnd = performance.now();
    if (steps) {
        const text = model.detokenize(out);
        const mem = updateMemory(text);
        const memEnd = performance.now();
        saveResult({ id: c, ms: inferEnd - start, promptTokens: input.length, generated: out.length,
                     text, nearest: mem.nearest, score: mem.score }, out);
        const dbEnd = performance.now();
        memoryMs.push(memEnd - inferEnd);
        databaseMs.push(dbEnd - memEnd);
    }
    const end = performance.now();
    cycleMs.push(end - start);
    genMs.push(inferEnd - firstTokenAt);
    prefillMs.push(firstTokenAt - evalStart);
    promptTokens.push(input.length);
    generated.push(out.length);
    evaluated.push(input.length + out.length - 1);      // tokens that went through llama_decode
    decodeCalls.push(1 + out.length - 1);               // one batch for the prompt, one per fed-back token
    if (c === 0) firstTokens = out;
    if (perCycleLines) {
        const ms = end - start;
        console.log(`cycle ${c}: ${ms.toFixed(2)} ms, prompt ${input.length} tok, generated ${out.length} tok, ` +
            `${(out.length / (ms / 1000)).toFixed(1)} tok/s`);
    }
}

const sum = (a) => a.reduce((x, y) => x + y, 0);
const r3 = (x) => Math.round(x * 1000) / 1000;
const totalMs = sum(cycleMs);
const result = {
    driver: "node-llama-cpp",
    model: opt.model,
    threads,
    context_size: context.contextSize,
    batch_size: context.batchSize,
    load_ms: r3(loadMs),
    cycles,
    tokens_per_cycle: nTokens,
    prompt_tokens: promptTokens[0] ?? 0,
    cycle_ms: cycleMs.map(r3),
    generated_per_cycle: generated,
    tokens_evaluated_per_cycle: evaluated,
    decode_calls_per_cycle: decodeCalls,
    tokenize: opt.tokenize,
    // the prompt's evaluation up to the first token, and the generation after it
    prefill_ms: prefillMs.map(r3),
    generation_ms: genMs.map(r3),
    total_ms: r3(totalMs),
    avg_cycle_ms: r3(totalMs / cycles),
    // generated tokens over the whole cycle's time (prompt included)
    tokens_per_second: r3(sum(generated) / (totalMs / 1000)),
    // tokens that went through llama_decode over the whole cycle's time
    evaluated_tokens_per_second: r3(sum(evaluated) / (totalMs / 1000)),
    first_cycle_text: model.detokenize(firstTokens ?? []),
    steps: opt.steps,
    // the loop's own step and the database step, per cycle (empty with --steps none)
    memory_ms: memoryMs.map(r3),
    database_ms: databaseMs.map(r3),
    db_rows: steps ? db.exec("SELECT (SELECT COUNT(*) FROM cycles) + (SELECT COUNT(*) FROM tokens)")[0].values[0][0] : 0,
};
if (db) {
    insertCycle.free();
    insertToken.free();
    db.close();
}
console.log(JSON.stringify(result));
await context.dispose();
await model.dispose();
await llama.dispose();
