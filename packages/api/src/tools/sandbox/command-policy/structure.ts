import { refuse } from './refusal.js';
import type { ScriptSpec, ShellToolName, SimpleCommandSpec } from './plan.js';

export const allCommands = (script: ScriptSpec): SimpleCommandSpec[] =>
  script.statements.flatMap((s) => [s.first, ...s.rest.map((r) => r.pipeline)]).flatMap((p) => p.commands);

/**
 * bash_readonly takes one command or a `|` pipeline and nothing else: no lists, redirections,
 * here-documents or expansions (globs and `~` included).
 */
export function checkStructure(script: ScriptSpec, tool: ShellToolName, separators: number): void {
  if (tool !== 'bash_readonly') return;
  const [first, ...others] = script.statements;
  if (first === undefined || others.length > 0 || separators > 0) refuse('bash_readonly runs one command or a | pipeline (no ; or newline)');
  if ((first?.rest.length ?? 0) > 0) refuse('bash_readonly runs one command or a | pipeline (no && or ||)');
  for (const command of allCommands(script)) {
    if (command.redirections.some((r) => r.kind === 'text')) refuse('here-documents and here-strings are not allowed in bash_readonly');
    if (command.redirections.length > 0) refuse('redirections are not allowed in bash_readonly');
    for (const word of command.args) {
      if (word.glob !== undefined) {
        refuse(`pathname expansion (${word.source}) is not allowed in bash_readonly; quote patterns meant for the program, or use find or glob_files to list files`);
      }
      if (word.tilde === true) refuse(`~ expansion (${word.source}) is not allowed in bash_readonly; write the full path`);
    }
  }
}
