import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './packages/api/src/db/schema/postgres.ts',
  out: './packages/api/migrations/postgres',
});
