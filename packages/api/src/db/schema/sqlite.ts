import { deriveSqliteTables } from './derive-sqlite.js';
import * as tables from './tables.js';

/*
 * The SQLite tables, derived from the one schema (tables.ts). They are exported one by one because
 * drizzle-kit finds a schema's tables among its module's exports; the SQLite dialect takes this
 * module as its Tables, so the build fails if a table is left out here.
 */
export const {
  apiKeys,
  approvalGrants,
  auditLog,
  approvals,
  consoleSessions,
  conversations,
  messages,
  runEventPages,
  runEvents,
  runs,
  sandboxActivities,
  userConversationCounts,
  userDailyUsage,
  userModelDailyUsage,
  users,
  webhookDeliveries,
  webhooks,
} = deriveSqliteTables(tables);
