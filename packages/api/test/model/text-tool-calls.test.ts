import { describe, expect, it } from 'vitest';
import { extractTextToolCalls, type TextToolCall } from '../../src/model/text-tool-calls.js';

const TOOLS = ['read_file', 'glob_files', 'grep_content'];

function sequentialIds(): () => string {
  let n = 0;
  return () => `t${++n}`;
}

const extract = (text: string, tools: readonly string[] = TOOLS) => extractTextToolCalls(text, tools, { newId: sequentialIds() });
const simple = (calls: readonly TextToolCall[]) => calls.map((c) => ({ name: c.name, arguments: c.arguments }));

describe('extractTextToolCalls', () => {
  describe('a bare JSON object', () => {
    it('is a call when it is the whole answer', () => {
      const found = extract('{"name": "read_file", "arguments": {"file_path": "/w/a.ts"}}');
      expect(found.calls).toEqual([{ id: 't1', name: 'read_file', arguments: { file_path: '/w/a.ts' }, rawArguments: '{"file_path":"/w/a.ts"}' }]);
      expect(found.text).toBe('');
    });

    it('is a call inside prose, and the prose stays', () => {
      const found = extract('I will read the file first.\n{"name": "read_file", "arguments": {"file_path": "/w/a.ts"}}\nThen I will summarise.');
      expect(simple(found.calls)).toEqual([{ name: 'read_file', arguments: { file_path: '/w/a.ts' } }]);
      expect(found.text).toBe('I will read the file first.\n\nThen I will summarise.');
    });

    it.each([
      ['parameters', '{"name": "glob_files", "parameters": {"pattern": "**/*.ts"}}'],
      ['args', '{"name": "glob_files", "args": {"pattern": "**/*.ts"}}'],
      ['a function wrapper', '{"type": "function", "function": {"name": "glob_files", "arguments": {"pattern": "**/*.ts"}}}'],
      ['arguments as a JSON string', '{"name": "glob_files", "arguments": "{\\"pattern\\": \\"**/*.ts\\"}"}'],
    ])('accepts %s', (_form, text) => {
      expect(simple(extract(text).calls)).toEqual([{ name: 'glob_files', arguments: { pattern: '**/*.ts' } }]);
    });

    it('reads several calls, one per line or as an array, in order', () => {
      const lines = extract('{"name": "read_file", "arguments": {"file_path": "/a"}}\n{"name": "grep_content", "arguments": {"pattern": "TODO"}}');
      expect(lines.calls.map((c) => [c.id, c.name])).toEqual([
        ['t1', 'read_file'],
        ['t2', 'grep_content'],
      ]);
      const array = extract('[{"name": "read_file", "arguments": {"file_path": "/a"}}, {"name": "read_file", "arguments": {"file_path": "/b"}}]');
      expect(simple(array.calls).map((c) => c.arguments)).toEqual([{ file_path: '/a' }, { file_path: '/b' }]);
      expect(array.text).toBe('');
    });

    it('handles braces inside string arguments', () => {
      const found = extract('{"name": "grep_content", "arguments": {"pattern": "function \\\\w+\\\\(\\\\) {", "glob": "*.{ts,js}"}}');
      expect(found.calls[0]?.arguments).toEqual({ pattern: 'function \\w+\\(\\) {', glob: '*.{ts,js}' });
    });
  });

  describe('a fenced block', () => {
    it('is a call when it holds only a call', () => {
      const text = 'Let me check.\n\n```json\n{\n  "name": "read_file",\n  "arguments": {"file_path": "/w/a.ts"}\n}\n```';
      const found = extract(text);
      expect(simple(found.calls)).toEqual([{ name: 'read_file', arguments: { file_path: '/w/a.ts' } }]);
      expect(found.text).toBe('Let me check.');
    });

    it('is recognised without a language, and several blocks give several calls', () => {
      const found = extract('```\n{"name": "read_file", "arguments": {"file_path": "/a"}}\n```\n\n```tool_call\n{"name": "read_file", "arguments": {"file_path": "/b"}}\n```');
      expect(found.calls.map((c) => c.arguments)).toEqual([{ file_path: '/a' }, { file_path: '/b' }]);
    });

    it('in another language is code, even when it looks like a call', () => {
      const text = '```python\ncall = {"name": "read_file", "arguments": {"file_path": "/a"}}\n```';
      expect(extract(text)).toEqual({ calls: [], text });
    });

    it('holding JSON that is not only calls stays text, inside included', () => {
      const text = 'The config:\n```json\n{"tools": [{"name": "read_file", "arguments": {"file_path": "/a"}}], "version": 2}\n```';
      expect(extract(text)).toEqual({ calls: [], text });
    });
  });

  describe('<tool_call> tags', () => {
    it('give one call per tag', () => {
      const text = 'Reading both files.\n<tool_call>\n{"name": "read_file", "arguments": {"file_path": "/a"}}\n</tool_call>\n<tool_call>\n{"name": "read_file", "arguments": {"file_path": "/b"}}\n</tool_call>';
      const found = extract(text);
      expect(found.calls.map((c) => c.arguments)).toEqual([{ file_path: '/a' }, { file_path: '/b' }]);
      expect(found.text).toBe('Reading both files.');
    });

    it('accept a last tag that was never closed', () => {
      const found = extract('<tool_call>\n{"name": "glob_files", "arguments": {"pattern": "src/**"}}');
      expect(simple(found.calls)).toEqual([{ name: 'glob_files', arguments: { pattern: 'src/**' } }]);
    });

    it('holding something else stay text', () => {
      const text = '<tool_call>I would call read_file on "/a" here</tool_call>';
      expect(extract(text)).toEqual({ calls: [], text });
    });
  });

  describe('conservative', () => {
    it('leaves a call to an unknown tool as text', () => {
      const text = '{"name": "delete_repo", "arguments": {"really": true}}';
      expect(extract(text)).toEqual({ calls: [], text });
      const tagged = '<tool_call>{"name": "run_shell", "arguments": {"cmd": "rm"}}</tool_call>';
      expect(extract(tagged)).toEqual({ calls: [], text: tagged });
    });

    it('leaves an array with one unknown tool entirely as text', () => {
      const text = '[{"name": "read_file", "arguments": {"file_path": "/a"}}, {"name": "nope", "arguments": {}}]';
      expect(extract(text)).toEqual({ calls: [], text });
    });

    it('repairs the JSON local models break, in every form', () => {
      for (const text of [
        '```json\n{"name": "read_file", "arguments": {"file_path": "/a"}\n```',
        '<tool_call>{"name": "read_file", "arguments": {file_path: "/a"}}</tool_call>',
        "{'name': 'read_file', 'arguments': {'file_path': '/a',},}",
        '{"name": "read_file", "arguments": {"file_path": "/a", "verbose": True, "limit": None}}',
      ]) {
        expect(simple(extract(text).calls)[0]?.arguments).toMatchObject({ file_path: '/a' });
      }
      const newline = extract('{"name": "grep_content", "arguments": {"pattern": "a\nb"}}'.replace('\\n', '\n'));
      expect(newline.calls[0]?.arguments).toEqual({ pattern: 'a\nb' });
    });

    it('leaves arguments that are text and not an object as text', () => {
      const text = '{"name": "read_file", "arguments": "not json at all"}';
      expect(extract(text)).toEqual({ calls: [], text });
    });

    it('leaves prose with JSON alone, even JSON that names a tool', () => {
      for (const text of [
        'The package.json says {"name": "mada", "version": "1.1.0"}.',
        'Tools are described like {"name": "read_file", "description": "Reads a file"}.',
        'The response was {"result": {"name": "read_file", "arguments": {"file_path": "/a"}}} as expected.',
        'Use `{ "name": read_file }` style objects in {braces}.',
      ]) {
        expect(extract(text)).toEqual({ calls: [], text });
      }
    });

    it('finds nothing when no tools are offered', () => {
      const text = '{"name": "read_file", "arguments": {"file_path": "/a"}}';
      expect(extract(text, [])).toEqual({ calls: [], text });
    });

    it('gives unique ids by default', () => {
      const { calls } = extractTextToolCalls('{"name": "read_file", "arguments": {"file_path": "/a"}}\n{"name": "read_file", "arguments": {"file_path": "/b"}}', TOOLS);
      expect(new Set(calls.map((c) => c.id)).size).toBe(2);
      expect(calls[0]?.id).toMatch(/^call_[0-9a-f]{16}$/);
    });
  });

  describe('mixed forms', () => {
    it('returns the calls in the order they appear, whatever their form', () => {
      const text = [
        'First:',
        '{"name": "glob_files", "arguments": {"pattern": "*.md"}}',
        '```json\n{"name": "read_file", "arguments": {"file_path": "/a"}}\n```',
        '<tool_call>{"name": "grep_content", "arguments": {"pattern": "x"}}</tool_call>',
        'Done.',
      ].join('\n');
      const found = extract(text);
      expect(found.calls.map((c) => c.name)).toEqual(['glob_files', 'read_file', 'grep_content']);
      expect(found.text).toBe('First:\n\nDone.');
    });
  });
});
