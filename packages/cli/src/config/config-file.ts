import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parse, TomlError } from 'smol-toml';
import { CliError } from '../errors.js';
import { ConfigValueError, SETTING_KEYS, SETTING_NAMES, type Settings } from './keys.js';

export interface ConfigFile {
  path: string;
  found: boolean;
  values: Partial<Settings>;
}

/** One line: the file, then the problem (smol-toml's message carries a code frame after a newline). */
function malformed(path: string, problem: string): CliError {
  return new CliError(`${path}: ${problem}`, 'fix the file, or move it away and run `mada config --init`');
}

function tomlProblem(error: TomlError): string {
  const first = error.message.split('\n')[0] ?? error.message;
  return `${first.replace(/^Invalid TOML document: /, 'invalid TOML: ')} (line ${error.line}, column ${error.column})`;
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** Maps `[section] key = value` onto settings; unknown keys are errors so a typo never goes unnoticed. */
function settingsFrom(document: Record<string, unknown>, path: string): Partial<Settings> {
  const byKey = new Map(SETTING_NAMES.map((name) => [SETTING_KEYS[name].key, name]));
  const values: Record<string, unknown> = {};
  for (const [section, table] of Object.entries(document)) {
    if (!isTable(table)) throw malformed(path, `\`${section}\` must be a [${section}] table`);
    for (const [key, raw] of Object.entries(table)) {
      const dotted = `${section}.${key}`;
      const name = byKey.get(dotted);
      if (!name) throw malformed(path, `unknown key ${dotted} (known: ${[...byKey.keys()].join(', ')})`);
      try {
        values[name] = SETTING_KEYS[name].parse(raw);
      } catch (error) {
        if (error instanceof ConfigValueError) throw malformed(path, `${dotted} ${error.message}`);
        throw error;
      }
    }
  }
  return values as Partial<Settings>;
}

export function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { path, found: false, values: {} };
    throw malformed(path, `cannot read: ${(error as Error).message}`);
  }
  let document: Record<string, unknown>;
  try {
    document = parse(text);
  } catch (error) {
    if (error instanceof TomlError) throw malformed(path, tomlProblem(error));
    throw error;
  }
  return { path, found: true, values: settingsFrom(document, path) };
}

function tomlValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** The default file: every key with its default, secrets commented out, and a line of help each. */
export function defaultConfigText(): string {
  const sections = new Map<string, string[]>();
  for (const name of SETTING_NAMES) {
    const spec = SETTING_KEYS[name];
    const [section = '', key = ''] = spec.key.split('.');
    const lines = sections.get(section) ?? [];
    const env = spec.env ? ` Overridden by ${spec.env}.` : '';
    lines.push(`# ${spec.help}${env}`);
    lines.push(spec.default === undefined ? `# ${key} = "..."` : `${key} = ${tomlValue(spec.default)}`);
    sections.set(section, lines);
  }
  const body = [...sections].map(([section, lines]) => `[${section}]\n${lines.join('\n')}\n`).join('\n');
  return `# mada client settings. Environment variables override this file; command-line flags override both.\n\n${body}`;
}

/** Writes the default file; an existing one is kept unless `force`. */
export function writeDefaultConfig(path: string, force: boolean): void {
  if (existsSync(path) && !force) {
    throw new CliError(`${path} already exists`, 'use `mada config --init --force` to overwrite it');
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // The file may come to hold an API key: readable by its owner only.
  writeFileSync(path, defaultConfigText(), { mode: 0o600 });
}
