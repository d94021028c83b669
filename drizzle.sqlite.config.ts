import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './packages/api/src/db/schema/sqlite.ts',
  out: './packages/api/migrations/sqlite',
});
