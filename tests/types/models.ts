// Typed usage of `pi-agent-wasm/models`: `tsc --noEmit` must accept it (run by
// tests/js/models.test.mjs). Each @ts-expect-error line must be a compile error.
import type { Model } from 'pi-agent-wasm';
import {
  getModel,
  getModels,
  getProviders,
  OPENAI_MODELS,
  MINIMAX_CN_MODELS,
  type BuiltinProvider,
  type BuiltinModelId,
} from 'pi-agent-wasm/models';

const mini = getModel('openai', 'gpt-4o-mini');
const api: 'openai-responses' = mini.api;
const model: Model = mini;
const local: Model = { ...getModel('groq', 'llama-3.3-70b-versatile'), baseUrl: 'http://127.0.0.1:8080/v1' };

// A provider with models of several APIs: each id keeps its own api.
const claude: Model<'anthropic-messages'> = getModel('opencode', 'claude-fable-5');
const gemini: Model<'google-generative-ai'> = getModel('opencode', 'gemini-3.5-flash');
const id: BuiltinModelId<'opencode'> = 'gpt-5';

const all: Model<'anthropic-messages'>[] = getModels('anthropic');
const providers: BuiltinProvider[] = getProviders();
const direct: Model<'openai-responses'> = OPENAI_MODELS['gpt-4o-mini'];
const dashed: Model[] = Object.values(MINIMAX_CN_MODELS);

// @ts-expect-error an id the provider does not have
getModel('openai', 'claude-haiku-4-5');
// @ts-expect-error a provider whose models use none of the four APIs
getModel('amazon-bedrock', 'anthropic.claude-3-haiku-20240307-v1:0');
// @ts-expect-error the api of a Responses model is not Chat Completions
const wrong: 'openai-completions' = getModel('openai', 'gpt-4o').api;
// @ts-expect-error not an openai model
OPENAI_MODELS['gemini-2.5-flash'];
// @ts-expect-error an unknown provider
getModels('no-such-provider');

export { api, model, local, claude, gemini, id, all, providers, direct, dashed, wrong };
