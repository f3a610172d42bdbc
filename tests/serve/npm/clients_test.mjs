// The official `openai` and `ollama` npm clients against a running `ork serve` (ORK_URL, e.g.
// http://127.0.0.1:8080): model listing, chat streamed and not, completions streamed and not,
// identical seeds giving identical text (streamed or not, on either API), max_tokens / num_predict
// giving finish_reason / done_reason "length". Started by tests/serve/npm_clients_test.sh.
// Exits non-zero with one line per failed check.
import OpenAI from 'openai';
import { Ollama } from 'ollama';

const url = process.env.ORK_URL;
if (!url) {
  console.error('clients_test: ORK_URL is not set');
  process.exit(2);
}
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };
const eq = (a, b, what) => check(a === b, `${what}: ${JSON.stringify(a)} !== ${JSON.stringify(b)}`);

const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120000 });
const ollama = new Ollama({ host: url });

// Models.
const models = [];
for await (const m of openai.models.list()) models.push(m.id);
check(models.length === 1, `openai models.list: ${JSON.stringify(models)}`);
const model = models[0];
const tags = await ollama.list();
check(tags.models.some((m) => m.name === model), `ollama list has no ${model}: ${JSON.stringify(tags)}`);

// Chat: the same seed twice, then streamed: one text.
const chatParams = {
  model, messages: [{ role: 'user', content: 'Tell me about love' }], seed: 42, temperature: 0.8, top_p: 0.95,
  max_tokens: 24,
};
const c1 = await openai.chat.completions.create(chatParams);
const c2 = await openai.chat.completions.create(chatParams);
const text = c1.choices[0].message.content;
check(text.length > 0, 'openai chat: empty text');
eq(c2.choices[0].message.content, text, 'openai chat: the same seed twice');
eq(c1.choices[0].message.role, 'assistant', 'openai chat: role');
check(c1.usage.completion_tokens > 0 && c1.usage.prompt_tokens > 0, `openai chat usage: ${JSON.stringify(c1.usage)}`);
let streamed = '';
let streamFinish = null;
let usage = null;
const stream = await openai.chat.completions.create({ ...chatParams, stream: true, stream_options: { include_usage: true } });
for await (const chunk of stream) {
  if (chunk.usage) usage = chunk.usage;
  if (chunk.choices.length === 0) continue;
  streamed += chunk.choices[0].delta.content ?? '';
  if (chunk.choices[0].finish_reason) streamFinish = chunk.choices[0].finish_reason;
}
eq(streamed, text, 'openai chat: streamed vs not');
eq(streamFinish, c1.choices[0].finish_reason, 'openai chat: streamed finish_reason');
check(usage !== null && usage.completion_tokens === c1.usage.completion_tokens,
  `openai chat stream usage: ${JSON.stringify(usage)} vs ${JSON.stringify(c1.usage)}`);

// max_tokens → "length".
const short = await openai.chat.completions.create({ ...chatParams, max_tokens: 3 });
eq(short.choices[0].finish_reason, 'length', 'openai chat: max_tokens 3 finish_reason');
eq(short.usage.completion_tokens, 3, 'openai chat: max_tokens 3 completion_tokens');

// Completions.
const compParams = { model, prompt: 'The best thing about', seed: 7, temperature: 0.7, max_tokens: 12 };
const p1 = await openai.completions.create(compParams);
const p2 = await openai.completions.create(compParams);
const ptext = p1.choices[0].text;
check(ptext.length > 0, 'openai completion: empty text');
eq(p2.choices[0].text, ptext, 'openai completion: the same seed twice');
let pstreamed = '';
for await (const chunk of await openai.completions.create({ ...compParams, stream: true })) {
  pstreamed += chunk.choices[0]?.text ?? '';
}
eq(pstreamed, ptext, 'openai completion: streamed vs not');
const plen = await openai.completions.create({ ...compParams, max_tokens: 2 });
eq(plen.choices[0].finish_reason, 'length', 'openai completion: max_tokens 2 finish_reason');

// Ollama chat: the same sampling as the OpenAI chat above gives its text.
const ollamaChat = {
  model, messages: chatParams.messages,
  options: { seed: 42, temperature: 0.8, top_p: 0.95, num_predict: 24 },
};
const o1 = await ollama.chat({ ...ollamaChat, stream: false });
eq(o1.message.content, text, 'ollama chat vs openai chat (same seed and sampling)');
eq(o1.message.role, 'assistant', 'ollama chat: role');
let ostreamed = '';
let last = null;
for await (const part of await ollama.chat({ ...ollamaChat, stream: true })) {
  ostreamed += part.message.content;
  last = part;
}
eq(ostreamed, text, 'ollama chat: streamed vs not');
check(last !== null && last.done === true, 'ollama chat stream: no final done object');
const olen = await ollama.chat({ ...ollamaChat, options: { ...ollamaChat.options, num_predict: 2 }, stream: false });
eq(olen.done_reason, 'length', 'ollama chat: num_predict 2 done_reason');
eq(olen.eval_count, 2, 'ollama chat: num_predict 2 eval_count');

// Ollama generate (raw: the same text as the OpenAI completion with the same sampling).
const gen = { model, prompt: compParams.prompt, raw: true, options: { seed: 7, temperature: 0.7, num_predict: 12 } };
const g1 = await ollama.generate({ ...gen, stream: false });
eq(g1.response, ptext, 'ollama generate raw vs openai completion');
let gstreamed = '';
for await (const part of await ollama.generate({ ...gen, stream: true })) gstreamed += part.response;
eq(gstreamed, g1.response, 'ollama generate: streamed vs not');
const glen = await ollama.generate({ ...gen, options: { ...gen.options, num_predict: 1 }, stream: false });
eq(glen.done_reason, 'length', 'ollama generate: num_predict 1 done_reason');

// A wrong model name is the server's 404, surfaced by the clients as an error.
let notFound = null;
try {
  await openai.chat.completions.create({ ...chatParams, model: 'no-such-model' });
} catch (e) {
  notFound = e.status;
}
eq(notFound, 404, 'openai chat with an unknown model');

if (failures.length) {
  for (const f of failures) console.error(`clients_test: FAILED ${f}`);
  process.exit(1);
}
console.log(`clients_test: ok (model ${model}, chat text ${JSON.stringify(text)})`);
