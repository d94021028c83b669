import { countMessageListTokens, countTokens } from '../tokens/count.js';
import type { ModelClient, ModelRequest, ModelResponse, ModelStreamPart } from '../model/index.js';
import type { CallOutcome, ServiceMetrics } from './service-metrics.js';

type Kind = 'complete' | 'stream';

const outcomeOf = (signal: AbortSignal | undefined): CallOutcome => (signal?.aborted ? 'cancelled' : 'error');

/** What the answer cost in tokens: the runtime's own counts, else cl100k_base over what was sent and received. */
function countUsage(metrics: ServiceMetrics, model: string, request: ModelRequest, response: ModelResponse): void {
  const { input_tokens, output_tokens } = response.usage;
  if (input_tokens !== undefined) metrics.inputTokens.inc({ model, source: 'reported' }, input_tokens);
  else metrics.inputTokens.inc({ model, source: 'counted' }, countMessageListTokens(request.messages));
  if (output_tokens !== undefined) metrics.outputTokens.inc({ model, source: 'reported' }, output_tokens);
  else {
    const calls = response.toolCalls.reduce((sum, call) => sum + countTokens(call.name) + countTokens(call.rawArguments), 0);
    metrics.outputTokens.inc({ model, source: 'counted' }, countTokens(response.text) + calls);
  }
}

/**
 * A model client that reports each call's count, latency and tokens under `model`, the
 * configured name (LLM_MODELS: a bounded set, never a client's string); calls pass through unchanged.
 */
export function observeModel(client: ModelClient, metrics: ServiceMetrics, model: string): ModelClient {
  const finish = (kind: Kind, outcome: CallOutcome, started: number): void => {
    metrics.modelCalls.inc({ model, kind, outcome });
    metrics.modelLatency.observe({ model, kind, outcome }, (performance.now() - started) / 1000);
  };
  return {
    provider: client.provider,
    model: client.model,
    async complete(request, signal, log) {
      const started = performance.now();
      try {
        const response = await client.complete(request, signal, log);
        finish('complete', 'ok', started);
        countUsage(metrics, model, request, response);
        return response;
      } catch (error) {
        finish('complete', outcomeOf(signal), started);
        throw error;
      }
    },
    async *stream(request, signal, log): AsyncIterable<ModelStreamPart> {
      const started = performance.now();
      let first = true;
      let outcome: CallOutcome | undefined;
      try {
        for await (const part of client.stream(request, signal, log)) {
          if (first) metrics.modelFirstToken.observe({ model }, (performance.now() - started) / 1000);
          first = false;
          if (part.type === 'finish') {
            outcome = 'ok';
            countUsage(metrics, model, request, part.response);
          }
          yield part;
        }
      } catch (error) {
        outcome = outcomeOf(signal);
        throw error;
      } finally {
        // A consumer that stops early (return()) ends the call too: counted as cancelled.
        finish('stream', outcome ?? 'cancelled', started);
      }
    },
  };
}
