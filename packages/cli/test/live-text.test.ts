import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { scripted, type ScriptedTurn } from '@mada/testkit';
import type { RunResponse } from '@mada/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, cliCommand, tempDir } from './support/cli-process.js';
import { startServiceWithModel, type ServiceWithModel } from './support/service.js';
import { TmuxTerminal } from './support/tmux.js';

let running: ServiceWithModel;
let workspace: string;
const terminals: TmuxTerminal[] = [];

beforeAll(async () => {
  running = await startServiceWithModel();
  workspace = running.service.workspace;
  writeFileSync(join(workspace, 'notes.txt'), 'the answer is 42\n');
});

afterAll(async () => {
  await running?.stop();
});

afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  expect(running.model.remaining).toBe(0);
});

const SLOW = 60_000;
const WORDS = ['Alpha ', 'bravo ', 'charlie ', 'delta '];

function open(command: string[]): TmuxTerminal {
  const terminal = TmuxTerminal.start(command, childEnv(tempDir('mada-cli-home-')), workspace);
  terminals.push(terminal);
  return terminal;
}

interface SlowAnswer {
  /** When the model sent the answer's first word (0 until then). */
  sentAt(): number;
  /** Lets the model write the answer's last words and end it. */
  finish(): void;
}

/**
 * The task agent reads the notes (after `before`, when given), then writes its answer one word
 * every 200 ms, and holds the last words back until `finish`: the answer is still being written
 * while the test looks at the screen. The tool call first, because a `task` that has used no
 * tool yet is held back by the service in case it must be re-prompted.
 */
function slowAnswer(before?: Promise<unknown>): SlowAnswer {
  let sentAt = 0;
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const read = scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(workspace, 'notes.txt') } });
  running.model.push(
    async () => {
      await before;
      return read;
    },
    (): ScriptedTurn => {
      sentAt = Date.now();
      const paced = WORDS.flatMap((word, index) => (index === 0 ? [word] : [scripted.pause(200), word]));
      return scripted.chunks(...paced, scripted.until(released), 'echo **foxtrot**.');
    },
  );
  return { sentAt: () => sentAt, finish: release };
}

/** When `text` first showed on the screen, looked for as often as tmux can answer. */
async function firstSight(terminal: TmuxTerminal, text: string, timeoutMs = 20_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (terminal.screen().includes(text)) return Date.now();
    if (Date.now() > deadline) throw new Error(`screen never showed ${text}; it shows:\n${terminal.screen()}`);
    await sleep(10);
  }
}

/** The first word is on screen within 0.5 s of the model sending it, the next ones follow while the answer is unfinished. */
async function expectLive(terminal: TmuxTerminal, answer: SlowAnswer): Promise<void> {
  const seen = await firstSight(terminal, 'Alpha');
  expect(answer.sentAt()).toBeGreaterThan(0);
  expect(seen - answer.sentAt()).toBeLessThan(500);
  await terminal.waitFor('Alpha bravo charlie delta');
  const screen = terminal.screen();
  expect(screen).not.toContain('foxtrot');
  // The spinner stopped for the text: nothing of it sits on the answer's line.
  expect(screen).toMatch(/^Alpha bravo charlie delta$/m);
  answer.finish();
}

describe('the answer as the model writes it', () => {
  it('in mada chat: word by word, then rendered as markdown in place', async () => {
    const answer = slowAnswer();
    const terminal = open(cliCommand(['chat', '-a', running.service.url, '-d', workspace]));
    await terminal.waitFor(/mada \[default\] ›/);
    terminal.type('what do the notes say?');
    terminal.keys('Enter');
    await expectLive(terminal, answer);
    const screen = await terminal.waitFor(/foxtrot\.[\s\S]*mada \[default\] ›/);
    // Rendered once it was whole: the markdown marks are gone, and the text is there once.
    expect(screen).toContain('Alpha bravo charlie delta echo foxtrot.');
    expect(screen).not.toContain('**');
    expect(screen.match(/Alpha/g)).toHaveLength(1);
    expect(screen).toContain('✔ read_file notes.txt · 1 the answer is 42');
  }, SLOW);

  it('in mada attach', async () => {
    let attached = (): void => undefined;
    const answer = slowAnswer(new Promise<void>((resolve) => (attached = resolve)));
    const response = await fetch(`${running.service.url}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_type: 'task', prompt: 'what do the notes say?', working_dir: workspace }),
    });
    const run = (await response.json()) as RunResponse;
    const terminal = open(cliCommand(['attach', run.id, '-a', running.service.url]));
    await terminal.waitFor(`Run ${run.id}`);
    attached();
    await expectLive(terminal, answer);
    const screen = await terminal.waitFor('[exit 0]');
    expect(screen).toContain('Alpha bravo charlie delta echo foxtrot.');
  }, SLOW);

  it('in piped mode, where the output is plain text', async () => {
    const answer = slowAnswer();
    const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;
    const chat = cliCommand(['chat', '-a', running.service.url, '-d', workspace]).map(quote).join(' ');
    const terminal = open(['sh', '-c', `printf 'what do the notes say?\\n' | ${chat} | cat`]);
    await expectLive(terminal, answer);
    const screen = await terminal.waitFor('[exit 0]');
    expect(screen).toContain('Alpha bravo charlie delta echo **foxtrot**.\n');
    expect(screen).toContain('✓ read_file: 1 the answer is 42');
  }, SLOW);
});
