import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMada, tempDir } from './support/cli-process.js';
import { startMadaService, type RunningService } from './support/service.js';

const ROOT_KEY = 'root-key-5d0a8f2b7e91';

let service: RunningService;
let aliceKey: string;

async function asRoot(method: string, path: string, body: object): Promise<Record<string, unknown>> {
  const response = await fetch(`${service.url}${path}`, { method, headers: { 'x-api-key': ROOT_KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(201);
  return (await response.json()) as Record<string, unknown>;
}

beforeAll(async () => {
  service = await startMadaService({ API_KEYS: `root:${ROOT_KEY}`, ADMIN_USERS: 'root' });
  await asRoot('POST', '/users', { id: 'alice' });
  aliceKey = (await asRoot('POST', '/users/alice/keys', { name: 'first' })).key as string;
});

afterAll(async () => {
  await service?.stop();
});

/** `mada` as alice's shell runs it, her key in MADA_API_KEY. */
const mada = (args: string[], key = aliceKey) => runMada([...args, '-a', service.url], { home: tempDir('mada-cli-home-'), env: { MADA_API_KEY: key }, timeoutMs: 30_000 });

describe('mada whoami and mada keys', () => {
  it('says who the key acts as', async () => {
    const alice = await mada(['whoami']);
    expect(alice.code, alice.stderr).toBe(0);
    expect(alice.stdout).toMatch(/^alice \(member\)\nworkspace: \/.*\ntoday \(UTC\): 0 runs, 0 tokens; running now: 0\nquotas: runs a day no limit; tokens a day no limit; runs at once at most 2$/m);
    const root = await mada(['whoami', '--json'], ROOT_KEY);
    expect(JSON.parse(root.stdout)).toMatchObject({ id: 'root', role: 'admin' });
  });

  it('lists, creates and revokes keys; a revoked key is refused', async () => {
    const created = await mada(['keys', 'create', 'laptop', '--expires-in-days', '7']);
    expect(created.code, created.stderr).toBe(0);
    const [key, note] = created.stdout.split('\n');
    expect(key).toMatch(/^mada_[0-9A-Za-z]{43}$/);
    expect(note).toMatch(/shown this once/);
    const id = /key ([0-9a-f-]{36})/.exec(note!)![1]!;

    // A long name too: the table still fits 80 columns, the name cut short.
    const long = await mada(['keys', 'create', 'build server in the basement rack number three']);
    expect(long.code, long.stderr).toBe(0);

    const listed = await mada(['keys'], key);
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID +NAME +PREFIX +STATE +CREATED +EXPIRES +LAST USED$/);
    expect(lines[1]).toMatch(/^[0-9a-f]{8} +build serve… +mada_\w{7} +active +\d{4}-\d\d-\d\d +- +never$/);
    // Used just now (by this very listing), expiring in a week.
    expect(lines[2]).toMatch(new RegExp(`^${id.slice(0, 8)} +laptop +${key!.slice(0, 12)} +active +\\d{4}-\\d\\d-\\d\\d +\\d{4}-\\d\\d-\\d\\d +just now$`));
    expect(lines[3]).toMatch(/first +mada_\w{7} +active/);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(listed.stdout).not.toContain(aliceKey);

    const revoked = await mada(['keys', 'revoke', id.slice(0, 8)]);
    expect([revoked.code, revoked.stdout]).toEqual([0, `Key ${id} revoked.\n`]);
    const refused = await mada(['whoami'], key);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Invalid API key');
    expect((await mada(['keys'])).stdout).toMatch(new RegExp(`${id.slice(0, 8)} +laptop .* revoked`));

    const unknown = await mada(['keys', 'revoke', '00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('mada: Key not found (404); `mada keys` lists yours\n');
    // Seven client processes: room for a loaded machine.
  }, 90_000);
});
