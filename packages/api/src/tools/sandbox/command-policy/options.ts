import { refuse } from './refusal.js';
import type { ShellToolName } from './plan.js';

/** What an option's value or an operand is: free text, or a path used with that access. */
export type ValueKind = 'text' | 'read' | 'write' | 'entry';

export interface OptionDef {
  /** The long name when there is one, else the short letter: what program rules refer to. */
  id: string;
  shorts: string[];
  longs: string[];
  arg: 'none' | 'required' | 'optional';
  kind: ValueKind;
  /** Refused everywhere, with the reason the agent reads. */
  refused?: string;
  /** Refused in bash_readonly only. */
  readonlyRefused?: string;
}

export interface ScanStyle {
  /** GNU getopt moves options found after operands to the front; false stops at the first operand. */
  permute: boolean;
  /** GNU getopt_long accepts any unambiguous prefix of a long option. */
  abbreviations: boolean;
  /** `-n5` and `-n 5` (getopt); false means a value always comes from the next argument (tree). */
  attachedValues: boolean;
  /** `head -20`, `grep -3`: an all-digit short option is this option's value. */
  numericOption?: string;
}

export interface OptionTable {
  byShort: Map<string, OptionDef>;
  byLong: Map<string, OptionDef>;
  style: ScanStyle;
}

export interface ParsedOption {
  def: OptionDef;
  value?: string;
  /** The argument as written, for messages. */
  raw: string;
}

export interface ParsedArgs {
  options: ParsedOption[];
  operands: string[];
}

const GNU: ScanStyle = { permute: true, abbreviations: true, attachedValues: true };

/** `'n|lines=text'`, `'i|in-place?=text'`, `'a|all'`: names, then `=kind` (required) or `?=kind` (optional). */
function parseSpec(spec: string): OptionDef {
  const match = /^([^=?]+)(\??=)?(text|read|write|entry)?$/.exec(spec);
  if (!match) throw new Error(`bad option spec ${spec}`);
  const names = (match[1] as string).split('|');
  const shorts = names.filter((n) => n.length === 1);
  const longs = names.filter((n) => n.length > 1);
  const arg = match[2] === '=' ? 'required' : match[2] === '?=' ? 'optional' : 'none';
  return { id: longs[0] ?? (shorts[0] as string), shorts, longs, arg, kind: (match[3] as ValueKind | undefined) ?? 'text' };
}

export interface TableSpec {
  options: string[];
  /** Spec → reason. */
  refused?: Record<string, string>;
  readonlyRefused?: Record<string, string>;
  style?: Partial<ScanStyle>;
}

export function optionTable(spec: TableSpec): OptionTable {
  const defs = [
    ...spec.options.map(parseSpec),
    ...Object.entries(spec.refused ?? {}).map(([s, reason]) => ({ ...parseSpec(s), refused: reason })),
    ...Object.entries(spec.readonlyRefused ?? {}).map(([s, reason]) => ({ ...parseSpec(s), readonlyRefused: reason })),
  ];
  const byShort = new Map<string, OptionDef>();
  const byLong = new Map<string, OptionDef>();
  for (const def of defs) {
    def.shorts.forEach((s) => byShort.set(s, def));
    def.longs.forEach((l) => byLong.set(l, def));
  }
  return { byShort, byLong, style: { ...GNU, ...spec.style } };
}

function allowedHere(def: OptionDef, raw: string, program: string, tool: ShellToolName): OptionDef {
  if (def.refused !== undefined) refuse(`${program} ${raw}: ${def.refused}`);
  if (tool === 'bash_readonly' && def.readonlyRefused !== undefined) refuse(`${program} ${raw} in bash_readonly: ${def.readonlyRefused}`);
  return def;
}

/** The option a long name (or GNU abbreviation of one) means to the program. */
function findLong(table: OptionTable, name: string, program: string, raw: string): OptionDef {
  const exact = table.byLong.get(name);
  if (exact !== undefined) return exact;
  const candidates = table.style.abbreviations
    ? [...new Set([...table.byLong.entries()].filter(([long]) => long.startsWith(name)).map(([, def]) => def))]
    : [];
  const refusedCandidate = candidates.find((def) => def.refused !== undefined);
  if (refusedCandidate !== undefined) return refusedCandidate;
  if (candidates.length === 1) return candidates[0] as OptionDef;
  if (candidates.length > 1) return refuse(`${program} ${raw}: ambiguous option`);
  return refuse(`${program} option ${raw} is not in the allowlist`);
}

class Scanner {
  readonly options: ParsedOption[] = [];
  readonly operands: string[] = [];
  private index = 0;

  constructor(
    private readonly program: string,
    private readonly args: string[],
    private readonly table: OptionTable,
    private readonly tool: ShellToolName,
  ) {}

  private next(raw: string): string {
    const value = this.args[this.index++];
    if (value === undefined) refuse(`${this.program} ${raw} needs a value`);
    return value as string;
  }

  private long(arg: string): void {
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    const def = allowedHere(findLong(this.table, name, this.program, arg), arg, this.program, this.tool);
    if (def.arg === 'none') {
      if (eq >= 0) refuse(`${this.program} ${arg}: the option takes no value`);
      this.options.push({ def, raw: arg });
    } else if (eq >= 0) {
      this.options.push({ def, value: arg.slice(eq + 1), raw: arg });
    } else {
      this.options.push(def.arg === 'required' ? { def, value: this.next(arg), raw: arg } : { def, raw: arg });
    }
  }

  private short(arg: string): void {
    const numeric = this.table.style.numericOption;
    if (numeric !== undefined && /^-\d+$/.test(arg)) {
      const def = this.table.byLong.get(numeric) ?? this.table.byShort.get(numeric);
      if (def === undefined) throw new Error(`numeric option ${numeric} missing`);
      this.options.push({ def, value: arg.slice(1), raw: arg });
      return;
    }
    for (let j = 1; j < arg.length; j++) {
      const letter = arg[j] as string;
      const def = this.table.byShort.get(letter);
      if (def === undefined) refuse(`${this.program} option -${letter} is not in the allowlist`);
      allowedHere(def as OptionDef, `-${letter}`, this.program, this.tool);
      const d = def as OptionDef;
      if (d.arg === 'none') {
        this.options.push({ def: d, raw: `-${letter}` });
        continue;
      }
      if (!this.table.style.attachedValues) {
        this.options.push(d.arg === 'required' ? { def: d, value: this.next(arg), raw: `-${letter}` } : { def: d, raw: `-${letter}` });
        continue;
      }
      const rest = arg.slice(j + 1);
      if (rest !== '') this.options.push({ def: d, value: rest, raw: arg });
      else this.options.push(d.arg === 'required' ? { def: d, value: this.next(arg), raw: arg } : { def: d, raw: arg });
      return;
    }
  }

  run(): ParsedArgs {
    let optionsEnded = false;
    while (this.index < this.args.length) {
      const arg = this.args[this.index++] as string;
      if (optionsEnded || arg === '-' || !arg.startsWith('-')) {
        this.operands.push(arg);
        if (!this.table.style.permute) optionsEnded = true;
      } else if (arg === '--') {
        optionsEnded = true;
      } else if (arg.startsWith('--')) {
        this.long(arg);
      } else {
        this.short(arg);
      }
    }
    return { options: this.options, operands: this.operands };
  }
}

/** Reads arguments the way the program's option parser will, refusing what is unknown or refused. */
export function scanArgs(program: string, args: string[], table: OptionTable, tool: ShellToolName): ParsedArgs {
  return new Scanner(program, args, table, tool).run();
}

export const hasOption = (parsed: ParsedArgs, id: string): boolean => parsed.options.some((o) => o.def.id === id);

export const optionValues = (parsed: ParsedArgs, id: string): string[] =>
  parsed.options.filter((o) => o.def.id === id && o.value !== undefined).map((o) => o.value as string);
