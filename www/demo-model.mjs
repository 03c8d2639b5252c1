// The embedded demo model: a deterministic, scripted stand-in for an LLM behind an OpenAI
// Chat Completions–compatible streaming endpoint. It is not a language model: it recognises
// a few intents in the latest user message and answers with realistic streamed deltas.
//
//   arithmetic ("17*23")            -> a `calculator` tool call
//   time ("what time is it")        -> a `clock` tool call
//   several of them in one message  -> parallel tool calls
//   "slow" / "long task"            -> a `long_task` tool that reports progress
//   anything else                   -> a plain answer
//
// After tool results come back it writes the final answer from them, and every answer starts
// with a short thinking block (`reasoning_content`), so a UI's thinking path is exercised.

// Arithmetic is found in a list of tokens, each read by one sticky match as long as the token,
// so the scan is linear in the message. (A single regex for "number op number" backtracked
// over every start in a long run of digits: 100 KB of them took 24 s.)
const TOKEN = /(\d+)|(\s+)|([*x×/÷+-])|(\.)|[^]/uy;
const OPS = { x: '*', '×': '*', '÷': '/' };
const MAX_CALCULATIONS = 8;

/** The tokens of `message`: `{ digits }`, `{ op }`, `{ dot: true }`, `{ space: true }` or `{}`
 * (anything else). */
function tokens(message) {
  const out = [];
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(message); m !== null; m = TOKEN.exec(message)) {
    if (m[1] !== undefined) out.push({ digits: m[1] });
    else if (m[2] !== undefined) out.push({ space: true });
    else if (m[3] !== undefined) out.push({ op: m[3] });
    else out.push(m[4] !== undefined ? { dot: true } : {});
  }
  return out;
}

/** `a op b` pairs, left to right and not overlapping, as `[a, op, b]`: what
 * `/(-?\d+(?:\.\d+)?)\s*([*x×/÷+\-])\s*(-?\d+(?:\.\d+)?)/g` finds, without its backtracking. */
function arithmetic(message) {
  const t = tokens(message);
  // A number at token i: an optional `-`, digits, and optionally `.` and digits; [text, next].
  const number = (i) => {
    const sign = t[i]?.op === '-' ? '-' : '';
    const at = sign ? i + 1 : i;
    const whole = t[at]?.digits;
    if (whole === undefined) return undefined;
    const fraction = t[at + 1]?.dot ? t[at + 2]?.digits : undefined;
    return fraction === undefined ? [sign + whole, at + 1] : [`${sign}${whole}.${fraction}`, at + 3];
  };
  const skipSpace = (i) => (t[i]?.space ? i + 1 : i);
  const found = [];
  for (let i = 0; i < t.length; ) {
    const a = number(i);
    if (a) {
      const at = skipSpace(a[1]);
      const op = t[at]?.op;
      const b = op === undefined ? undefined : number(skipSpace(at + 1));
      if (b) {
        found.push([a[0], op, b[0]]);
        i = b[1];
        continue;
      }
    }
    i += 1;
  }
  return found;
}

const text = (m) => (typeof m.content === 'string' ? m.content : (m.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n'));

/** The tool calls the user's message asks for. */
function intents(message) {
  const calls = [];
  const lower = message.toLowerCase();
  // At most a few calculations: each streams for a while, and a message of 450,000 "1-"
  // would otherwise keep one response going for hours.
  for (const [a, op, b] of arithmetic(message).slice(0, MAX_CALCULATIONS)) {
    const sign = OPS[op] ?? op;
    calls.push({ name: 'calculator', arguments: { expression: `${a}${sign}${b}` } });
  }
  if (/\b(time|clock|date)\b/.test(lower)) calls.push({ name: 'clock', arguments: {} });
  if (/\bslow\b|long task|long-running/.test(lower)) calls.push({ name: 'long_task', arguments: { steps: 5, label: 'Crunching numbers' } });
  const transfer = /\b(?:transfer|send|pay)\s+(\d{1,9}(?:\.\d{1,2})?)\s*(?:eur|euros?|€)\s+to\s+(?:account\s+)?([a-z0-9-]{1,40})/.exec(lower);
  if (transfer) calls.push({ name: 'transfer', arguments: { to: transfer[2], eur: Number(transfer[1]) } });
  if (/\b(?:page title|title of (?:this|the|my) page)\b/.test(lower)) calls.push({ name: 'page_title', arguments: {} });
  return calls;
}

const GREETING = /^(hi|hello|hey)\b/i;

function plainAnswer(message) {
  const trimmed = message.trim();
  if (GREETING.test(trimmed)) {
    return 'Hello! I am the **scripted demo model** — not an LLM. Try:\n\n- `what is 17*23?`\n- `what time is it?`\n- `what is 6*7 and what time is it?` (parallel tools)\n- `run a slow long task` (progress updates; try Abort or steering)\n- `transfer 25 EUR to account 42` (waits for your approval)\n- `what is the title of this page?` (a client tool the page runs)';
  }
  return `You said: “${trimmed.slice(0, 200)}”.\n\nI am a scripted demo model, so I only know a few tricks: arithmetic like \`12*34\`, the current time, and a \`slow long task\`. Point the settings at a real provider for real answers.`;
}

/** The final answer written from the tool results that follow the last assistant message. */
function answerFromResults(results, steering) {
  const lines = results.map((r) => {
    const body = text(r).slice(0, 200);
    if (r.isError) return `- **${r.toolName}** failed: ${body}`;
    if (r.toolName === 'calculator') return `- The result is **${body}**.`;
    if (r.toolName === 'clock') return `- It is **${body}**.`;
    if (r.toolName === 'page_title') return `- The page is titled **${body}**.`;
    return `- ${r.toolName}: ${body}`;
  });
  const notes = steering.map((s) => `\n\nNoted your message: “${s.slice(0, 200)}”.`).join('');
  return `Here is what the tools returned:\n\n${lines.join('\n')}${notes}`;
}

/** Whether a tool result reads as a failure: its first line starts with "Error", is "Tool …
 * not found", or mentions "failed". String tests, linear in the text. */
function looksFailed(content) {
  const line = content.split(/[\n\r\u2028\u2029]/, 1)[0];
  return line.startsWith('Error') || (line.startsWith('Tool ') && line.indexOf(' not found', 5) >= 0) || line.includes('failed');
}

/**
 * The answer to a Chat Completions request body: `{ thinking, text?, calls? }`.
 */
export function respond(body) {
  const messages = body.messages ?? [];
  let lastAssistant = -1;
  messages.forEach((m, i) => { if (m.role === 'assistant') lastAssistant = i; });
  const after = messages.slice(lastAssistant + 1);
  const results = after.filter((m) => m.role === 'tool').map((m) => {
    const call = messages[lastAssistant]?.tool_calls?.find((c) => c.id === m.tool_call_id);
    const content = text(m);
    return { toolName: call?.function?.name ?? 'tool', content, isError: looksFailed(content) };
  });
  const users = after.filter((m) => m.role === 'user').map(text);
  // A new request after the results (a question, a greeting) is answered as such; anything
  // else that follows them (steering) is noted in the summary of the results.
  const fresh = users.length > 0 && (intents(users.at(-1)).length > 0 || GREETING.test(users.at(-1).trim()));
  if (results.length > 0 && !fresh) {
    return { thinking: 'The tools have answered; summarising their results.', text: answerFromResults(results, users) };
  }
  const last = users.at(-1) ?? '';
  const calls = intents(last);
  if (calls.length === 0) return { thinking: 'No tool needed for this one.', text: plainAnswer(last) };
  const names = calls.map((c) => c.name).join(' and ');
  return { thinking: `The user wants ${names}; ${calls.length > 1 ? 'calling them in parallel' : 'calling it'}.`, calls };
}

const pieces = (s, n) => s.match(new RegExp(`[\\s\\S]{1,${n}}`, 'gu')) ?? [];

/** The longest answer text streamed: it goes out in small timed pieces, so a request that
 * echoes a lot (many tool results) would otherwise keep its response going for hours. */
const MAX_TEXT = 4000;

/** The SSE body of an answer, as [text, delayMs] pieces. */
export function stream(answer, model = 'demo-scripted') {
  if (answer.text?.length > MAX_TEXT) answer = { ...answer, text: `${answer.text.slice(0, MAX_TEXT)}…` };
  const head = { id: 'chatcmpl-demo', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const chunk = (delta, finish = null, extra = {}) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  const out = [[chunk({ role: 'assistant', content: '' }), 0]];
  for (const p of pieces(answer.thinking, 6)) out.push([chunk({ reasoning_content: p }), 12]);
  let outputTokens = Math.ceil(answer.thinking.length / 4);
  if (answer.calls) {
    answer.calls.forEach((call, index) => {
      const id = `call_${index + 1}`;
      out.push([chunk({ tool_calls: [{ index, id, type: 'function', function: { name: call.name, arguments: '' } }] }), 20]);
      const args = JSON.stringify(call.arguments);
      outputTokens += Math.ceil(args.length / 4);
      for (const p of pieces(args, 5)) out.push([chunk({ tool_calls: [{ index, function: { arguments: p } }] }), 15]);
    });
  } else {
    outputTokens += Math.ceil(answer.text.length / 4);
    for (const p of pieces(answer.text, 4)) out.push([chunk({ content: p }), 10]);
  }
  const usage = { prompt_tokens: 120, completion_tokens: outputTokens, total_tokens: 120 + outputTokens };
  out.push([chunk({}, answer.calls ? 'tool_calls' : 'stop', { usage }), 5]);
  out.push(['data: [DONE]\n\n', 0]);
  return out;
}
