/**
 * Model answers as local runtimes hand them over when they do not parse a tool call themselves,
 * one dialect per group, each with the calls it must yield. Tools named are those of `explore`.
 * `prose` entries mention JSON, fences or tool names and must yield no call.
 */
export interface CorpusCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface CorpusEntry {
  dialect: string;
  text: string;
  calls: CorpusCall[];
}

const grep = (pattern: string): CorpusCall => ({ name: 'grep_content', arguments: { pattern } });
const glob = (pattern: string): CorpusCall => ({ name: 'glob_files', arguments: { pattern } });

// DeepSeek writes its markers with full-width bars and U+2581 for spaces.
const ds = (words: string): string => `<\uFF5C${words.split(' ').join('\u2581')}\uFF5C>`;

export const CALL_CORPUS: CorpusEntry[] = [
  { dialect: 'bare JSON', text: '{"name": "grep_content", "arguments": {"pattern": "TODO"}}', calls: [grep('TODO')] },
  { dialect: 'bare JSON', text: 'Searching now.\n{"name": "glob_files", "parameters": {"pattern": "**/*.ts"}}', calls: [glob('**/*.ts')] },
  {
    dialect: 'bare JSON',
    text: '[{"name": "glob_files", "arguments": {"pattern": "*.md"}}, {"name": "grep_content", "arguments": {"pattern": "main"}}]',
    calls: [glob('*.md'), grep('main')],
  },
  { dialect: 'bare JSON', text: "{'name': 'grep_content', 'arguments': {'pattern': 'fixme',},}", calls: [grep('fixme')] },

  { dialect: 'fenced', text: 'Let me look.\n\n```json\n{\n  "name": "glob_files",\n  "arguments": {"pattern": "src/**"}\n}\n```', calls: [glob('src/**')] },
  { dialect: 'fenced', text: '```tool_call\n{"name": "grep_content", "arguments": {"pattern": "export"}}\n```', calls: [grep('export')] },
  {
    dialect: 'fenced',
    text: '```\n{"name": "grep_content", "arguments": {"pattern": "a", "case_sensitive": True}}\n```\n```json\n{"name": "glob_files", "arguments": {"pattern": "b"}}\n```',
    calls: [{ name: 'grep_content', arguments: { pattern: 'a', case_sensitive: true } }, glob('b')],
  },

  { dialect: 'tool_call (Qwen, Hermes)', text: '<tool_call>\n{"name": "grep_content", "arguments": {"pattern": "route"}}\n</tool_call>', calls: [grep('route')] },
  {
    dialect: 'tool_call (Qwen, Hermes)',
    text: 'Two searches.\n<tool_call>\n{"name": "glob_files", "arguments": {"pattern": "*.json"}}\n</tool_call>\n<tool_call>\n{"name": "grep_content", "arguments": {"pattern": "version"}}\n</tool_call>',
    calls: [glob('*.json'), grep('version')],
  },
  { dialect: 'tool_call (Qwen, Hermes)', text: '<tool_call>{"name": "grep_content", "arguments": {"pattern": "x",}}', calls: [grep('x')] },
  {
    dialect: 'tool_call (Qwen3-Coder)',
    text: '<tool_call>\n<function=grep_content>\n<parameter=pattern>\nhandler\n</parameter>\n</function>\n</tool_call>',
    calls: [grep('handler')],
  },

  { dialect: 'function= (Llama 3.x)', text: '<function=glob_files>{"pattern": "**/*.py"}</function>', calls: [glob('**/*.py')] },
  {
    dialect: 'function= (Llama 3.x)',
    text: 'I will search.\n<function=grep_content>{"pattern": "def main"}</function>\n<function=glob_files>{"pattern": "setup.*"}</function>',
    calls: [grep('def main'), glob('setup.*')],
  },
  { dialect: 'function= (Llama 3.x)', text: "<function=grep_content>{'pattern': 'None'}</function>", calls: [grep('None')] },

  { dialect: 'python_tag (Llama 3.1)', text: '<|python_tag|>{"name": "grep_content", "parameters": {"pattern": "class "}}<|eom_id|>', calls: [grep('class ')] },
  {
    dialect: 'python_tag (Llama 3.1)',
    text: '<|python_tag|>{"name": "glob_files", "parameters": {"pattern": "*.toml"}}; {"name": "grep_content", "parameters": {"pattern": "name"}}',
    calls: [glob('*.toml'), grep('name')],
  },
  { dialect: 'python_tag (Llama 3.1)', text: '<|python_tag|>{"name": "glob_files", "parameters": {"pattern": "lib/*",}}<|eot_id|>', calls: [glob('lib/*')] },

  { dialect: 'TOOL_CALLS (Mistral)', text: '[TOOL_CALLS][{"name": "grep_content", "arguments": {"pattern": "async"}}]', calls: [grep('async')] },
  {
    dialect: 'TOOL_CALLS (Mistral)',
    text: '[TOOL_CALLS] [{"name": "glob_files", "arguments": {"pattern": "*.rs"}}, {"name": "grep_content", "arguments": {"pattern": "fn main"}}]',
    calls: [glob('*.rs'), grep('fn main')],
  },
  { dialect: 'TOOL_CALLS (Mistral)', text: '[TOOL_CALLS]grep_content[ARGS]{"pattern": "impl"}', calls: [grep('impl')] },

  {
    dialect: 'DeepSeek',
    text: `${ds('tool calls begin')}${ds('tool call begin')}function${ds('tool sep')}grep_content\n\`\`\`json\n{"pattern": "query"}\n\`\`\`${ds('tool call end')}${ds('tool calls end')}`,
    calls: [grep('query')],
  },
  {
    dialect: 'DeepSeek',
    text: `Looking.${ds('tool calls begin')}${ds('tool call begin')}function${ds('tool sep')}glob_files\n\`\`\`json\n{"pattern": "*.go"}\n\`\`\`${ds('tool call end')}\n${ds('tool call begin')}function${ds('tool sep')}grep_content\n\`\`\`json\n{"pattern": "func"}\n\`\`\`${ds('tool call end')}${ds('tool calls end')}`,
    calls: [glob('*.go'), grep('func')],
  },
  {
    dialect: 'DeepSeek',
    text: `${ds('tool calls begin')}${ds('tool call begin')}grep_content${ds('tool sep')}{"pattern": "select"}${ds('tool call end')}${ds('tool calls end')}`,
    calls: [grep('select')],
  },

  {
    dialect: 'gpt-oss',
    text: '<|start|>assistant<|channel|>commentary to=functions.grep_content <|constrain|>json<|message|>{"pattern": "render"}<|call|>',
    calls: [grep('render')],
  },
  {
    dialect: 'gpt-oss',
    text: '<|channel|>analysis<|message|>I need grep_content here.<|end|><|start|>assistant<|channel|>commentary to=functions.glob_files <|constrain|>json<|message|>{"pattern": "docs/**"}<|call|>',
    calls: [glob('docs/**')],
  },
  { dialect: 'gpt-oss', text: '<|channel|>commentary to=functions.grep_content json<|message|>{"pattern": "lint",}<|call|>', calls: [grep('lint')] },

  {
    dialect: 'reasoning first',
    text: '<think>\nThe user wants a search. I could write {"name": "glob_files", "arguments": {"pattern": "*"}} but grep_content is better.\n</think>\n\n<tool_call>{"name": "grep_content", "arguments": {"pattern": "needle"}}</tool_call>',
    calls: [grep('needle')],
  },
  {
    dialect: 'broken JSON',
    text: '{"name": "grep_content", "arguments": {"pattern": "line one\nline two", "case_sensitive": False}}',
    calls: [{ name: 'grep_content', arguments: { pattern: 'line one\nline two', case_sensitive: false } }],
  },
];

/** Answers that talk about JSON, fences or calls without making one. */
export const PROSE_CORPUS: string[] = [
  'The package.json says {"name": "mada", "version": "1.1.0"}, so the name is mada.',
  'To configure it, write:\n\n```json\n{"port": 8000, "debug": false}\n```\n\nand restart.',
  'A tool call looks like {"name": "...", "arguments": {...}} in general; here no call is needed.',
  'Here is the loop:\n```python\nfor x in items:\n    print({"name": x})\n```\nThat is all.',
  'The function `grep_content` searches file contents; the [TOOL_CALLS] token is Mistral-specific.',
];
