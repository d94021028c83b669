import { readFileSync } from 'node:fs';
import type { ShellToolName } from '../../../src/tools/sandbox/command-policy/index.js';

export interface CorpusCase {
  line: number;
  verdict: 'allow' | 'ask' | 'deny';
  tool: ShellToolName;
  command: string;
  fragment?: string;
}

const TOOLS: Record<string, ShellToolName[]> = { readonly: ['bash_readonly'], bash: ['bash'], both: ['bash_readonly', 'bash'] };

/** Reads corpus/commands.tsv (its format is described at the top of the file). */
export function readCorpus(): CorpusCase[] {
  const text = readFileSync(new URL('../corpus/commands.tsv', import.meta.url), 'utf8');
  return text.split('\n').flatMap((raw, index) => {
    if (raw.trim() === '' || raw.startsWith('#')) return [];
    const [verdict, tool, source, fragment] = raw.split('\t');
    const tools = TOOLS[tool ?? ''];
    if ((verdict !== 'allow' && verdict !== 'ask' && verdict !== 'deny') || tools === undefined || source === undefined) {
      throw new Error(`commands.tsv line ${index + 1} is malformed: ${raw}`);
    }
    const command = source.startsWith('json:') ? (JSON.parse(source.slice(5)) as string) : source;
    return tools.map((t) => ({ line: index + 1, verdict, tool: t, command, ...(fragment ? { fragment } : {}) }));
  });
}
