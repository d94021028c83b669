/**
 * Linear-time matching for glob-shaped patterns. A backtracking regular expression built from a
 * glob such as `**\/*a*a*a*a*a*b` takes time exponential in the number of stars on a long path, and
 * the service would stop answering while it ran; the globs come from the agent and from ignore
 * files in a repository that may be hostile. Here a pattern becomes a Thompson automaton that is
 * run as a lazily built DFA: each character of the text costs one table look-up once the states it
 * meets have been seen, and at most one pass over the automaton's states before that.
 */

/** Whether one character (a Unicode code point) is accepted. */
export type CodePointTest = (codePoint: number) => boolean;

/** One piece of a pattern; a pattern is a sequence of them. */
export type GlobElement =
  /** Exactly one character passing `test`; `literal` when only that code point passes. */
  | { kind: 'one'; test: CodePointTest; literal?: number }
  /** Any number of characters (none included), each passing `test`. */
  | { kind: 'many'; test: CodePointTest }
  /** One of several sequences. */
  | { kind: 'choice'; options: GlobElement[][] };

export interface GlobMatcher {
  /** Whether the whole of `text` matches. */
  test(text: string): boolean;
}

type NfaState = { kind: 'test'; test: CodePointTest; next: number } | { kind: 'split'; next: number[] } | { kind: 'accept' };

interface DfaState {
  /** The automaton's `test` states this DFA state stands for, ascending. */
  tests: readonly number[];
  accepting: boolean;
  /** Transitions already computed: code points below 128 by index, the rest by map. */
  ascii: (DfaState | undefined)[];
  other: Map<number, DfaState>;
}

/**
 * Wildcards a pattern may hold. Matching stays linear in the text, but each new state set costs up
 * to the pattern's size, so callers refuse patterns beyond this (no one writes such a glob by hand).
 */
export const MAX_GLOB_WILDCARDS = 64;

/** DFA states kept per pattern before the cache starts over; bounds memory, never correctness. */
const DFA_CACHE_LIMIT = 4096;

export const literalElement = (codePoint: number): GlobElement => ({ kind: 'one', test: (c) => c === codePoint, literal: codePoint });

/** The literal characters every match must end with, as a string ('' when there are none). */
function requiredSuffix(elements: readonly GlobElement[]): string {
  const codePoints: number[] = [];
  for (let i = elements.length - 1; i >= 0; i--) {
    const element = elements[i] as GlobElement;
    if (element.kind !== 'one' || element.literal === undefined) break;
    codePoints.unshift(element.literal);
  }
  return codePoints.map((codePoint) => String.fromCodePoint(codePoint)).join('');
}

function buildNfa(elements: readonly GlobElement[]): NfaState[] {
  const states: NfaState[] = [{ kind: 'accept' }];
  const add = (state: NfaState): number => states.push(state) - 1;
  // Built from the end backwards, so each piece knows where it continues.
  const sequence = (pieces: readonly GlobElement[], next: number): number => {
    let start = next;
    for (let i = pieces.length - 1; i >= 0; i--) start = element(pieces[i] as GlobElement, start);
    return start;
  };
  const element = (piece: GlobElement, next: number): number => {
    if (piece.kind === 'one') return add({ kind: 'test', test: piece.test, next });
    if (piece.kind === 'choice') return add({ kind: 'split', next: piece.options.map((option) => sequence(option, next)) });
    const loop: NfaState = { kind: 'split', next: [] };
    const loopId = add(loop);
    loop.next = [add({ kind: 'test', test: piece.test, next: loopId }), next];
    return loopId;
  };
  const start = sequence(elements, 0);
  // The start state goes last so that `states.length - 1` finds it.
  states.push({ kind: 'split', next: [start] });
  return states;
}

class LazyDfa {
  private readonly cache = new Map<string, DfaState>();
  private readonly seen: Uint32Array;
  private generation = 0;
  private start: DfaState;

  constructor(private readonly states: readonly NfaState[]) {
    this.seen = new Uint32Array(states.length);
    this.start = this.stateFor([states.length - 1]);
  }

  matches(text: string): boolean {
    let state = this.start;
    for (let i = 0; i < text.length; i++) {
      let codePoint = text.charCodeAt(i);
      if (codePoint >= 0xd800 && codePoint <= 0xdbff && i + 1 < text.length) {
        const low = text.charCodeAt(i + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          codePoint = ((codePoint - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
          i++;
        }
      }
      const known = codePoint < 128 ? state.ascii[codePoint] : state.other.get(codePoint);
      state = known ?? this.step(state, codePoint);
      // No state left that reads a character: only the end of the text can still match.
      if (state.tests.length === 0) return state.accepting && i === text.length - 1;
    }
    return state.accepting;
  }

  private step(from: DfaState, codePoint: number): DfaState {
    const targets: number[] = [];
    for (const id of from.tests) {
      const state = this.states[id] as Extract<NfaState, { kind: 'test' }>;
      if (state.test(codePoint)) targets.push(state.next);
    }
    const to = this.stateFor(targets);
    if (this.cache.size > DFA_CACHE_LIMIT) this.startOver();
    if (codePoint < 128) from.ascii[codePoint] = to;
    else from.other.set(codePoint, to);
    return to;
  }

  /** The DFA state for the epsilon closure of `roots`, from the cache when it was met before. */
  private stateFor(roots: readonly number[]): DfaState {
    const generation = ++this.generation;
    const tests: number[] = [];
    let accepting = false;
    const stack = [...roots];
    while (stack.length > 0) {
      const id = stack.pop() as number;
      if (this.seen[id] === generation) continue;
      this.seen[id] = generation;
      const state = this.states[id] as NfaState;
      if (state.kind === 'split') for (const next of state.next) stack.push(next);
      else if (state.kind === 'test') tests.push(id);
      else accepting = true;
    }
    tests.sort((a, b) => a - b);
    const key = `${accepting ? 'a' : ''}${tests.join(',')}`;
    let state = this.cache.get(key);
    if (!state) {
      state = { tests, accepting, ascii: [], other: new Map() };
      this.cache.set(key, state);
    }
    return state;
  }

  /** Forgets every computed transition (a pattern met too many distinct state sets). */
  private startOver(): void {
    for (const state of this.cache.values()) {
      state.ascii = [];
      state.other.clear();
    }
    this.cache.clear();
    this.cache.set(`${this.start.accepting ? 'a' : ''}${this.start.tests.join(',')}`, this.start);
  }
}

/** A matcher for whole texts against `elements`, in time linear in the text's length. */
export function compileGlobElements(elements: readonly GlobElement[]): GlobMatcher {
  const dfa = new LazyDfa(buildNfa(elements));
  const suffix = requiredSuffix(elements);
  // Most paths fail on their last characters (`*.ts`, `**/name`): checking those first is cheap.
  return { test: (text) => (suffix === '' || text.endsWith(suffix)) && dfa.matches(text) };
}
