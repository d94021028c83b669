import { bashReadonlyTool } from './bash-readonly.js';
import { bashTool } from './bash.js';
import { editFileTool } from './edit-file.js';
import { globFilesTool } from './glob-files.js';
import { grepContentTool } from './grep-content.js';
import { readFileTool } from './read-file.js';
import { spawnAgentTool } from './spawn-agent.js';
import type { Tool } from './tool.js';
import { webSearchTool } from './web-search.js';
import { writeFileTool } from './write-file.js';

/** Every tool the service offers, by name. Agents pick their subsets (agents/definitions.ts). */
export function createToolRegistry(): ReadonlyMap<string, Tool> {
  const tools: Tool[] = [
    readFileTool,
    globFilesTool,
    grepContentTool,
    bashReadonlyTool,
    editFileTool,
    writeFileTool,
    bashTool,
    webSearchTool,
    spawnAgentTool,
  ];
  return new Map(tools.map((tool) => [tool.name, tool]));
}
