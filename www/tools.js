// The demo's tools, written the way a user of the package writes them: plain objects with a
// JSON schema and an async `execute(toolCallId, args, signal, onUpdate)`.

/** Evaluates + - * / and parentheses over numbers (no `eval`). */
function evaluate(expression) {
  const tokens = expression.match(/\d+(?:\.\d+)?|[-+*/()]/g) ?? [];
  if (tokens.join('') !== expression.replace(/\s+/g, '')) throw new Error(`Cannot read "${expression}"`);
  let i = 0;
  const peek = () => tokens[i];
  const next = () => tokens[i++];
  const factor = () => {
    const t = next();
    if (t === '-') return -factor();
    if (t === '(') {
      const v = sum();
      if (next() !== ')') throw new Error('Missing )');
      return v;
    }
    const n = Number(t);
    if (!Number.isFinite(n)) throw new Error(`Unexpected "${t ?? 'end'}"`);
    return n;
  };
  const product = () => {
    let v = factor();
    while (peek() === '*' || peek() === '/') v = next() === '*' ? v * factor() : v / factor();
    return v;
  };
  const sum = () => {
    let v = product();
    while (peek() === '+' || peek() === '-') v = next() === '+' ? v + product() : v - product();
    return v;
  };
  const value = sum();
  if (i !== tokens.length) throw new Error(`Unexpected "${peek()}"`);
  return value;
}

export const calculator = {
  name: 'calculator',
  label: 'Calculator',
  description: 'Evaluates an arithmetic expression with + - * / and parentheses.',
  parameters: {
    type: 'object',
    properties: { expression: { type: 'string', description: 'For example 17*23' } },
    required: ['expression'],
  },
  async execute(_id, { expression }) {
    const value = evaluate(expression);
    return { content: [{ type: 'text', text: String(Number(value.toFixed(10))) }], details: { expression, value } };
  },
};

export const clock = {
  name: 'clock',
  label: 'Clock',
  description: "Returns the current local date and time of the user's browser.",
  parameters: { type: 'object', properties: {} },
  async execute() {
    const now = new Date();
    return {
      content: [{ type: 'text', text: now.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' }) }],
      details: { iso: now.toISOString() },
    };
  },
};

export const longTask = {
  name: 'long_task',
  label: 'Long task',
  description: 'A slow job that reports its progress; stops when aborted.',
  parameters: {
    type: 'object',
    properties: { steps: { type: 'integer', minimum: 1, maximum: 20 }, label: { type: 'string' } },
  },
  async execute(_id, { steps = 5, label = 'Working' }, signal, onUpdate) {
    for (let step = 1; step <= steps; step++) {
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, 600);
        signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error(`${label}: aborted at step ${step} of ${steps}`));
        }, { once: true });
      });
      onUpdate?.({ content: [{ type: 'text', text: `${label}: step ${step} of ${steps}` }], details: { progress: step / steps } });
    }
    return { content: [{ type: 'text', text: `${label}: done in ${steps} steps` }], details: { steps } };
  },
};

/** Waits for a person: a transfer over 10 EUR runs only once someone approves it (an
 * Approve/Reject card in the demo page), and the wait survives a reload in a session. */
export const transfer = {
  name: 'transfer',
  label: 'Transfer',
  description: 'Sends money to an account. Transfers over 10 EUR wait for the user\'s approval.',
  parameters: {
    type: 'object',
    properties: { to: { type: 'string' }, eur: { type: 'number', minimum: 0 } },
    required: ['to', 'eur'],
  },
  needsApproval: ({ eur }) => (eur > 10 ? `${eur} EUR is over the 10 EUR limit` : false),
  async execute(_id, { to, eur }) {
    return { content: [{ type: 'text', text: `Sent ${eur} EUR to account ${to}.` }], details: { to, eur } };
  },
};

/** A client tool: declared by its schema alone, and run by the page the user has open (its
 * title), wherever the loop runs. */
export const pageTitle = {
  name: 'page_title',
  label: 'Page title',
  description: 'Reads the title of the page the user has open.',
  parameters: { type: 'object', properties: {} },
  client: true,
};

/** What the page runs for `pageTitle`. */
export const pageTitleInPage = {
  name: 'page_title',
  execute: async () => ({ content: [{ type: 'text', text: document.title }], details: { url: location.pathname } }),
};

export const demoTools = [calculator, clock, longTask, transfer, pageTitle];
