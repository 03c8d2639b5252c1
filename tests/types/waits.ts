// Issue 33's API, as an app written under `tsc --strict` uses it: tools that wait, their
// answers and expiry, a session Worker with `authorize` and `pageModel`, and a page attached
// with `connectSession`. Compiled by the test command (tests/types/tsconfig.json).
import { Agent, ToolCallGate, type AgentEvent, type AgentTool, type Model, type ToolExecutionWaitingEvent, type WaitingAgentTool, type WaitingToolCall } from 'pi-agent-wasm';
import { AgentSession, connectSession, routeSessions, type SessionAction, type SessionConnection } from 'pi-agent-wasm/cloudflare';

declare const model: Model<any>;

const transfer: WaitingAgentTool = {
  name: 'transfer', label: 'Transfer', description: 'Sends money',
  parameters: { type: 'object', properties: { eur: { type: 'number' } } },
  needsApproval: (args: { eur: number }) => (args.eur > 10 ? 'over 10 EUR' : false),
  expiresAfterMs: 24 * 3600 * 1000,
  execute: async () => ({ content: [{ type: 'text', text: 'sent' }], details: {} }),
};
const title: WaitingAgentTool = { name: 'title', label: 'Title', description: 'The page title', parameters: { type: 'object' }, client: true };

const agent = new Agent({ initialState: { model, tools: [transfer as AgentTool, title as AgentTool] }, expiresAfterMs: 60_000 });
agent.subscribe((event: AgentEvent) => {
  const e = event as AgentEvent | ToolExecutionWaitingEvent;
  if (e.type !== 'tool_execution_waiting') return;
  const when: number | undefined = e.expiresAt;
  void when;
  if (e.kind === 'client') agent.resolveToolCall(e.toolCallId, { content: [{ type: 'text', text: 'Checkout' }] });
  else agent.reject(e.toolCallId, 'not today');
});
const listed: WaitingToolCall[] = agent.waitingToolCalls;
void listed.map((c) => c.expiresAt ?? Infinity);
const gate = new ToolCallGate();
void gate.waiting;
// @ts-expect-error expiresAfterMs is a number of milliseconds
void new Agent({ initialState: { model }, expiresAfterMs: '1h' });

export class Session extends AgentSession {
  agentOptions() {
    return { initialState: { model, tools: [transfer as AgentTool] } };
  }
  pageModel(m: Model<any>): Model<any> {
    const { baseUrl: _hidden, ...rest } = m;
    return { ...rest, baseUrl: '/proxy' };
  }
}

export async function handle(request: Request, env: { SESSIONS: any }): Promise<Response> {
  const authorize = (req: Request, _env: unknown, { sessionId, action }: { sessionId: string; action: SessionAction }) =>
    action === 'export' ? false : sessionId.split('_')[0] === req.headers.get('x-user');
  return (await routeSessions(request, env.SESSIONS, { authorize, env })) ?? new Response('not found', { status: 404 });
}

const connection: SessionConnection = connectSession('https://example.com/sessions/u_1', {
  tools: [{ name: 'title', execute: async () => ({ content: [{ type: 'text', text: 'Checkout' }] }) }],
  token: 't',
  onEvent: (e) => void e.type,
  onError: (error) => void error,
  retryMs: 500,
});
void connection.ready.then(() => connection.close());
// @ts-expect-error a client tool's result is content blocks
connectSession('https://example.com/sessions/u_1', { tools: [{ name: 'title', execute: async () => 'Checkout' }] });
