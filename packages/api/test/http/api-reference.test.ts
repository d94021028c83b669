import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../support/app.js';

const REFERENCE = fileURLToPath(new URL('../../../../docs/api.md', import.meta.url));
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** The routes docs/api.md documents: its headings of the form ### `METHOD /path`. */
function documentedRoutes(markdown: string): string[] {
  return [...markdown.matchAll(/^### `([A-Z]+) (\/[^`\s]*)`$/gm)].map((match) => `${match[1]} ${match[2]}`);
}

describe('docs/api.md', () => {
  it('documents exactly the routes the OpenAPI document lists', async () => {
    const t = await createTestApp();
    try {
      const document = (await t.app.inject({ url: '/openapi.json' })).json<{ paths: Record<string, Record<string, unknown>> }>();
      const served = Object.entries(document.paths).flatMap(([path, operations]) =>
        Object.keys(operations)
          .filter((method) => METHODS.includes(method))
          .map((method) => `${method.toUpperCase()} ${path}`),
      );
      const documented = documentedRoutes(readFileSync(REFERENCE, 'utf8'));
      expect(new Set(documented).size).toBe(documented.length);
      expect([...documented].sort()).toEqual([...served].sort());
    } finally {
      await t.close();
    }
  });

  it('reads route headings and nothing else', () => {
    const sample = ['### `GET /a/{id}`', '### `post /lower`', '#### `GET /deeper`', 'text ### `GET /inline`', '### `DELETE /b/`'].join('\n');
    expect(documentedRoutes(sample)).toEqual(['GET /a/{id}', 'DELETE /b/']);
  });
});
