// Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/ (not committed):
// the repo's fixtures (SSE transcripts, streaming-JSON cases, validation cases, the
// JSON-Schema-Test-Suite, request and transform cases) plus generated hostile seeds: JSON
// nested 2,000 and 20,000 deep, self-referencing and mutually referencing schemas, and
// tool-call arguments nested deep in each API's stream. Deterministic; idempotent (files
// are named by content hash, so re-running adds nothing new).
//
// node fuzz/seeds.mjs [corpus-dir]   (default: fuzz/corpus)
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const fixtures = join(root, "tests", "fixtures");
const out = process.argv[2] ?? join(root, "fuzz", "corpus");

const counts = {};
function put(target, bytes) {
  const buf = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : Buffer.from(bytes);
  const dir = join(out, target);
  mkdirSync(dir, { recursive: true });
  const name = createHash("sha1").update(buf).digest("hex");
  writeFileSync(join(dir, name), buf);
  counts[target] = (counts[target] ?? 0) + 1;
}
// Targets that read a split seed first: one byte, then the body.
const SPLITS = [0, 1, 7, 42, 200];
function putSplit(target, body, i = 0) {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body, "utf8");
  put(target, Buffer.concat([Buffer.from([SPLITS[i % SPLITS.length]]), b]));
}
const json = (name) => JSON.parse(readFileSync(join(fixtures, "reference", name), "utf8"));

// Deep JSON text: arrays, objects, and a mix, closed or cut.
const deepArray = (n) => "[".repeat(n) + "1" + "]".repeat(n);
const deepObject = (n) => '{"a":'.repeat(n) + "1" + "}".repeat(n);
const deepMixed = (n) => '{"a":['.repeat(n / 2) + '"x"' + "]}".repeat(n / 2);
const DEPTHS = [2000, 20000];
const deepDocs = DEPTHS.flatMap((n) => [deepArray(n), deepObject(n), deepMixed(n)]);

// ---- sse and the four provider decoders: the recorded transcripts --------------------
const apis = {
  openai_completions: "openai-completions",
  openai_responses: "openai-responses",
  anthropic: "anthropic",
  google: "google",
};
let i = 0;
for (const [target, dir] of Object.entries(apis)) {
  for (const f of readdirSync(join(fixtures, dir)).sort()) {
    const bytes = readFileSync(join(fixtures, dir, f));
    putSplit(target, bytes, i);
    putSplit("sse", bytes, i);
    i += 1;
  }
}
// The SSE corner cases the standard names.
for (const [n, body] of [
  "\uFEFFdata: bom\n\n",
  "data:a\r\ndata:b\r\rdata: c\n\n",
  "event: x\nid: 7\nretry: 1500\ndata\n\n",
  "id: a\0b\ndata: nul id\n\n: comment\n\n",
  "data: no end",
  "retry: 99999999999999999999999\n",
  "data: \xff\xfe bad utf-8\n\n",
].entries()) {
  putSplit("sse", Buffer.from(body, "latin1"), n);
}

// Tool-call arguments nested deep, as each API streams them (issue 12 point 2).
const sse = (events) => events.map(([e, d]) => (e ? `event: ${e}\n` : "") + `data: ${JSON.stringify(d)}\n\n`).join("");
for (const n of DEPTHS) {
  for (const args of [deepArray(n), deepObject(n)]) {
    putSplit("openai_completions", sse([
      [null, { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "t", arguments: "" } }] } }] }],
      [null, { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: args } }] } }] }],
      [null, { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }],
    ]) + "data: [DONE]\n\n");
    putSplit("openai_responses", sse([
      ["response.output_item.added", { type: "response.output_item.added", output_index: 0, item: { id: "fc", type: "function_call", arguments: "", call_id: "c1", name: "t" } }],
      ["response.function_call_arguments.delta", { type: "response.function_call_arguments.delta", item_id: "fc", output_index: 0, delta: args }],
      ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item: { id: "fc", type: "function_call", arguments: args, call_id: "c1", name: "t" } }],
      ["response.completed", { type: "response.completed", response: { id: "r", status: "completed", output: [] } }],
    ]));
    putSplit("anthropic", sse([
      ["message_start", { type: "message_start", message: { id: "m", usage: { input_tokens: 1, output_tokens: 1 } } }],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "c1", name: "t", input: {} } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: args } }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 2 } }],
      ["message_stop", { type: "message_stop" }],
    ]));
    // Gemini sends arguments as a JSON value inside the chunk: the chunk itself is deep.
    putSplit("google", `data: {"candidates": [{"content": {"parts": [{"functionCall": {"name": "t", "args": {"a": ${args}}}}]}, "finishReason": "STOP"}]}\n\n`);
  }
}

// ---- json: JSON texts (the streaming cases, deep ones, numbers and strings at the edges) --
for (const c of json("streaming-json.json")) put("json", c.doc);
for (const d of deepDocs) put("json", d);
for (const t of ["-0", "0.1", "1e400", "-1e-400", "18446744073709551616", "-9223372036854775809",
  "1.7976931348623157e308", "5e-324", "123456789012345678901234567890", "0.30000000000000004",
  '"\\ud83d\\ude00"', '"\\ud83d"', '["\\ude00", "\\u0000\\n"]', '{"a": 1, "a": [2], "b": {}}',
  "[1,]", '{"a" 1}', "01", "1.", "[1 2]", '"a\tb"']) put("json", t);

// ---- schema: [schema, value] --------------------------------------------------------
for (const c of json("validation.json")) put("schema", JSON.stringify([c.schema, c.args]));
const suite = join(fixtures, "json-schema-test-suite", "draft2020-12");
for (const f of readdirSync(suite).sort()) {
  for (const group of JSON.parse(readFileSync(join(suite, f), "utf8"))) {
    for (const t of group.tests) put("schema", JSON.stringify([group.schema, t.data]));
  }
}
const obj = { type: "object", properties: { a: { type: "string" } } };
for (const s of [
  { $ref: "#" },
  { allOf: [{ $ref: "#" }] },
  { anyOf: [{ $ref: "#" }, { type: "string" }] },
  { $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" },
  { $defs: { a: { anyOf: [{ $ref: "#/$defs/b" }] }, b: { oneOf: [{ $ref: "#/$defs/a" }] } }, $ref: "#/$defs/a" },
  { $defs: { a: { $anchor: "x", not: { $ref: "#x" } } }, $ref: "#/$defs/a" },
  { type: "object", properties: { next: { $ref: "#" } } }, // recursive, but through the value
  { $schema: "http://json-schema.org/draft-07/schema#", definitions: { a: { $ref: "#/definitions/a" } }, $ref: "#/definitions/a" },
]) {
  for (const v of [1, "x", { next: { next: {} } }, [1, [2]]]) put("schema", JSON.stringify([s, v]));
}
for (const d of deepDocs) {
  put("schema", `[${JSON.stringify(obj)}, ${d}]`); // deep value
  put("schema", `[${d.replaceAll('"a":', '"properties":').replace(/1/, "{}")}, {"a": 1}]`); // deep schema
}
put("schema", JSON.stringify([{ type: "object", properties: { s: { type: "string", pattern: "^\\p{L}+$" } } }, { s: "\ud83d" }]));

// ---- messages: {model, messages, options} --------------------------------------------
for (const c of json("openai-completions-requests.json")) put("messages", JSON.stringify({ model: c.model, messages: c.messages, options: c.options }));
for (const c of json("transform-messages.json")) put("messages", JSON.stringify({ model: c.model, messages: c.messages }));
for (const c of json("loop.json")) put("messages", JSON.stringify({ messages: [...(c.prompts ?? []), ...(c.responses ?? [])] }));
for (const d of deepDocs) {
  put("messages", `[{"role": "user", "content": [{"type": "text", "text": "x"}], "timestamp": 1, "extra": ${d}}]`);
  put("messages", `[{"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "t", "arguments": {"a": ${d}}}], "stopReason": "toolUse", "timestamp": 1}]`);
  put("messages", `[{"role": "system", "content": "s", "toolsAdded": [{"name": "t", "description": "d", "parameters": ${d}}], "timestamp": 0}]`);
}
put("messages", JSON.stringify([{ role: "user", content: "half an emoji: \ud83d", timestamp: 1 }]));

for (const [t, n] of Object.entries(counts).sort()) console.log(`seeds ${t}: ${n}`);
