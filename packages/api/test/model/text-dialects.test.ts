import { describe, expect, it } from 'vitest';
import { extractTextToolCalls } from '../../src/model/text-tool-calls.js';
import { CALL_CORPUS, HOSTILE_CORPUS, LONG_CALL_CORPUS, PROSE_CORPUS } from './corpus/text-tool-calls.js';

const TOOLS = ['read_file', 'glob_files', 'grep_content', 'bash_readonly'];
const simple = (text: string) => extractTextToolCalls(text, TOOLS).calls.map((c) => ({ name: c.name, arguments: c.arguments }));

describe('text tool-call dialects', () => {
  it('covers every dialect with at least three answers', () => {
    const counts = new Map<string, number>();
    for (const entry of CALL_CORPUS) {
      const family = entry.dialect.replace(/ \(.*\)$/, '');
      counts.set(family, (counts.get(family) ?? 0) + 1);
    }
    for (const family of ['bare JSON', 'fenced', 'tool_call', 'function=', 'python_tag', 'TOOL_CALLS', 'DeepSeek', 'gpt-oss']) {
      expect(counts.get(family) ?? 0, family).toBeGreaterThanOrEqual(3);
    }
  });

  it.each(CALL_CORPUS.map((entry) => [entry.dialect, entry] as const))('reads %s', (_dialect, entry) => {
    expect(simple(entry.text)).toEqual(entry.calls);
  });

  it.each(PROSE_CORPUS.map((text) => [text.slice(0, 40), text] as const))('finds no call in prose: %s', (_start, text) => {
    expect(extractTextToolCalls(text, TOOLS)).toEqual({ calls: [], text });
  });

  it('leaves the prose around a call and drops the call and the reasoning', () => {
    const found = extractTextToolCalls(
      '<think>maybe grep_content</think>\n\nI will search.\n<function=grep_content>{"pattern": "a"}</function>\nBack soon.',
      TOOLS,
    );
    expect(found.text).toBe('I will search.\n\nBack soon.');
  });

  it('repairs Python literals, trailing commas, single quotes and raw newlines', () => {
    expect(simple("{'name': 'grep_content', 'arguments': {'pattern': 'a\nb', 'case_sensitive': True, 'path': None,},}")).toEqual([
      { name: 'grep_content', arguments: { pattern: 'a\nb', case_sensitive: true, path: null } },
    ]);
  });

  it('ignores calls to tools that are not offered, in every dialect', () => {
    for (const entry of CALL_CORPUS) {
      expect(extractTextToolCalls(entry.text, ['read_file']).calls, entry.dialect).toEqual([]);
    }
  });
});

describe('text tool-call search on hostile answers', () => {
  const ALL_TOOLS = [...TOOLS, 'write_file'];

  // Before the search was made linear, each of these took from seconds to many minutes.
  it.each(HOSTILE_CORPUS.map((entry) => [entry.name, entry] as const))('finds the one real call after %s', (_name, entry) => {
    expect(simple(entry.answer())).toEqual(entry.calls);
  });

  it.each(LONG_CALL_CORPUS.map((entry) => [entry.dialect, entry] as const))('still reads %s', (_dialect, entry) => {
    const calls = extractTextToolCalls(entry.text, ALL_TOOLS).calls.map((c) => ({ name: c.name, arguments: c.arguments }));
    expect(calls).toEqual(entry.calls);
  });
});
