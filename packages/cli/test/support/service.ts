import { once } from 'node:events';
import { join } from 'node:path';
import { startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { startService, type ServiceProcess } from '../../../api/test/support/service-process.js';
import { tempDir, TEST_ROOT } from './cli-process.js';

export interface RunningService {
  url: string;
  /** The service's start directory (its tools may touch any temp directory of this test file). */
  workspace: string;
  output: () => string;
  stop(): Promise<void>;
}

/** The real mada service as a child process, on a fresh SQLite file and a free port. */
export async function startMadaService(env: Record<string, string> = {}): Promise<RunningService> {
  const workspace = tempDir('mada-cli-ws-');
  const service: ServiceProcess = await startService(
    {
      DATA_DIR: join(tempDir('mada-cli-data-'), 'data'),
      RATE_LIMIT_PER_MINUTE: '0',
      // Sessions start in each test's own temp HOME or directory, and the service checks a
      // session's working directory when it is created.
      ALLOWED_PATHS: TEST_ROOT,
      ...env,
    },
    workspace,
  );
  return {
    url: service.url,
    workspace,
    output: service.output,
    async stop() {
      if (service.child.exitCode !== null) return;
      service.child.kill('SIGTERM');
      await once(service.child, 'exit');
    },
  };
}

export interface ServiceWithModel {
  service: RunningService;
  model: ScriptedModel;
  stop(): Promise<void>;
}

/** The service with its model runtime: testkit's scripted server, speaking Ollama's protocol. */
export async function startServiceWithModel(env: Record<string, string> = {}): Promise<ServiceWithModel> {
  const model = await startScriptedModel();
  const service = await startMadaService({ LLM_PROVIDER: 'ollama', LLM_BASE_URL: model.url, ...env });
  return {
    service,
    model,
    async stop() {
      await service.stop();
      await model.close();
    },
  };
}
