import { ExpirySweeper } from './conversations/expiry-sweeper.js';
import { ConversationService } from './conversations/service.js';
import { openRepository } from './db/open.js';
import type { Settings } from './settings.js';

export interface Services {
  conversations: ConversationService;
  sweeper: ExpirySweeper;
  close(): Promise<void>;
}

const SWEEP_INTERVAL_MS = 5 * 60_000;

interface Log {
  info(object: object, message: string): void;
  error(object: object, message: string): void;
}

/** Everything the routes need that holds resources: opened at start-up, closed at shutdown. */
export async function openServices(settings: Settings, log: Log): Promise<Services> {
  const repository = await openRepository(settings.database, {
    ...(settings.debug ? { logStatement: (entry) => log.info(entry, 'sql') } : {}),
  });
  const conversations = new ConversationService(repository, { sessionTtlHours: settings.sessionTtlHours });
  const sweeper = new ExpirySweeper(
    conversations,
    SWEEP_INTERVAL_MS,
    (error) => log.error({ err: error }, 'expiry sweep failed'),
    (count) => count > 0 && log.info({ count }, 'expired conversations deleted'),
  );
  sweeper.start();
  return {
    conversations,
    sweeper,
    async close() {
      await sweeper.stop();
      await repository.close();
    },
  };
}
