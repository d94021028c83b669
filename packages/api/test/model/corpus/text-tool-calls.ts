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

/**
 * Answers a hostile repository could steer a model into writing (or a model stuck in a loop
 * writes by itself), each built to make a naive search of the text take time quadratic in its
 * length: unclosed brackets and markers by the thousand, regular expressions that retry from
 * every position, JSON whose repair copies its output once per fix. Each ends with one real
 * call, which must still be found; the `answer` is about a megabyte, what a local runtime with a
 * large output limit really sends.
 */
export interface HostileEntry {
  name: string;
  answer: () => string;
  calls: CorpusCall[];
}

const MB = 1 << 20;
/** `unit` repeated to about `size` characters. */
const filled = (unit: string, size = MB): string => unit.repeat(Math.ceil(size / unit.length));
const closingCall = '\n<tool_call>{"name": "grep_content", "arguments": {"pattern": "needle"}}</tool_call>';

export const HOSTILE_CORPUS: HostileEntry[] = [
  { name: 'unclosed braces', answer: () => filled('{') + closingCall, calls: [grep('needle')] },
  { name: 'unclosed brackets before objects', answer: () => filled('[{') + closingCall, calls: [grep('needle')] },
  { name: 'braces and quotes in turn', answer: () => filled('{"') + closingCall, calls: [grep('needle')] },
  { name: 'braces, quotes and escapes', answer: () => filled('{"\\') + '"' + closingCall, calls: [grep('needle')] },
  { name: 'unclosed Mistral markers', answer: () => filled('[TOOL_CALLS][') + closingCall, calls: [grep('needle')] },
  { name: 'Mistral names without arguments', answer: () => filled('[TOOL_CALLS]x[ARGS]') + closingCall, calls: [grep('needle')] },
  { name: 'gpt-oss names with unclosed arguments', answer: () => filled('to=functions.x{') + closingCall, calls: [grep('needle')] },
  { name: 'gpt-oss names without arguments', answer: () => filled('to=functions.x ') + closingCall, calls: [grep('needle')] },
  { name: 'empty reasoning blocks', answer: () => filled('<think></think>') + closingCall, calls: [grep('needle')] },
  { name: 'unclosed tool_call tags', answer: () => closingCall + filled('<tool_call>{'), calls: [grep('needle')] },
  { name: 'fences opening unclosed JSON', answer: () => filled('```json\n{') + '```' + closingCall, calls: [grep('needle')] },
  {
    name: 'Qwen3-Coder parameters never closed',
    answer: () => `<function=grep_content><parameter=pattern>needle</parameter>${filled('<parameter=a')}</function>`,
    calls: [grep('needle')],
  },
  {
    name: 'DeepSeek call with a long run of spaces',
    answer: () => `<|tool_call_begin|>grep_content<|tool_sep|>{"pattern": "needle"${' '.repeat(MB)}}<|tool_call_end|>`,
    calls: [grep('needle')],
  },
  {
    name: 'JSON whose repair inserts a comma per element',
    answer: () => `<tool_call>{"name": "grep_content", "arguments": {"pattern": "a", "n": [${filled('1 ', 256 * 1024)}]}}</tool_call>${closingCall}`,
    calls: [grep('needle')],
  },
  {
    name: 'many calls each needing a costly repair',
    // Each short enough to be repaired, naming a tool not offered: the repair is paid, no call made.
    answer: () => filled(`<tool_call>{"name": "not_offered", "arguments": {"n": [${filled('1 ', 30 * 1024)}]}}</tool_call>\n`) + closingCall,
    calls: [grep('needle')],
  },
  { name: 'a long run of spaces left after the call', answer: () => `${closingCall}${' '.repeat(MB)}x`, calls: [grep('needle')] },
  {
    name: 'deep JSON with a long string left open',
    answer: () => `${closingCall}\n<tool_call>${filled('{"a":', 16 * 1024)}"${filled('x')}`,
    calls: [grep('needle')],
  },
];

/** Long answers that must still parse: the bounds on repair leave them alone. */
export const LONG_CALL_CORPUS: CorpusEntry[] = [
  {
    dialect: 'a large file written with raw line breaks in its content',
    text: `<tool_call>{"name": "write_file", "arguments": {"file_path": "big.txt", "content": "${filled('line\n', 512 * 1024)}"}}</tool_call>`,
    calls: [{ name: 'write_file', arguments: { file_path: 'big.txt', content: filled('line\n', 512 * 1024) } }],
  },
  {
    dialect: 'many calls, each repaired',
    text: "<tool_call>{'name': 'grep_content', 'arguments': {'pattern': 'x',},}</tool_call>\n".repeat(800),
    calls: Array.from({ length: 800 }, () => grep('x')),
  },
];
