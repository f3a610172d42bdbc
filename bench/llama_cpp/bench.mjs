// llama.cpp (the CPU build inside node-llama-cpp) on a GGUF file: prompt processing (one batch of P
// random tokens, no logits but the last) and generation (N greedy tokens from a one-token prompt),
// R repetitions each after a warm-up; prints one JSON object with every run and the medians.
// usage: node bench.mjs MODEL [THREADS=2] [REPS=5] [P=128] [N=64]
import {getLlama} from "node-llama-cpp";

const [model, threads = "2", reps = "5", P = "128", N = "64"] = process.argv.slice(2);
const T = parseInt(threads), R = parseInt(reps), np = parseInt(P), ng = parseInt(N);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const m = await llama.loadModel({modelPath: model});
const ctx = await m.createContext({contextSize: Math.max(512, np + ng + 16), batchSize: Math.max(512, np), threads: T});
const seq = ctx.getSequence();
const vocab = m.fileInfo.metadata.tokenizer.ggml.tokens.length;
const random = (n, seed) => {
  let x = seed;
  return Array.from({length: n}, () => { x = (x * 1103515245 + 12345) % 2147483648; return 1 + (x % (vocab - 1)); });
};
const median = v => { const s = [...v].sort((a, b) => a - b), h = s.length >> 1; return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2; };

await seq.evaluateWithoutGeneratingNewTokens(random(16, 1));  // warm-up
const pp = [], tg = [];
for (let r = 0; r < R; ++r) {
  await seq.clearHistory();
  const t0 = performance.now();
  await seq.evaluateWithoutGeneratingNewTokens(random(np, 100 + r));
  pp.push(np * 1000 / (performance.now() - t0));
}
for (let r = 0; r < R; ++r) {
  await seq.clearHistory();
  let n = 0;
  const t0 = performance.now();
  for await (const t of seq.evaluate(random(1, 200 + r), {temperature: 0})) { if (++n >= ng) break; }
  tg.push(ng * 1000 / (performance.now() - t0));
}
console.log(JSON.stringify({runtime: "llama.cpp (node-llama-cpp 3.21.1)", model, threads: T, repetitions: R,
  n_prompt: np, n_gen: ng, pp_tok_per_s_median: median(pp), pp_tok_per_s_runs: pp,
  tg_tok_per_s_median: median(tg), tg_tok_per_s_runs: tg}));
process.exit(0);
