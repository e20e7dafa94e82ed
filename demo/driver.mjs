#!/usr/bin/env node
// infertrace demo: an LLM-inference experiment loop on real llama.cpp.
//
// Each cycle clears the sequence, tokenizes the prompt, evaluates it in one batch
// and generates exactly --tokens tokens greedily (temperature 0; end-of-generation
// tokens are yielded like any other, so random weights still give N tokens).
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
        json: { type: "boolean", default: false },
        quiet: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
    },
});
if (opt.help) {
    console.log(`usage: node driver.mjs [--model PATH] [--cycles N] [--tokens N] [--threads N]
                        [--prompt TEXT] [--ctx N] [--json] [--quiet]
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
const perCycleLines = !(opt.json || opt.quiet);
if (opt.tokenize !== "each" && opt.tokenize !== "once") {
    console.error(`driver: --tokenize wants 'each' or 'once', got '${opt.tokenize}'`);
    process.exit(2);
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
const prefillMs = [];
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
    const end = performance.now();
    cycleMs.push(end - start);
    genMs.push(end - firstTokenAt);
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
};
console.log(JSON.stringify(result));
await context.dispose();
await model.dispose();
await llama.dispose();
