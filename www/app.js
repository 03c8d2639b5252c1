// The demo page: a chat over this package's `Agent`, with tool cards, steering, follow-ups,
// abort, an event inspector and per-turn usage. A readable example of the API: everything
// the page shows comes from `agent.subscribe` events and `agent.state`. A real provider's
// model, with its prices, comes from the package's catalogue (`pi-agent-wasm/models`).
import { Agent } from 'pi-agent-wasm';
import { connectSession } from 'pi-agent-wasm/cloudflare';
import { Recorder, replay, forkSnapshot, checkpointAt } from 'pi-agent-wasm/cassette';
import { demoTools, pageTitleInPage } from './tools.js';
import { renderMarkdown } from './markdown.js';

const $ = (id) => document.getElementById(id);

/**
 * Keeps a scrolling panel at its end as content arrives, unless the user has scrolled up from
 * it; scrolled back to the end, it follows again. Returns `follow`, to call after adding
 * content (also called when the panel itself changes size).
 */
function stickToEnd(panel) {
  let pinned = true;
  let held = false; // a pointer is down on the panel (dragging its scroll bar, selecting text)
  let lastTop = panel.scrollTop;
  const atEnd = () => panel.scrollHeight - panel.scrollTop - panel.clientHeight <= 2;
  const follow = () => {
    if (pinned && !held) panel.scrollTop = panel.scrollHeight;
    lastTop = panel.scrollTop;
  };
  panel.addEventListener('scroll', () => {
    // Only a move up leaves the end: content arriving or the panel shrinking is no reason to.
    if (atEnd()) pinned = true;
    else if (panel.scrollTop < lastTop - 1) pinned = false;
    lastTop = panel.scrollTop;
  }, { passive: true });
  // Known before the scroll itself, which new content could otherwise undo before its event.
  panel.addEventListener('wheel', (e) => { if (e.deltaY < 0) pinned = false; }, { passive: true });
  panel.addEventListener('keydown', (e) => { if (['ArrowUp', 'PageUp', 'Home'].includes(e.key)) pinned = false; });
  panel.addEventListener('pointerdown', () => { held = true; });
  for (const type of ['pointerup', 'pointercancel']) addEventListener(type, () => { held = false; }, true);
  new ResizeObserver(follow).observe(panel);
  return follow;
}
const el = (tag, className, text) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};

// --- Settings -------------------------------------------------------------------------

// `catalogue`: the provider whose models pi-agent-wasm/models lists (the model's API, limits
// and prices come from there). The others have no price: the scripted model is not an LLM,
// a local server is free, and the Worker backend chooses its own model.
const PRESETS = {
  demo: { label: 'Scripted demo model (offline)', api: 'openai-completions', baseUrl: `${location.origin}/demo/v1`, model: 'demo-scripted', key: false,
    hint: 'A deterministic scripted model served by the demo server: not an LLM. No key needed.' },
  openai: { label: 'OpenAI', api: 'openai-responses', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', key: true, catalogue: 'openai', hint: 'OpenAI Responses API.' },
  anthropic: { label: 'Anthropic', api: 'anthropic-messages', baseUrl: 'https://api.anthropic.com', model: 'claude-sonnet-4-5', key: true, catalogue: 'anthropic', hint: 'Anthropic Messages API (browser access header sent).' },
  gemini: { label: 'Google Gemini', api: 'google-generative-ai', baseUrl: 'https://generativelanguage.googleapis.com/v1beta', model: 'gemini-2.5-flash', key: true, catalogue: 'google', hint: 'Gemini streamGenerateContent.' },
  openrouter: { label: 'OpenRouter', api: 'openai-completions', baseUrl: 'https://openrouter.ai/api/v1', model: 'openai/gpt-4o-mini', key: true, catalogue: 'openrouter', hint: 'OpenAI-compatible Chat Completions.' },
  worker: { label: 'Worker backend (examples/worker)', api: 'openai-completions', baseUrl: `${location.origin}/worker`, model: 'demo-scripted', key: false,
    hint: 'A session on a Durable Object: run `npm ci && npm run dev -- --port 8799` in examples/worker (this server relays /worker to it). The agent runs in the Worker; this page sends prompts, steering and aborts over HTTP and follows the events; a reload shows them again, once.' },
  local: { label: 'Local server (Ollama, llama.cpp)', api: 'openai-completions', baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen2.5:7b', key: false,
    hint: 'Any OpenAI-compatible server; the server must allow this page\'s origin (CORS).' },
};
const KEY_STORE = 'pi-agent-wasm-demo-key';
const BACKEND_STORE = 'pi-agent-wasm-demo-backend';
let apiKey = sessionStorage.getItem(KEY_STORE) ?? '';

function settings() {
  const preset = PRESETS[$('preset').value];
  return {
    preset: $('preset').value,
    api: preset.api,
    baseUrl: $('base-url').value.trim().replace(/\/+$/, ''),
    modelId: $('model-id').value.trim(),
    thinking: $('thinking').value,
    toolExecution: $('tool-execution').value,
  };
}

function applyPreset(name) {
  const p = PRESETS[name];
  worker.on = name === 'worker';
  // The Worker backend is remembered for the tab: a reload shows its session again.
  if (worker.on) sessionStorage.setItem(BACKEND_STORE, 'worker');
  else sessionStorage.removeItem(BACKEND_STORE);
  $('base-url').value = p.baseUrl;
  $('model-id').value = p.model;
  $('preset-hint').textContent = p.hint;
  $('handoff').textContent = worker.on ? 'Bring back to the page' : 'Continue in the Worker';
  updateModelLabel();
  updatePriceHint();
}

function updateModelLabel() {
  const s = settings();
  const label = $('model-label');
  label.textContent = s.preset === 'demo' ? 'Scripted demo model — not an LLM' : s.preset === 'worker' ? `Worker backend · ${s.baseUrl}` : `${PRESETS[s.preset].label} · ${s.modelId}`;
  label.classList.toggle('demo', s.preset === 'demo');
}

function initSettings() {
  for (const [name, p] of Object.entries(PRESETS)) $('preset').append(new Option(p.label, name));
  const remembered = sessionStorage.getItem(BACKEND_STORE) === 'worker' ? 'worker' : 'demo';
  $('preset').value = remembered;
  applyPreset(remembered);
  if (remembered === 'worker') resumeWorker();
  $('api-key').value = apiKey;
  $('remember').checked = sessionStorage.getItem(KEY_STORE) !== null;
  $('preset').addEventListener('change', (e) => {
    applyPreset(e.target.value);
    if (e.target.value === 'worker') resumeWorker();
  });
  $('model-id').addEventListener('input', () => {
    updateModelLabel();
    updatePriceHint();
  });
  $('api-key').addEventListener('input', (e) => {
    apiKey = e.target.value;
    if ($('remember').checked) sessionStorage.setItem(KEY_STORE, apiKey);
  });
  $('remember').addEventListener('change', (e) => {
    if (e.target.checked) sessionStorage.setItem(KEY_STORE, apiKey);
    else sessionStorage.removeItem(KEY_STORE);
  });
  $('settings-toggle').addEventListener('click', () => {
    const open = $('settings').hidden;
    $('settings').hidden = !open;
    $('settings-toggle').setAttribute('aria-expanded', String(open));
  });
}

// The catalogue is large (every provider's models): it is loaded when a preset needs it.
let catalogue;
const loadCatalogue = () => (catalogue ??= import('pi-agent-wasm/models'));

/** The catalogue's model for the settings, or undefined: a preset without a catalogue, or an
 * id the catalogue does not know. Rejects when the catalogue cannot be loaded. */
async function catalogued(s = settings()) {
  const provider = PRESETS[s.preset].catalogue;
  return provider === undefined ? undefined : (await loadCatalogue()).getModel(provider, s.modelId);
}

const NO_COST = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

/**
 * The Agent's model for the current settings, and how its cost shows: `pricing` is
 * 'catalogue' (the catalogue's prices: the cost in dollars), 'unknown' (an id the catalogue
 * does not know: no price, and the page says so) or 'none' (no price to show).
 */
async function currentModel() {
  const s = settings();
  // Without the catalogue (it did not load: the price hint says so), no price is known.
  const known = await catalogued(s).catch(() => undefined);
  // As the catalogue describes it (API, limits, reasoning, prices), at the settings' URL.
  if (known) return { model: { ...known, baseUrl: s.baseUrl }, pricing: 'catalogue' };
  return {
    model: {
      id: s.modelId, name: s.modelId, api: s.api, provider: s.preset, baseUrl: s.baseUrl, reasoning: s.thinking !== 'off',
      // Zero: a price nobody published is not shown (nor added up).
      input: ['text', 'image'], cost: { ...NO_COST }, contextWindow: 128000, maxTokens: 4096,
    },
    pricing: PRESETS[s.preset].catalogue === undefined ? 'none' : 'unknown',
  };
}

/** A price per million tokens: two decimals, or as many as it has. */
const perMillion = (n) => `$${Number(n.toFixed(2)) === n ? n.toFixed(2) : n}`;

/** Says, under the settings, what a million tokens of the chosen model cost, if known. */
let priceAsked = 0;
async function updatePriceHint() {
  const s = settings();
  const asked = ++priceAsked;
  let text = '';
  if (PRESETS[s.preset].catalogue !== undefined) {
    try {
      const known = await catalogued(s);
      text = known
        ? `Price from pi-agent-wasm/models: ${perMillion(known.cost.input)} in · ${perMillion(known.cost.output)} out per million tokens.`
        : `“${s.modelId}” is not in pi-agent-wasm/models: no price is shown for it.`;
    } catch {
      text = 'pi-agent-wasm/models did not load: no price is shown.';
    }
  }
  if (asked === priceAsked) $('price-hint').textContent = text; // the latest settings' answer only
}

// --- The agent ------------------------------------------------------------------------

/** The page's agent, or one restored from a snapshot (`restore`: a run handed back from the
 * Worker). Its events show in the page until it hands its run to the Worker. */
function makeAgent(restore, onInterruptedToolCall) {
  // Every run of the page's agent is recorded: the inspector is its timeline (replay, fork).
  recorder = new Recorder();
  const made = new Agent({
    record: recorder,
    onInterruptedToolCall,
    initialState: {
      systemPrompt: 'You are a helpful assistant in a demo of an agent loop. Use the tools for arithmetic, the time, long tasks, transfers and the page title.',
      tools: demoTools,
    },
    // The demo server and local servers ignore the key (one must still be sent); hosted
    // providers need the one from the settings.
    getApiKey: () => (PRESETS[settings().preset].key ? apiKey || undefined : apiKey || 'none'),
    restore,
  });
  made.subscribe((event) => {
    if (made !== agent) return; // handed to the Worker: what it does now is not shown
    // Its index in the cassette: the recorder has counted it already.
    inspect(event, recorder.eventTotal - 1);
    onEvent(event);
  });
  return made;
}
let agent;
/** The page agent's cassette (its `eventTotal` counts the events: each row's index). */
let recorder;

// --- Transcript rendering -------------------------------------------------------------

const transcript = $('transcript');
let bubble = null; // the assistant message being streamed: { root, thinking, text, cards, raw }
const cards = new Map(); // toolCallId -> { root, args, status, output, started }
const queued = new Map(); // a message queued on the page's agent -> { kind, entry } (its row in the queue)
let turnUsage = null;
let pricing = 'none'; // how the cost of the page's current run shows (see currentModel)
// Whatever changes in the conversation (a message, streamed text, a tool card, the usage
// line) keeps it at its end, unless the user has scrolled up.
new MutationObserver(stickToEnd(transcript)).observe(transcript, { childList: true, subtree: true, characterData: true });
const WHO = { steer: 'You (steering)', 'follow-up': 'You (follow-up)' };

/** A user message; `kind` is how it was queued ('steer' or 'follow-up'), if it was. */
function userBubble(message, kind) {
  const li = el('li', kind ? `msg user ${kind}` : 'msg user');
  const body = typeof message.content === 'string' ? message.content : message.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
  li.append(el('div', 'who', WHO[kind] ?? 'You'), el('div', 'body', body));
  transcript.append(li);
}

function assistantBubble() {
  const root = el('li', 'msg assistant');
  const thinking = el('details', 'thinking');
  thinking.hidden = true;
  thinking.append(el('summary', '', 'Thinking'), el('div', 'thinking-text'));
  const text = el('div', 'body markdown');
  const toolCards = el('div', 'cards');
  const footer = el('div', 'footer');
  root.append(el('div', 'who', 'Assistant'), thinking, text, toolCards, footer);
  transcript.append(root);
  return { root, thinking, text, cards: toolCards, footer, raw: '', rendered: 0 };
}

function renderText() {
  if (!bubble || bubble.rendered) return;
  bubble.rendered = requestAnimationFrame(() => {
    if (!bubble) return;
    bubble.rendered = 0;
    bubble.text.innerHTML = renderMarkdown(bubble.raw);
  });
}

function toolCard(block, container = bubble.cards) {
  const root = el('section', 'card running');
  root.setAttribute('aria-label', `Tool ${block.name}`);
  const head = el('div', 'card-head');
  const status = el('span', 'card-status', 'streaming arguments');
  head.append(el('strong', '', block.name || 'tool'), status);
  const args = el('pre', 'card-args');
  const progress = el('div', 'card-progress');
  const output = el('div', 'card-output');
  root.append(head, args, progress, output);
  container.append(root);
  return { root, args, status, progress, output, started: 0 };
}

function showArgs(card, args) {
  card.args.textContent = JSON.stringify(args ?? {}, null, 1);
}

const textOf = (result) => (result?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');

/** A call that waits: for the user's approval (an Approve/Reject card), or for the page that
 * runs a client tool. Answered on the page's agent, or (`remote`) through the session. */
function waitingCard(card, event, remote) {
  card.root.classList.add('waiting');
  if (event.kind === 'client') {
    card.status.textContent = 'running in this page';
    return;
  }
  card.status.textContent = 'waiting for your approval';
  card.answer?.remove();
  const box = el('div', 'card-answer');
  box.append(el('span', 'card-reason', event.reason ?? 'This call needs your approval.'));
  const answer = (verb) => {
    for (const b of box.querySelectorAll('button')) b.disabled = true;
    card.status.textContent = verb === 'approve' ? 'approved' : 'rejected';
    if (remote) post(`/tool-calls/${encodeURIComponent(event.toolCallId)}/${verb}`, verb === 'reject' ? { reason: 'The user said no' } : {});
    else if (verb === 'approve') agent.approve(event.toolCallId);
    else agent.reject(event.toolCallId, 'The user said no');
  };
  for (const [verb, label] of [['approve', 'Approve'], ['reject', 'Reject']]) {
    const b = el('button', `answer ${verb}`, label);
    b.type = 'button';
    b.addEventListener('click', () => answer(verb));
    box.append(b);
  }
  card.answer = box;
  card.root.append(box);
}

/** Shows one event of a run: of the page's agent, or (`remote`) of the Worker's session. */
function onEvent(event, remote = false) {
  switch (event.type) {
    case 'agent_start':
      turnUsage = null;
      if (remote) worker.prompted = false;
      break;
    case 'message_start':
      if (event.message.role === 'user') {
        // The page's agent delivers the very message object it was given; the Worker's
        // arrives as JSON, so it is known by its text.
        const delivered = remote ? deliveredToWorker(event.message) : queued.get(event.message);
        queued.delete(event.message);
        userBubble(event.message, delivered?.kind);
        delivered?.entry?.remove();
      } else if (event.message.role === 'assistant') {
        bubble = assistantBubble();
      }
      break;
    case 'message_update': {
      const e = event.assistantMessageEvent;
      if (!bubble) break;
      if (e.type === 'text_delta') {
        bubble.raw += e.delta;
        renderText();
      } else if (e.type === 'thinking_delta') {
        bubble.thinking.hidden = false;
        bubble.thinking.lastChild.textContent += e.delta;
      } else if (e.type === 'toolcall_start' || e.type === 'toolcall_delta' || e.type === 'toolcall_end') {
        // From a Worker backend, updates come without the partial message: the call shows
        // at its end.
        const block = event.message?.content?.[e.contentIndex] ?? e.toolCall;
        if (!block) break;
        let card = cards.get(`block:${e.contentIndex}`);
        if (!card) {
          card = toolCard(block);
          cards.set(`block:${e.contentIndex}`, card);
        }
        showArgs(card, block.arguments);
        if (e.type === 'toolcall_end') {
          cards.delete(`block:${e.contentIndex}`);
          cards.set(block.id, card);
          card.status.textContent = 'waiting';
        }
      }
      break;
    }
    case 'message_end': {
      const m = event.message;
      if (m.role !== 'assistant' || !bubble) break;
      bubble.raw = m.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
      bubble.text.innerHTML = renderMarkdown(bubble.raw);
      if (m.stopReason === 'error' || m.stopReason === 'aborted') {
        const err = el('div', `error ${m.stopReason}`, m.stopReason === 'aborted' ? `Aborted${m.errorMessage ? `: ${m.errorMessage}` : ''}` : `Error: ${m.errorMessage ?? 'unknown error'}`);
        err.setAttribute('role', 'alert');
        bubble.root.append(err);
      }
      turnUsage = { usage: m.usage, footer: bubble.footer, pricing: remote ? 'none' : pricing };
      break;
    }
    case 'tool_execution_waiting': {
      let card = cards.get(event.toolCallId);
      // A session replayed after a reload may not have the call's streamed updates any more:
      // its card is made here, in the last answer.
      const last = [...document.querySelectorAll('.msg.assistant .cards')].at(-1);
      if (!card && last) {
        card = toolCard({ name: event.toolName }, last);
        showArgs(card, event.args);
        cards.set(event.toolCallId, card);
      }
      if (card) waitingCard(card, event, remote);
      // The page is the client of its own agent: it answers the call at once.
      if (!remote && event.kind === 'client' && event.toolName === pageTitleInPage.name) {
        pageTitleInPage.execute().then((result) => agent.resolveToolCall(event.toolCallId, result)).catch(() => {});
      }
      break;
    }
    case 'tool_execution_start': {
      const card = cards.get(event.toolCallId);
      if (card) {
        card.started = performance.now();
        card.status.textContent = 'running';
      }
      break;
    }
    case 'tool_execution_update': {
      const card = cards.get(event.toolCallId);
      if (card) card.progress.textContent = textOf(event.partialResult);
      break;
    }
    case 'tool_execution_end': {
      const card = cards.get(event.toolCallId);
      if (!card) break;
      card.answer?.remove();
      // A replayed session's events arrive at once: the duration the loop measured is shown.
      const ms = event.durationMs ?? Math.round(performance.now() - card.started);
      card.root.classList.remove('running');
      card.root.classList.add(event.isError ? 'failed' : 'done');
      card.status.textContent = `${event.isError ? 'error' : 'done'} · ${ms} ms`;
      card.output.textContent = textOf(event.result);
      break;
    }
    case 'turn_end':
      if (turnUsage) {
        const u = turnUsage.usage;
        const cost = { catalogue: ` · $${u.cost.total.toFixed(6)}`, unknown: ' · price unknown', none: '' }[turnUsage.pricing];
        turnUsage.footer.textContent = `tokens in ${u.input} · out ${u.output}${u.cacheRead ? ` · cache ${u.cacheRead}` : ''}${cost}`;
        turnUsage = null;
      }
      bubble = null;
      break;
    case 'agent_end':
      bubble = null;
      break;
    default:
      break;
  }
}

// --- Event inspector ------------------------------------------------------------------

const events = $('events');
const followEvents = stickToEnd(events); // not on every change: an event opened by a click stays put
let t0 = 0;
const counts = new Map();
const MAX_EVENTS = 3000;

/** `at`: the event's index in the page agent's cassette (a row that can fork there). */
function inspect(event, at) {
  const now = performance.now();
  if (!t0) t0 = now;
  counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
  const li = el('li', `event ${event.type}`);
  li.dataset.type = event.type;
  const detail = event.assistantMessageEvent?.type ?? event.message?.role ?? event.toolName ?? '';
  const row = el('button', 'event-row');
  row.type = 'button';
  row.setAttribute('aria-expanded', 'false');
  row.append(el('span', 'time', `+${Math.round(now - t0)} ms`), el('span', 'type', event.type), el('span', 'detail', detail));
  // Expanded lazily: the JSON of an event is built only when asked for.
  row.addEventListener('click', () => {
    const open = row.getAttribute('aria-expanded') === 'true';
    row.setAttribute('aria-expanded', String(!open));
    if (open) {
      li.querySelector('pre')?.remove();
      li.querySelector('.fork')?.remove();
    } else {
      li.append(el('pre', 'event-json', JSON.stringify(event, (k, v) => (k === 'partial' ? '[partial]' : v), 1).slice(0, 20000)));
      if (at !== undefined && !worker.on) li.append(forkForm(at));
    }
  });
  li.append(row);
  applyFilter(li);
  events.append(li);
  while (events.childElementCount > MAX_EVENTS) events.firstElementChild.remove();
  followEvents();
  $('event-summary').textContent = [...counts].map(([k, v]) => `${k} ${v}`).join(' · ');
}

/** "Fork here": the conversation goes on from event `at` of the recorded runs, with a
 * steering message added if one is typed; nothing before it runs again. */
function forkForm(at) {
  const form = el('form', 'fork');
  const input = el('input');
  input.placeholder = 'steering message (optional)';
  input.setAttribute('aria-label', `Steering message for a fork at event ${at}`);
  const button = el('button', '', 'Fork here');
  button.type = 'submit';
  form.append(input, button);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    forkAt(at, input.value.trim());
  });
  return form;
}

/** Empties the conversation and the inspector (a replay or a fork shows its own). */
function clearView() {
  transcript.replaceChildren();
  events.replaceChildren();
  counts.clear();
  cards.clear();
  bubble = null;
  t0 = 0;
}

/** Shows messages that are already there (the transcript up to a fork), as their events would. */
function showMessages(messages) {
  for (const message of messages) {
    if (message.role === 'user') userBubble(message);
    else if (message.role === 'assistant') {
      onEvent({ type: 'message_start', message });
      message.content.forEach((block, contentIndex) => {
        if (block.type === 'toolCall') onEvent({ type: 'message_update', assistantMessageEvent: { type: 'toolcall_end', contentIndex, toolCall: block }, message });
      });
      onEvent({ type: 'message_end', message });
      onEvent({ type: 'turn_end' });
    } else if (message.role === 'toolResult') {
      onEvent({ type: 'tool_execution_end', toolCallId: message.toolCallId, result: message, isError: message.isError, durationMs: message.durationMs ?? 0 });
    }
  }
}

/** Plays the page's recorded runs again, offline, into a fresh view. */
async function replayRuns() {
  if (busyNow() || worker.on || recorder === undefined || recorder.eventTotal === 0) return;
  const cassette = recorder.toString();
  clearView();
  $('status').textContent = 'Replaying the recorded runs offline…';
  // The agent's tools as declared; their results come from the cassette.
  const offline = demoTools.map((t) => (typeof t.execute === 'function' ? { ...t, execute: () => { throw new Error('a replay runs no tool'); } } : t));
  let at = 0;
  try {
    await replay(cassette, { initialState: { tools: offline }, onEvent: (event) => { inspect(event, at++); onEvent(event); } });
    $('status').textContent = `Replayed offline: ${at} events, no request made and no tool run.`;
  } catch (error) {
    $('status').textContent = `Replay failed: ${error?.message ?? error}`;
  }
}

/** Forks the recorded runs at event `at` (with `text` as a steering message, if any): the
 * page's agent becomes one restored there, and the conversation goes on live. */
async function forkAt(at, text) {
  if (busyNow() || worker.on || recorder === undefined) return;
  const cassette = recorder.toString();
  const change = text ? { steer: { role: 'user', content: text, timestamp: Date.now() } } : undefined;
  let snapshot;
  try {
    const { model } = await currentModel();
    snapshot = forkSnapshot(cassette, at, change, { initialState: { model } });
  } catch (error) {
    $('status').textContent = `Fork failed: ${error?.message ?? error}`;
    return;
  }
  clearView();
  showMessages(checkpointAt(cassette, at).messages);
  // A tool that was running at the fork point runs again: its result came after it.
  agent = makeAgent(snapshot, () => 'rerun');
  $('status').textContent = `Forked at event ${at}.`;
  if (snapshot.position === undefined && snapshot.steering.length === 0) return;
  starting = true;
  setBusy(true);
  try {
    if (snapshot.position !== undefined) await agent.resume();
    else await agent.continue();
  } catch (error) {
    $('status').textContent = `Run failed: ${error?.message ?? error}`;
  } finally {
    starting = false;
    setBusy(busyNow());
  }
}

function applyFilter(li) {
  const text = $('event-filter').value.trim().toLowerCase();
  const hideUpdates = $('hide-updates').checked;
  li.hidden = (hideUpdates && li.dataset.type === 'message_update') || (text !== '' && !li.textContent.toLowerCase().includes(text));
}

function initInspector() {
  const refilter = () => {
    for (const li of events.children) applyFilter(li);
    followEvents();
  };
  $('event-filter').addEventListener('input', refilter);
  $('hide-updates').addEventListener('change', refilter);
  $('replay').addEventListener('click', replayRuns);
}

// --- Composer, steering, follow-ups, abort ---------------------------------------------

function setBusy(busy) {
  document.body.classList.toggle('busy', busy);
  $('send').textContent = busy ? 'Steer' : 'Send';
  $('send').title = busy ? 'Deliver this message before the next model request' : '';
  $('follow-up').disabled = !busy;
  $('abort').disabled = !busy;
  $('handoff').textContent = worker.on ? 'Bring back to the page' : 'Continue in the Worker';
  if (busy || !$('status').textContent.startsWith('Run failed')) {
    $('status').textContent = busy ? 'Working… type to steer, or queue a follow-up.' : 'Ready.';
  }
}

/** Queues `text` as a steering message (`kind` 'steer') or a follow-up ('follow-up'). */
function enqueue(kind, text) {
  const message = { role: 'user', content: text, timestamp: Date.now() };
  const entry = el('li', `queued ${kind}`);
  entry.append(el('span', 'badge', kind === 'steer' ? 'steering · queued' : 'follow-up · queued'), el('span', '', text));
  $('queue').append(entry);
  if (worker.on) {
    worker.sent.push({ text, kind, entry });
    sessionStorage.setItem(SENT_STORE, JSON.stringify(worker.sent.map((s) => ({ text: s.text, kind: s.kind }))));
    post(kind === 'steer' ? '/steer' : '/follow-up', { text });
    return;
  }
  queued.set(message, { kind, entry });
  if (kind === 'steer') agent.steer(message);
  else agent.followUp(message);
}

// --- Worker backend: the agent runs in a Durable Object (examples/worker) ---------------

const SESSION_STORE = 'pi-agent-wasm-demo-session';
// The messages this tab queued on its session, in order, as { text, kind }: kept for the tab,
// so a reload, which replays the session's events, labels them again.
const SENT_STORE = 'pi-agent-wasm-demo-sent';
const worker = {
  on: false, running: false, source: undefined, id: undefined,
  sent: JSON.parse(sessionStorage.getItem(SENT_STORE) ?? '[]'), // + `entry` (the queue's row) and `delivered` on this page
  prompted: false, // whether the current run's first user message (its prompt) has come
};

/** What the Worker's user message was queued as ({ kind, entry }), or undefined for a prompt.
 * The first user message of a run is its prompt; a later one is the first message this tab
 * queued with its text that has not come yet. */
function deliveredToWorker(message) {
  if (!worker.prompted) {
    worker.prompted = true;
    return undefined;
  }
  const said = typeof message.content === 'string' ? message.content : textOf(message);
  const sent = worker.sent.find((s) => !s.delivered && s.text === said);
  if (sent) sent.delivered = true;
  return sent;
}

/** This tab's session id, made (and kept for reloads) on first use of the Worker backend. */
function sessionId() {
  worker.id ??= sessionStorage.getItem(SESSION_STORE) ?? undefined;
  if (worker.id === undefined) {
    worker.id = `demo-${crypto.randomUUID().replaceAll('-', '')}`;
    sessionStorage.setItem(SESSION_STORE, worker.id);
  }
  return worker.id;
}
const EVENT_TYPES = ['agent_start', 'agent_end', 'turn_start', 'turn_end', 'message_start', 'message_update', 'message_end',
  'tool_execution_start', 'tool_execution_update', 'tool_execution_end', 'tool_execution_waiting'];
const sessionUrl = (path = '') => `${settings().baseUrl}/sessions/${sessionId()}${path}`;
let starting = false; // send() is under way: its model being looked up, then the run
const busyNow = () => (worker.on ? worker.running : starting || agent.state.isStreaming);

async function post(path, body) {
  const res = await fetch(sessionUrl(path), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) $('status').textContent = `Worker: ${res.status} ${(await res.json().catch(() => ({}))).error ?? ''}`;
  return res;
}

/** Follows the session's events. EventSource reconnects by itself with Last-Event-ID, and a
 * new page replays from the start: each event shows once. */
function followWorker(after) {
  if (worker.source) return;
  worker.source = new EventSource(sessionUrl(after === undefined ? '/events' : `/events?after=${encodeURIComponent(after)}`));
  const on = (e) => {
    const event = JSON.parse(e.data);
    if (event.type === 'agent_start') {
      worker.running = true;
      setBusy(true);
    }
    inspect(event);
    onEvent(event, true);
    if (event.type === 'agent_end') {
      worker.running = false;
      setBusy(false);
    }
  };
  for (const type of EVENT_TYPES) worker.source.addEventListener(type, on);
  // The session's client tools (the page title) run here, in the page the user has open.
  worker.client = connectSession(sessionUrl(), { tools: [pageTitleInPage] });
}

/** Switched to the Worker backend: a session this tab started before is shown again. */
async function resumeWorker() {
  worker.on = true;
  if (sessionStorage.getItem(SESSION_STORE) === null) return; // none yet
  try {
    const res = await fetch(sessionUrl());
    if (res.ok) followWorker();
  } catch (error) {
    $('status').textContent = `Worker backend unreachable: ${error.message}`;
  }
}

async function sendToWorker(text) {
  setBusy(true);
  try {
    const res = await post('/prompt', { text });
    if (res.ok) followWorker();
    else setBusy(false);
  } catch (error) {
    $('status').textContent = `Worker backend unreachable: ${error.message}`;
    setBusy(false);
  }
}

async function send(text) {
  if (worker.on) return sendToWorker(text);
  if (PRESETS[settings().preset].key && !apiKey) {
    $('status').textContent = 'This provider needs an API key: open Settings.';
    return;
  }
  starting = true;
  setBusy(true);
  try {
    const chosen = await currentModel();
    pricing = chosen.pricing;
    agent.state.model = chosen.model;
    agent.state.thinkingLevel = settings().thinking;
    agent.toolExecution = settings().toolExecution;
    // Never rejects for model or tool failures: those end as an error message in the
    // transcript. Messages still queued stay queued for the next prompt.
    await agent.prompt(text);
  } catch (error) {
    $('status').textContent = `Run failed: ${error?.message ?? error}`;
  } finally {
    starting = false;
    // (A run handed to the Worker meanwhile is the Worker's to end.)
    setBusy(busyNow());
    $('input').focus();
  }
}

function initComposer() {
  const input = $('input');
  $('composer').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    input.value = '';
    if (busyNow()) enqueue('steer', text);
    else send(text);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      $('composer').requestSubmit();
    } else if (e.key === 'Escape' && busyNow()) {
      abortRun();
    }
  });
  $('follow-up').addEventListener('click', () => {
    const text = input.value.trim();
    if (!text || !busyNow()) return;
    input.value = '';
    enqueue('follow-up', text);
  });
  $('abort').addEventListener('click', abortRun);
}

function abortRun() {
  if (worker.on) post('/abort', {});
  else agent.abort();
}

// --- One run handed between the page and the Worker -----------------------------------

/** A run changed sides: the answer buttons shown belong to the side that let go of it. The
 * side that has it now asks again, and its buttons come with that. */
function retireAnswers(where) {
  for (const card of cards.values()) {
    if (!card.answer) continue;
    card.answer.remove();
    card.answer = undefined;
    card.status.textContent = `handed to ${where}`;
  }
}

/** "Continue in the Worker": the page's agent (mid-run or not) becomes a new session of the
 * Worker, whose run goes on there; the page lets go of its own. */
async function toWorker() {
  const snapshot = agent.snapshot();
  const id = `demo-${crypto.randomUUID().replaceAll('-', '')}`;
  const res = await fetch(`${PRESETS.worker.baseUrl}/sessions/${id}/import`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(snapshot),
  }).catch((error) => ({ ok: false, status: 0, json: async () => ({ error: error.message }) }));
  if (!res.ok) {
    $('status').textContent = `Worker: ${res.status} ${(await res.json().catch(() => ({}))).error ?? ''}`;
    return;
  }
  const { lastEventId } = await res.json();
  retireAnswers('the Worker');
  const old = agent;
  agent = makeAgent(); // the page's own agent, fresh; the old one is aborted, unheard
  old.abort();
  worker.id = id;
  sessionStorage.setItem(SESSION_STORE, id);
  sessionStorage.setItem(SENT_STORE, '[]');
  worker.sent = [];
  $('preset').value = 'worker';
  applyPreset('worker');
  worker.running = snapshot.position !== undefined;
  worker.prompted = true;
  setBusy(worker.running);
  followWorker(lastEventId);
}

/** "Bring back to the page": the Worker's session hands its run back (export); the page
 * restores it with its own model and goes on. */
async function toPage() {
  const res = await post('/export', {});
  if (!res.ok) return;
  const snapshot = await res.json();
  retireAnswers('this page');
  worker.source?.close();
  worker.source = undefined;
  worker.client?.close();
  worker.running = false;
  $('preset').value = 'demo';
  applyPreset('demo');
  const { model } = await currentModel();
  // The page's own model: the run's requests go where the page reaches.
  snapshot.model = model;
  if (snapshot.position) snapshot.position.model = model;
  agent = makeAgent(snapshot);
  if (snapshot.position === undefined) return;
  starting = true;
  setBusy(true);
  try {
    await agent.resume();
  } catch (error) {
    $('status').textContent = `Run failed: ${error?.message ?? error}`;
  } finally {
    starting = false;
    setBusy(false);
  }
}

function initHandoff() {
  $('handoff').addEventListener('click', () => (worker.on ? toPage() : toWorker()));
}

agent = makeAgent();

initSettings();
initInspector();
initComposer();
initHandoff();
setBusy(false);
window.demo = { get agent() { return agent; }, get recorder() { return recorder; }, worker }; // for the console (and the browser tests)
