// API keys from the environment, for the built-in stream function when the caller gave
// none: the one home of the provider → variable table. It follows pi-ai 1.6.0's
// `getEnvApiKey` (compat `streamSimple` falls back to it): a value comes from the call's
// `env` option first, then from `process.env` where there is one (Node; workerd only with
// nodejs_compat's populated process.env); browsers and plain Workers have neither, so the
// key must come from `apiKey`, `getApiKey` or `env`. The wasm core never reads the
// environment; it calls `envApiKey` through the glue, and only when no key was given.

/** Provider → the variables tried in order; the first one set wins. */
const VARIABLES = {
  anthropic: ['ANTHROPIC_API_KEY'],
  openai: ['OPENAI_API_KEY'],
  azure: ['AZURE_OPENAI_API_KEY'],
  google: ['GEMINI_API_KEY'],
  'google-vertex': ['GOOGLE_CLOUD_API_KEY'],
  'github-copilot': ['COPILOT_GITHUB_TOKEN'],
  'ant-ling': ['ANT_LING_API_KEY'],
  // Qwen Token Plan: the plan's own variable, then the region variable both plans shared.
  'qwen-token-plan': ['QWEN_TOKEN_PLAN_TEAM_API_KEY', 'QWEN_TOKEN_PLAN_API_KEY'],
  'qwen-token-plan-cn': ['QWEN_TOKEN_PLAN_TEAM_CN_API_KEY', 'QWEN_TOKEN_PLAN_CN_API_KEY'],
  'qwen-token-plan-individual': ['QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY', 'QWEN_TOKEN_PLAN_API_KEY'],
  'qwen-token-plan-individual-cn': ['QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY', 'QWEN_TOKEN_PLAN_CN_API_KEY'],
  nvidia: ['NVIDIA_API_KEY'],
  deepseek: ['DEEPSEEK_API_KEY'],
  groq: ['GROQ_API_KEY'],
  cerebras: ['CEREBRAS_API_KEY'],
  xai: ['XAI_API_KEY'],
  typesafe: ['TYPESAFE_API_KEY'],
  radius: ['RADIUS_API_KEY'],
  openrouter: ['OPENROUTER_API_KEY'],
  'vercel-ai-gateway': ['AI_GATEWAY_API_KEY'],
  zai: ['ZAI_API_KEY'],
  'zai-coding-cn': ['ZAI_CODING_CN_API_KEY'],
  mistral: ['MISTRAL_API_KEY'],
  minimax: ['MINIMAX_API_KEY'],
  'minimax-cn': ['MINIMAX_CN_API_KEY'],
  moonshotai: ['MOONSHOT_API_KEY'],
  'moonshotai-cn': ['MOONSHOT_API_KEY'],
  huggingface: ['HF_TOKEN'],
  fireworks: ['FIREWORKS_API_KEY'],
  together: ['TOGETHER_API_KEY'],
  baseten: ['BASETEN_API_KEY'],
  opencode: ['OPENCODE_API_KEY'],
  'opencode-go': ['OPENCODE_API_KEY'],
  'kimi-coding': ['KIMI_API_KEY'],
  meta: ['META_API_KEY'],
  xiaomi: ['XIAOMI_API_KEY'],
  'xiaomi-token-plan-cn': ['XIAOMI_TOKEN_PLAN_CN_API_KEY'],
  'xiaomi-token-plan-ams': ['XIAOMI_TOKEN_PLAN_AMS_API_KEY'],
  'xiaomi-token-plan-sgp': ['XIAOMI_TOKEN_PLAN_SGP_API_KEY'],
};

/**
 * Variables pi-ai reads that the built-in stream deliberately does not, with why: the text
 * is added to the "No API key" error when one of them is set and no key was found.
 * - ANTHROPIC_OAUTH_TOKEN: pi-ai prefers it to ANTHROPIC_API_KEY and sends it as a Claude
 *   Code OAuth bearer; the built-in stream has no OAuth, so the token is never sent.
 * - CLOUDFLARE_API_KEY: pi-ai pairs it with CLOUDFLARE_ACCOUNT_ID (and the gateway id) to
 *   fill the models' `{CLOUDFLARE_ACCOUNT_ID}` URL placeholders and, for AI Gateway, sends it
 *   in `cf-aig-authorization`; the built-in stream does neither, and would put the key in a
 *   header the gateway forwards upstream.
 * (ANTHROPIC_AUTH_TOKEN is skipped silently, as pi-ai's lookup skips it.)
 */
const UNSUPPORTED = {
  anthropic: [['ANTHROPIC_OAUTH_TOKEN', 'Anthropic OAuth tokens are not supported: set ANTHROPIC_API_KEY or pass apiKey']],
  'cloudflare-workers-ai': [['CLOUDFLARE_API_KEY', 'Cloudflare providers need the account id in baseUrl: pass apiKey and a model with a resolved baseUrl']],
  'cloudflare-ai-gateway': [['CLOUDFLARE_API_KEY', 'Cloudflare providers need the account id in baseUrl: pass apiKey and a model with a resolved baseUrl']],
};

/** A variable's value: the call's `env` first, then `process.env`; only non-empty strings
 * count (a Worker's `env` may hold bindings, which are not keys). */
function envValue(name, env) {
  for (const source of [env, globalThis.process?.env]) {
    const value = source?.[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

/**
 * The key for `provider` from the environment: `{ apiKey }` when a variable is set, else
 * `{ note }` when a variable the built-in stream does not use is set (never its value),
 * else `{}`.
 */
export function envApiKey(provider, env) {
  const table = typeof provider === 'string' && Object.hasOwn(VARIABLES, provider) ? VARIABLES[provider] : [];
  for (const name of table) {
    const apiKey = envValue(name, env);
    if (apiKey !== undefined) return { apiKey };
  }
  const skipped = typeof provider === 'string' && Object.hasOwn(UNSUPPORTED, provider) ? UNSUPPORTED[provider] : [];
  for (const [name, why] of skipped) {
    if (envValue(name, env) !== undefined) return { note: `${name} is set, but ${why}` };
  }
  return {};
}
