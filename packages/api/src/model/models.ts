import { BadRequestError } from '../errors.js';
import { createModelClient, type ModelClientOptions, type ModelSettings } from './create-model-client.js';
import { ModelError } from './errors.js';
import { fixedRuntimeInfo, type RuntimeInfo, type RuntimeInfoSource } from './runtime-info.js';
import { RuntimeIntrospector, type IntrospectorOptions } from './runtime-introspector.js';
import type { ModelClient, ModelStreamPart } from './types.js';

/** A name outside LLM_MODELS (400). The name is the client's own: it goes back only to them. */
export class UnknownModelError extends BadRequestError {
  constructor(name: string) {
    super(`Unknown model: ${name}`);
  }
}

/**
 * One configured model: its client, and what the runtime says of it. The window, the tool-call
 * mode and so the text dialect belong to the model, not to the service: a small text-only model
 * and a large one with native tools may sit on the same runtime.
 */
export interface ServedModel {
  /** The configured name: what runs store and metrics carry, never a client's string. */
  readonly name: string;
  readonly client: ModelClient;
  readonly runtime: RuntimeInfoSource;
}

/** The models of LLM_MODELS, by name; LLM_MODEL is the default. */
export class ModelCatalogue {
  private readonly byName: ReadonlyMap<string, ServedModel>;

  constructor(
    readonly defaultName: string,
    models: readonly ServedModel[],
    private readonly lifecycle: { start(): Promise<void>; stop(): Promise<void> } = { start: async () => undefined, stop: async () => undefined },
  ) {
    this.byName = new Map(models.map((model) => [model.name, model]));
    if (!this.byName.has(defaultName)) throw new Error(`the default model ${defaultName} is not among the configured ones`);
  }

  /** One model under a fixed view of the runtime (benchmarks, tests of other parts). */
  static single(client: ModelClient, info: RuntimeInfo): ModelCatalogue {
    return new ModelCatalogue(info.name, [{ name: info.name, client, runtime: fixedRuntimeInfo(info) }]);
  }

  /** Every configured model, the default first. */
  all(): ServedModel[] {
    return [...this.byName.values()];
  }

  /** The model asked for, or the default when none was; a name not configured throws UnknownModelError (400). */
  get(name?: string | null): ServedModel {
    const model = this.byName.get(name ?? this.defaultName);
    if (model === undefined) throw new UnknownModelError(name ?? '');
    return model;
  }

  /** The models' clients with `wrap` around each (metrics). */
  mapClients(wrap: (client: ModelClient, name: string) => ModelClient): ModelCatalogue {
    return new ModelCatalogue(
      this.defaultName,
      this.all().map((model) => ({ ...model, client: wrap(model.client, model.name) })),
      this.lifecycle,
    );
  }

  /** The first introspection of every model (awaited, never fails) and the periodic ones after it. */
  start(): Promise<void> {
    return this.lifecycle.start();
  }

  stop(): Promise<void> {
    return this.lifecycle.stop();
  }
}

export interface CatalogueOptions extends Omit<IntrospectorOptions, 'fetch'> {
  onRetry?: ModelClientOptions['onRetry'];
  /** Replaces every configured model's client (benchmarks): introspection still runs per model. */
  client?: ModelClient;
}

/**
 * A client and an introspector per configured model, all on the one runtime of LLM_BASE_URL. A
 * call the runtime answers with "no such model" has the model looked at again at once, so
 * `/health` names it without waiting for the next periodic look.
 */
export function openModelCatalogue(settings: ModelSettings & { llmModels: readonly string[] }, options: CatalogueOptions = {}): ModelCatalogue {
  const introspectors = settings.llmModels.map((name) => new RuntimeIntrospector({ ...settings, llmModel: name }, options));
  const models = settings.llmModels.map((name, index): ServedModel => {
    const runtime = introspectors[index]!;
    const client =
      options.client ?? createModelClient({ ...settings, llmModel: name }, { runtime, ...(options.onRetry ? { onRetry: options.onRetry } : {}) });
    return { name, runtime, client: lookAgainWhenMissing(client, runtime) };
  });
  return new ModelCatalogue(settings.llmModel, models, {
    start: async () => void (await Promise.all(introspectors.map((introspector) => introspector.start()))),
    stop: async () => void (await Promise.all(introspectors.map((introspector) => introspector.stop()))),
  });
}

const isMissing = (error: unknown): boolean => error instanceof ModelError && error.kind === 'model-not-found';

function lookAgainWhenMissing(client: ModelClient, runtime: RuntimeIntrospector): ModelClient {
  const noteFailure = (error: unknown): never => {
    if (isMissing(error)) void runtime.refresh();
    throw error;
  };
  return {
    provider: client.provider,
    model: client.model,
    complete: (request, signal, log) => client.complete(request, signal, log).catch(noteFailure),
    async *stream(request, signal, log): AsyncIterable<ModelStreamPart> {
      try {
        yield* client.stream(request, signal, log);
      } catch (error) {
        noteFailure(error);
      }
    },
  };
}
