import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRepository } from '../../src/db/open.js';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';

describe('DEBUG statement logging', () => {
  it('passes every statement and its parameters to the logger', async () => {
    const path = join(tempDir('mada-debug-'), 'x.db');
    const logged: { sql: string; params: unknown[] }[] = [];
    const repository = await openRepository({ dialect: 'sqlite', path, url: `sqlite:///${path}` }, { logStatement: (entry) => logged.push(entry) });
    await repository.findConversation('00000000-0000-4000-8000-000000000000');
    await repository.close();
    expect(logged.some((entry) => /^select .* from "conversations"/i.test(entry.sql) && entry.params.includes('00000000-0000-4000-8000-000000000000'))).toBe(true);
  });
});
