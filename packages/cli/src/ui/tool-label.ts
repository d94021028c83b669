import { isAbsolute, relative } from 'node:path';
import { safeText } from './safe-text.js';

/** The argument that says what a tool call is about, per the `tool_start` args table of docs/api.md. */
const KEY_ARGUMENT: Record<string, string> = {
  read_file: 'file_path',
  edit_file: 'file_path',
  write_file: 'file_path',
  glob_files: 'pattern',
  grep_content: 'pattern',
  bash_readonly: 'command',
  bash: 'command',
  web_search: 'query',
  spawn_agent: 'prompt',
};

const PATH_ARGUMENTS = new Set(['file_path', 'path']);

function shorten(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, Math.max(1, max - 1))}…` : oneLine;
}

/** Paths inside the working directory read better relative to it. */
function displayPath(path: string, workingDir: string): string {
  if (!isAbsolute(path)) return path;
  const inside = relative(workingDir, path);
  return inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : path;
}

function keyArgument(tool: string, args: Record<string, unknown>, workingDir: string): string | undefined {
  const name = KEY_ARGUMENT[tool] ?? Object.keys(args).find((key) => typeof args[key] === 'string');
  const value = name === undefined ? undefined : args[name];
  if (typeof value !== 'string' || value === '') return undefined;
  if (tool === 'spawn_agent' && typeof args.agent_type === 'string') return `${args.agent_type}: ${value}`;
  return name !== undefined && PATH_ARGUMENTS.has(name) ? displayPath(value, workingDir) : value;
}

/** `read_file src/app.ts`: the tool and its key argument, fit for one line; both came from the model. */
export function toolLabel(tool: string, args: Record<string, unknown>, workingDir: string, width = 80): string {
  const name = safeText(tool);
  const argument = keyArgument(tool, args, workingDir);
  return argument === undefined ? name : `${name} ${shorten(safeText(argument), Math.max(10, width - name.length - 8))}`;
}
