import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { HealthResponse, RootResponse, type ModelInfo, type Tenancy } from '@mada/protocol';
import { z } from 'zod';
import { cachedProbe, type Probe } from '../../health/probes.js';

export interface HealthOptions {
  version: string;
  /** The database must answer; without it the service is unhealthy (503). */
  database: Probe;
  /** Optional dependencies: their failure only degrades the service. */
  dependencies: Record<string, Probe>;
  /** Facts that do not make the service degraded (whether bash runs confined, say). */
  facts?: () => Promise<Record<string, string>>;
  /** The default model as the runtime last described it (no request to the runtime here). */
  model?: () => ModelInfo;
  /** Configured models the runtime said it does not have when it last described them, and its reason. */
  missingModels?: () => { name: string; reason: string }[];
  /** Configured models the runtime's listing (the `model` check's request) lacks; undefined: it gave no listing. */
  unlistedModels?: () => Promise<string[] | undefined>;
  /** Whether users share ALLOWED_PATHS (`shared`) or each has a workspace of their own. */
  tenancy?: () => Promise<Tenancy>;
}

export const healthRoutes: FastifyPluginAsyncZod<HealthOptions> = async (app, options) => {
  // Every check answers at most once per PROBE_CACHE_MS, however many ask (probes.ts).
  const database = cachedProbe(options.database);
  const dependencies = Object.entries(options.dependencies).map(([name, probe]) => [name, cachedProbe(probe)] as const);
  const facts = options.facts === undefined ? undefined : cachedProbe(options.facts);
  const tenancy = options.tenancy === undefined ? undefined : cachedProbe(options.tenancy);
  app.get(
    '/',
    {
      schema: {
        tags: ['health'],
        summary: 'Service name and version',
        description: 'A browser (an `Accept` that prefers `text/html`) is sent to the console at `/app/` instead (302).',
        response: { 200: RootResponse, 302: z.undefined().describe('To the console') },
      },
    },
    async (request, reply) => {
      if (negotiate(request.headers.accept ?? '', ['application/json', 'text/html']) === 'text/html') return reply.redirect('/app/', 302);
      return { name: 'mada-api', version: options.version, status: 'ok' as const, docs: '/docs' };
    },
  );

  app.get(
    '/health',
    {
      schema: {
        tags: ['health'],
        summary: 'Dependency checks',
        description:
          '`healthy` when every check is ok, `degraded` when an optional dependency (model runtime, search engine) is unreachable or the runtime does not list the configured model (`model`: `missing`; `unknown` when the runtime did not list its models), 503 `unhealthy` when the database does not answer. `sandbox` says whether bash runs confined by bubblewrap (`bubblewrap`) or under the command policy alone (`disabled`), or refuses to run (`unavailable`); `bash_network` is `host` when bash shares the host network, loopback services included (SANDBOX_NETWORK=true without a working slirp4netns), `own` when slirp4netns gives it a network of its own (the internet, not the host loopback), `none` when it has no network. `ripgrep` and `git` are `ok` or `missing` on the PATH the tools search (without ripgrep, search falls back to a slower JavaScript one; without git there are no checkpoints). `model` (beside `checks`) is the default model as the runtime last described it (asked at start-up and every 5 minutes): its context window and whether tools go in the `tools` field (`native`) or in the prompt (`text`). `missing_models` names each configured model (LLM_MODELS) the runtime said it does not have, with its reason; the service is then `degraded`. `tenancy` is `shared` when two or more users reach the same ALLOWED_PATHS (no WORKSPACES_DIR, no workspace_paths of their own), so each can read and change the others\' files; otherwise `per_user` (local mode too: its one user shares with nobody). Each check is asked at most once every 2 s; requests within that time share its answer.',
        response: { 200: HealthResponse, 503: HealthResponse },
      },
    },
    async (_request, reply) => {
      const [databaseState, ...results] = await Promise.all([database(), ...dependencies.map(([, probe]) => probe())]);
      const checks: Record<string, string> = { database: databaseState ?? 'error' };
      dependencies.forEach(([name], i) => (checks[name] = results[i] ?? 'error'));
      Object.assign(checks, (await facts?.()) ?? {});
      const missing = missingModels(options.missingModels?.() ?? [], (await options.unlistedModels?.()) ?? []);
      // One view of a missing model: `checks.model` is `missing` exactly while `missing_models` names one.
      if (missing.length > 0) checks.model = 'missing';
      // `unknown`: the runtime answered without listing its models (a proxy, a server without the
      // listing); nothing is known to be wrong, so it does not make the service degraded.
      const healthy = results.every((r) => r === 'ok' || r === 'unknown') && missing.length === 0;
      const model = { ...(options.model === undefined ? {} : { model: options.model() }), ...(missing.length === 0 ? {} : { missing_models: missing }) };
      const shared = tenancy === undefined ? {} : { tenancy: await tenancy() };
      if (databaseState !== 'ok') return reply.code(503).send({ status: 'unhealthy', version: options.version, checks, ...model, ...shared });
      return { status: healthy ? 'healthy' : 'degraded', version: options.version, checks, ...model, ...shared } as const;
    },
  );
};

/** What the listing says besides: a model it lacks that was not described as missing (yet: that is asked every 5 minutes). */
const NOT_LISTED = "not in the runtime's list of models";

/** Each missing configured model once: the runtime's own reason where it gave one, else that its listing lacks it. */
function missingModels(described: readonly { name: string; reason: string }[], unlisted: readonly string[]): { name: string; reason: string }[] {
  const named = new Set(described.map((model) => model.name));
  return [...described, ...unlisted.filter((name) => !named.has(name)).map((name) => ({ name, reason: NOT_LISTED }))];
}
