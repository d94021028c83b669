import { CliError, UsageError } from '../errors.js';
import { readConfigFile, type ConfigFile } from './config-file.js';
import { configFilePath } from './home.js';
import { ConfigValueError, SETTING_KEYS, SETTING_NAMES, type Settings } from './keys.js';

export type Source = { kind: 'default' } | { kind: 'file' } | { kind: 'env'; name: string } | { kind: 'flag'; name: string };

/** Flag values as typed on the command line, checked here like every other source. */
export type FlagValues = { [K in keyof Settings]?: { raw: unknown; flag: string } };

export interface ResolvedSettings {
  values: Settings;
  sources: Record<keyof Settings, Source>;
  file: ConfigFile;
}

export function describeSource(source: Source): string {
  switch (source.kind) {
    case 'default':
      return 'default';
    case 'file':
      return 'config file';
    case 'env':
      return `env ${source.name}`;
    case 'flag':
      return `flag ${source.name}`;
  }
}

function parseOrThrow<K extends keyof Settings>(name: K, raw: unknown, fail: (problem: string) => CliError): Settings[K] {
  try {
    return SETTING_KEYS[name].parse(raw);
  } catch (error) {
    if (error instanceof ConfigValueError) throw fail(error.message);
    throw error;
  }
}

function pick<K extends keyof Settings>(name: K, flags: FlagValues, env: NodeJS.ProcessEnv, file: ConfigFile): { value: Settings[K]; source: Source } {
  const spec = SETTING_KEYS[name];
  const flag = flags[name];
  if (flag) {
    const value = parseOrThrow(name, flag.raw, (problem) => new UsageError(`${flag.flag} ${problem}`));
    return { value, source: { kind: 'flag', name: flag.flag } };
  }
  const fromEnv = spec.env ? env[spec.env] : undefined;
  if (spec.env && fromEnv !== undefined && fromEnv !== '') {
    const variable = spec.env;
    const value = parseOrThrow(name, fromEnv, (problem) => new CliError(`${variable} ${problem}`, `fix or unset ${variable}`));
    return { value, source: { kind: 'env', name: variable } };
  }
  const fromFile = file.values[name];
  if (fromFile !== undefined) return { value: fromFile, source: { kind: 'file' } };
  return { value: spec.default, source: { kind: 'default' } };
}

/** Settings in order of precedence: flags, then the environment, then the file, then defaults. */
export function resolveSettings(flags: FlagValues = {}, env: NodeJS.ProcessEnv = process.env): ResolvedSettings {
  const file = readConfigFile(configFilePath(env));
  const values: Partial<Record<keyof Settings, unknown>> = {};
  const sources: Partial<Record<keyof Settings, Source>> = {};
  for (const name of SETTING_NAMES) {
    const { value, source } = pick(name, flags, env, file);
    values[name] = value;
    sources[name] = source;
  }
  return { values: values as Settings, sources: sources as Record<keyof Settings, Source>, file };
}
