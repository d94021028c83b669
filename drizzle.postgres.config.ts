import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './packages/api/src/db/schema/tables.ts',
  out: './packages/api/migrations/postgres',
});
