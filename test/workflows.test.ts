import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT } from './helpers/run-script.js';

interface Step {
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}

interface Job {
  needs?: string | string[];
  services?: Record<string, unknown>;
  strategy?: { matrix: Record<string, string[]> };
  steps: Step[];
}

interface Workflow {
  on: { push: { tags: string[] } };
  env?: Record<string, string>;
  jobs: Record<string, Job>;
}

const WORKFLOWS = join(REPO_ROOT, '.github/workflows');
const VALIDATOR = join(REPO_ROOT, 'node_modules/.bin/action-validator');

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mada-workflow-'));
  temps.push(dir);
  return dir;
}

const readWorkflow = (name: string): Workflow => parse(readFileSync(join(WORKFLOWS, name), 'utf8')) as Workflow;
const needsOf = (job: Job): string[] => (job.needs === undefined ? [] : [job.needs].flat());

/** Every job the given one waits for, directly or through others. */
function ancestors(workflow: Workflow, name: string): Set<string> {
  const seen = new Set<string>();
  const visit = (job: string): void => {
    for (const need of needsOf(workflow.jobs[job]!)) {
      if (!seen.has(need)) {
        seen.add(need);
        visit(need);
      }
    }
  };
  visit(name);
  return seen;
}

const validate = (file: string) => spawnSync(VALIDATOR, [file], { encoding: 'utf8' });

/**
 * Runs a workflow's tag-check step as the runner would (bash -e, GITHUB_OUTPUT set), in this
 * repository's checkout but against the package files under `packages`.
 */
function runCheckStep(step: Step, tag: string, packages: string): { status: number | null; output: string } {
  const output = join(packages, 'github-output');
  writeFileSync(output, '');
  const result = spawnSync('bash', ['-e', '-c', step.run!], {
    cwd: REPO_ROOT,
    env: { ...process.env, TAG: tag, GITHUB_OUTPUT: output, MADA_REPO_ROOT: packages },
    encoding: 'utf8',
  });
  return { status: result.status, output: readFileSync(output, 'utf8') };
}

function packagesAt(api: string, cli: string): string {
  const root = scratch();
  for (const [name, version] of [['api', api], ['cli', cli]]) {
    mkdirSync(join(root, 'packages', name!), { recursive: true });
    writeFileSync(join(root, 'packages', name!, 'package.json'), JSON.stringify({ name: `@mada/${name}`, version }));
  }
  return root;
}

describe('the workflow validator', () => {
  it('passes every workflow in .github/workflows', () => {
    const files = readdirSync(WORKFLOWS);
    expect(files.sort()).toEqual(['release-api.yml', 'release-cli.yml']);
    for (const file of files) expect(validate(join(WORKFLOWS, file))).toMatchObject({ status: 0 });
  });

  it('fails a workflow with a misspelt key or a job that needs a missing one', () => {
    const dir = scratch();
    const broken = readFileSync(join(WORKFLOWS, 'release-api.yml'), 'utf8').replace('needs: [version, test]', 'needs: [version, tests]');
    writeFileSync(join(dir, 'needs.yml'), broken);
    writeFileSync(join(dir, 'key.yml'), readFileSync(join(WORKFLOWS, 'release-cli.yml'), 'utf8').replace('runs-on:', 'run-on:'));
    for (const file of ['needs.yml', 'key.yml']) expect(validate(join(dir, file)).status).toBe(1);
  });

  it('finds the registry named once, in env.REGISTRY, and no other host', () => {
    const text = readdirSync(WORKFLOWS).map((file) => readFileSync(join(WORKFLOWS, file), 'utf8')).join('\n');
    expect(text.match(/[a-z0-9-]+\.(io|org|com|dev)\b/gi)).toEqual(['ghcr.io']);
    expect(readWorkflow('release-api.yml').env!.REGISTRY).toBe('ghcr.io');
  });
});

describe.each([
  ['release-api.yml', 'api', 'api/v*'],
  ['release-cli.yml', 'cli', 'cli/v*'],
])('%s', (file, release, pattern) => {
  const workflow = readWorkflow(file);
  const check = workflow.jobs.version!.steps.find((step) => step.id === 'check')!;

  it(`runs on ${pattern} tags only`, () => {
    expect(workflow.on).toEqual({ push: { tags: [pattern] } });
  });

  it('makes every other job wait for the version check', () => {
    for (const name of Object.keys(workflow.jobs).filter((job) => job !== 'version')) {
      expect(ancestors(workflow, name)).toContain('version');
    }
    expect(needsOf(workflow.jobs.version!)).toEqual([]);
  });

  it('has the version check fail on a tag the package.json does not carry', () => {
    const packages = packagesAt('1.1.0', '1.0.0');
    expect(runCheckStep(check, `${release}/v9.9.9`, packages)).toEqual({ status: 1, output: '' });
  });

  it('has the version check pass the matching tag on and hand its version to later jobs', () => {
    const packages = packagesAt(release === 'api' ? '1.2.0' : '1.0.0', release === 'cli' ? '1.2.0' : '1.0.0');
    expect(runCheckStep(check, `${release}/v1.2.0`, packages)).toEqual({ status: 0, output: 'version=1.2.0\n' });
  });
});

describe('release-api.yml', () => {
  const workflow = readWorkflow('release-api.yml');
  const steps = workflow.jobs.image!.steps;
  const step = (action: string): Step => steps.find((candidate) => candidate.uses?.startsWith(`${action}@`))!;

  it('tests with a PostgreSQL service container before building the image', () => {
    expect(workflow.jobs.test!.services).toHaveProperty('postgres');
    expect(workflow.jobs.test!.steps.map((s) => s.run)).toContain('sudo env "PATH=$PATH" CI=true bash .ci/run');
    expect(ancestors(workflow, 'image')).toEqual(new Set(['version', 'test']));
  });

  it("builds the Dockerfile for amd64 and arm64 and pushes it as the tag's version and latest", () => {
    expect(steps.map((s) => s.uses?.replace(/@.*/, ''))).toEqual(
      expect.arrayContaining(['docker/setup-qemu-action', 'docker/setup-buildx-action', 'docker/login-action']),
    );
    expect(step('docker/build-push-action').with).toMatchObject({ file: 'Dockerfile', platforms: 'linux/amd64,linux/arm64', push: true });
    const tags = String(step('docker/metadata-action').with!.tags).trim().split('\n');
    expect(tags).toEqual(['type=raw,value=${{ needs.version.outputs.version }}', 'type=raw,value=latest']);
    expect(step('docker/login-action').with).toMatchObject({ registry: '${{ env.REGISTRY }}', password: '${{ secrets.GITHUB_TOKEN }}' });
  });
});

describe('release-cli.yml', () => {
  const workflow = readWorkflow('release-cli.yml');
  const steps = workflow.jobs.publish!.steps;

  it('publishes to npm only with an NPM_TOKEN, and otherwise attaches the packed tarball to a release', () => {
    const publish = steps.find((s) => s.run?.includes('npm publish'))!;
    const attach = steps.find((s) => s.run?.includes('gh release create'))!;
    expect(publish.if).toBe("env.NPM_TOKEN != ''");
    expect(attach.if).toBe("env.NPM_TOKEN == ''");
    for (const s of [publish, attach]) expect(s.run).toContain('"$TARBALL"');
    expect(steps.find((s) => s.id === 'pack')!.run).toContain('npm pack --workspace @mada/cli');
  });

  it("runs the client's tests on Node 20 and 24.18 (the last 24 better-sqlite3 12 survives) before publishing", () => {
    expect(workflow.jobs.test!.strategy!.matrix.node).toEqual(['20', '24.18']);
    expect(workflow.jobs.test!.steps.map((s) => s.run)).toContain('sudo env "PATH=$PATH" CI=true npx vitest run packages/cli');
    expect(ancestors(workflow, 'publish')).toEqual(new Set(['version', 'test']));
  });
});
