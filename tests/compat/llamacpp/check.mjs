// check.mjs -- loads testbed/model.gguf in real llama.cpp (node-llama-cpp's prebuilt CPU
// binary) and checks tokenisation and greedy decoding against the PyTorch reference outputs
// in tests/fixtures-testbed/reference-*.json. Standalone, not part of tests/run.
//
// usage: node check.mjs [MODEL.gguf] [FIXTURE_DIR]
// exit: 0 all prompts match, 1 a mismatch, 2 setup error.
//
// Decoding is argmax over llama.cpp's raw logits, computed here (not a sampler), one token
// at a time through controlledEvaluate(); the sampler's own greedy pick (temperature 0) is
// requested as well and must agree. Tokenisation: model.tokenize(prompt_text, true), i.e.
// llama_tokenize with special tokens parsed and no BOS added (the text starts with "<s>").

import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");
const modelPath = resolve(process.argv[2] ?? join(root, "testbed/model.gguf"));
const fixtureDir = resolve(process.argv[3] ?? join(root, "tests/fixtures-testbed"));
const STOP = new Set([5 /* <|end|> */, 2 /* </s> */]);
// First-step logit gaps (top-1 minus top-k) are compared with the reference only as a report:
// llama.cpp's CPU matmuls round activations to F16 before the F16 dot products, the
// reference computes in FP32, so small differences are expected and not a failure.
const GAP_WARN = 0.05;

const logLines = [];
let llama;
try {
    llama = await getLlama({
        gpu: false,
        // One thread: a 5M-parameter model gains nothing from more, and node-llama-cpp's default
        // (max(cores, 4)) spins 4 ggml threads on a 2-core machine, where a run crawled or stalled.
        maxThreads: 1,
        build: "never",          // never compile llama.cpp from source
        skipDownload: true,      // never fetch anything
        usePrebuiltBinaries: true,
        logLevel: LlamaLogLevel.info,
        logger: (level, message) => { logLines.push(String(message)); },
    });
} catch (e) {
    console.error(`check: cannot load llama.cpp binary: ${e?.message ?? e}`);
    process.exit(2);
}

let model;
try {
    model = await llama.loadModel({ modelPath, gpuLayers: 0, useMmap: true });
} catch (e) {
    console.error(`check: llama.cpp failed to load ${modelPath}: ${e?.message ?? e}`);
    for (const l of logLines.slice(-20)) process.stderr.write(l.endsWith("\n") ? l : l + "\n");
    process.exit(2);
}

// What llama.cpp itself says about the file (its print_info lines). The logger callback is
// delivered asynchronously, so wait (at most 2 s) until the last wanted line has arrived.
for (let waited = 0; waited < 2000 && !logLines.some((l) => l.includes("n_expert_used")); waited += 20)
    await new Promise((r) => setTimeout(r, 20));
const want = ["arch", "vocab type", "n_vocab", "n_embd", "n_layer", "n_head", "n_head_kv",
    "n_rot", "n_expert", "n_expert_used", "n_ff", "rope type", "freq_base_train",
    "n_ctx_train", "f_norm_rms_eps", "model type", "model params", "file type",
    "BOS token", "EOS token", "EOT token", "UNK token", "PAD token"];
const info = new Map();
for (const chunk of logLines) {
    for (const line of chunk.split("\n")) {
        const m = /^(?:print_info|llm_load_print_meta|load):\s+([A-Za-z_ ]+?)\s*=\s*(.*)$/.exec(line.trim());
        if (m && want.includes(m[1]) && !info.has(m[1])) info.set(m[1], m[2].trim());
    }
}
console.log(`llama.cpp: ${llama.llamaCppRelease.repo} ${llama.llamaCppRelease.release}` +
    ` (node-llama-cpp prebuilt, gpu=${llama.gpu}, build=${llama.buildType})`);
console.log(`model: ${modelPath}`);
for (const chunk of logLines)
    for (const line of chunk.split("\n"))
        if (/warn|error|mismatch|not marked|incorrect/i.test(line)) console.log(`llama.cpp log: ${line.trim()}`);
if (info.size > 0)
    console.log("llama.cpp print_info: " + want.filter((k) => info.has(k)).map((k) => `${k}=${info.get(k)}`).join(", "));
else
    console.log("llama.cpp print_info: (no info lines captured)");


function argmax(logits) {
    // logits: Map<token, value>; ties go to the lowest id, as torch.argmax does.
    let best = -1, bestV = -Infinity;
    for (const [t, v] of logits) if (v > bestV || (v === bestV && t < best)) { best = t; bestV = v; }
    return best;
}

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const files = readdirSync(fixtureDir).filter((f) => /^reference-.*\.json$/.test(f)).sort();
if (files.length === 0) {
    console.error(`check: no reference-*.json in ${fixtureDir}`);
    process.exit(2);
}

let failures = 0;
for (const f of files) {
    const ref = JSON.parse(readFileSync(join(fixtureDir, f), "utf8"));
    const name = f.replace(/^reference-|\.json$/g, "");
    const problems = [];

    const ids = model.tokenize(ref.prompt_text, true);
    if (!same(ids, ref.prompt_ids))
        problems.push(`prompt ids differ: llama.cpp [${ids.join(",")}] ref [${ref.prompt_ids.join(",")}]`);

    // A fresh context per prompt: empty KV cache, nothing carried over.
    const context = await model.createContext({ contextSize: 256, batchSize: 256, sequences: 1 });
    const sequence = context.getSequence();
    const gen = [];
    let firstLogits = null;
    let input = ref.prompt_ids.map((t, i) => i === ref.prompt_ids.length - 1
        ? [t, { generateNext: { token: true, logits: true, options: { temperature: 0 } } }] : t);
    while (gen.length < ref.generated_ids.length) {
        const out = await sequence.controlledEvaluate(input);
        const next = out[input.length - 1]?.next;
        if (next?.logits == null) { problems.push("no logits returned"); break; }
        const tok = argmax(next.logits);
        if (next.token !== tok) problems.push(`step ${gen.length}: sampler picked ${next.token}, argmax ${tok}`);
        if (firstLogits === null) firstLogits = next.logits;
        gen.push(tok);
        if (STOP.has(tok)) break;
        input = [[tok, { generateNext: { token: true, logits: true, options: { temperature: 0 } } }]];
    }
    if (!same(gen, ref.generated_ids)) {
        const k = gen.findIndex((t, i) => t !== ref.generated_ids[i]);
        problems.push(`generated ids differ at step ${k < 0 ? gen.length : k}: llama.cpp ` +
            `${JSON.stringify(model.detokenize(gen, true))} ref ${JSON.stringify(ref.generated_text)}`);
    }

    // First-step logit gaps vs the reference's top-5 (report only).
    let gapNote = "";
    if (firstLogits && Array.isArray(ref.top5_first_step) && ref.top5_first_step.length > 1) {
        const r = ref.top5_first_step;
        let maxd = 0;
        for (let i = 1; i < r.length; i++) {
            const ours = firstLogits.get(r[0].id) - firstLogits.get(r[i].id);
            const theirs = r[0].logit - r[i].logit;
            maxd = Math.max(maxd, Math.abs(ours - theirs));
        }
        gapNote = ` top5 gap diff ${maxd.toExponential(1)}${maxd > GAP_WARN ? " (WARN)" : ""}`;
    }

    await context.dispose();
    const text = model.detokenize(gen, true);
    if (problems.length === 0) {
        console.log(`ok   ${name}: ${ids.length} prompt ids equal, ${gen.length} generated ids equal` +
            ` ${JSON.stringify(text)}${gapNote}`);
    } else {
        failures++;
        console.log(`FAIL ${name}:${gapNote}`);
        for (const p of problems) console.log(`     ${p}`);
    }
}

console.log(`summary: ${files.length - failures}/${files.length} prompts match the PyTorch reference in llama.cpp ` +
    `${llama.llamaCppRelease.release}`);
await model.dispose();
await llama.dispose();
process.exit(failures === 0 ? 0 : 1);
