import { homedir } from 'node:os';
import { config as loadDotenv } from 'dotenv';
import { buildApp, createLogger } from './app.js';
import { assertSafeExposure } from './exposure.js';
import { openServices } from './services.js';
import { loadSettings, SettingsError, type Settings } from './settings.js';
import { allowedPathHoldingHome } from './tool-paths.js';
import { errorMessage } from './util/error-message.js';
import { shutDown } from './shutdown.js';
import { WorkspacesOverlapAtStartError } from './users/errors.js';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

function refuse(error: unknown): never {
  if (error instanceof SettingsError || error instanceof WorkspacesOverlapAtStartError) {
    process.stderr.write(`mada-api: ${error.message}\n`);
    process.exit(1);
  }
  throw error;
}

function readSettings(): Settings {
  loadDotenv({ quiet: true });
  try {
    return loadSettings();
  } catch (error) {
    return refuse(error);
  }
}

async function main(): Promise<void> {
  const settings = readSettings();
  const logger = createLogger(settings);
  // WORKSPACES_DIR is made ready here: a bad one stops start-up in one line, as a bad setting does.
  const services = await openServices(settings, logger).catch(refuse);
  // Stored users make the service keyed too, which only the database can tell.
  try {
    assertSafeExposure(settings, services.users.keyed);
    await services.users.assertWorkspacesApart();
  } catch (error) {
    await services.close();
    refuse(error);
  }
  const app = await buildApp({ settings, ...services, logger });
  app.addHook('onClose', () => services.close());
  if (settings.allowedPathsDefaulted) {
    logger.info({ allowedPaths: settings.allowedPaths }, 'ALLOWED_PATHS is empty: tools are confined to the start directory');
  }
  const holdingHome = allowedPathHoldingHome(settings.allowedPaths, process.env.HOME ?? homedir());
  if (holdingHome !== undefined) {
    logger.warn(
      { allowedPath: holdingHome },
      "ALLOWED_PATHS holds the service user's home directory: bash can rewrite its start-up files (.bashrc, .profile, .ssh, .gitconfig), which run programs outside the sandbox. Start the service in a project directory or set ALLOWED_PATHS",
    );
  }
  if (services.users.keyed) {
    logger.info({ mode: 'keyed' }, 'keyed mode: every request needs a key (API_KEYS or a stored user\'s)');
  } else {
    logger.warn(
      { mode: 'local' },
      'no API_KEYS and no stored users: local mode, requests act as user "local". Local mode trusts every process on this machine (any of them can run agents, shell included); on a shared machine set API_KEYS',
    );
  }

  if ((await services.users.tenancy()) === 'shared') {
    logger.warn(
      { tenancy: 'shared' },
      "users share ALLOWED_PATHS: each user's agents can read and change every other user's files. Set WORKSPACES_DIR (a directory per user) or give each user workspace_paths",
    );
  }

  let closing = false;
  for (const signal of SIGNALS) {
    process.on(signal, () => {
      if (closing) {
        logger.warn(`${signal} again: exiting without waiting`);
        process.exit(1);
      }
      closing = true;
      logger.info(`${signal}: finishing in-flight requests`);
      shutDown({ runs: services.runs, closeServer: () => app.close(), graceMs: settings.shutdownGraceSeconds * 1000, log: logger }).then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  await app.listen({ host: settings.host, port: settings.port });
}

main().catch((error: unknown) => {
  process.stderr.write(`mada-api: failed to start: ${errorMessage(error)}\n`);
  process.exit(1);
});
