import type { AgentInfo, HealthResponse, RootResponse } from '@mada/protocol';
import { explainFailure } from '../api/explain.js';
import { resolveSettings } from '../config/resolve.js';
import { EXIT_ERROR, EXIT_OK } from '../errors.js';
import type { Terminal } from '../ui/terminal.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

export interface StatusFlags extends ServiceFlags {
  json?: boolean;
}

interface StatusReport {
  url: string;
  reachable: boolean;
  service?: RootResponse;
  health?: HealthResponse;
  agents?: AgentInfo[];
  error?: { message: string; hint?: string };
}

async function gather(flags: StatusFlags): Promise<StatusReport> {
  const { values } = resolveSettings(apiFlag(flags));
  const client = clientFor(values);
  const report: StatusReport = { url: values.apiUrl, reachable: false };
  try {
    report.service = await client.root();
    report.reachable = true;
    // /health is informative only: an older service without it is still usable.
    const health = await client.health().catch(() => undefined);
    if (health !== undefined) report.health = health;
    report.agents = (await client.agents()).agents;
  } catch (error) {
    const failure = explainFailure(error);
    report.error = failure.hint ? { message: failure.message, hint: failure.hint } : { message: failure.message };
  }
  return report;
}

function printReport(report: StatusReport, terminal: Terminal): void {
  const label = (text: string): string => terminal.style('bold', text.padEnd(8));
  if (report.service) {
    const { name, version } = report.service;
    terminal.print(`${label('Service')}${report.url} ${terminal.style('green', 'reachable')} (${name} ${version})`);
  }
  if (report.health) {
    const checks = Object.entries(report.health.checks).map(([name, state]) => `${name} ${state}`);
    const color = report.health.status === 'healthy' ? 'green' : report.health.status === 'degraded' ? 'yellow' : 'red';
    terminal.print(`${label('Health')}${terminal.style(color, report.health.status)} · ${checks.join(' · ')}`);
  }
  if (report.agents) {
    const width = Math.max(...report.agents.map((agent) => agent.name.length));
    report.agents.forEach((agent, index) => {
      terminal.print(`${label(index === 0 ? 'Agents' : '')}${agent.name.padEnd(width)}  ${agent.description}`);
    });
  }
}

/** `mada status`: is the service there, is it healthy, which agents does it offer. */
export async function statusCommand(flags: StatusFlags, terminal: Terminal): Promise<number> {
  const report = await gather(flags);
  if (flags.json) terminal.printJson(report);
  else {
    printReport(report, terminal);
    if (report.error) terminal.error(report.error.message, report.error.hint);
  }
  return report.error ? EXIT_ERROR : EXIT_OK;
}
