import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/run-script.js';

// No Docker engine runs the tests, so these read the deployment files for the mistakes that
// would only show when an image is built or started.

const read = (path: string): string => readFileSync(join(REPO_ROOT, path), 'utf8');
const dockerfile = read('Dockerfile');
const runtimeStage = dockerfile.slice(dockerfile.indexOf('AS runtime'));

/** What the runtime stage's COPY lines create, relative to /app ("dir/" as a target keeps the name). */
const runtimeCopies = [...runtimeStage.matchAll(/^COPY (?:--\S+ )*(\S+) (\S+)$/gm)].map(([, source, target]) =>
  posix.normalize(target!.endsWith('/') ? target! + posix.basename(source!) : target!),
);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(REPO_ROOT, join(entry.parentPath, entry.name)));
}

describe('Dockerfile', () => {
  it('copies the manifest of every workspace before npm ci, which checks the lockfile against them all', () => {
    const workspaces = (JSON.parse(read('package.json')) as { workspaces: string[] }).workspaces;
    for (const workspace of workspaces) {
      expect(dockerfile).toContain(`COPY ${workspace}/package.json ${workspace}/`);
    }
  });

  it('puts every file the service reads beside its code at run time into the runtime image', () => {
    // dist/ mirrors src/, so a path the source resolves from import.meta.url is the same there.
    const needed = sourceFiles('packages/api/src').flatMap((file) =>
      [...read(file).matchAll(/new URL\('([^']+)', import\.meta\.url\)/g)].map((m) => posix.join(dirname(file), m[1]!)),
    );
    expect(needed.length).toBeGreaterThan(0);
    for (const path of needed) {
      expect(runtimeCopies.some((copied) => path === copied || path.startsWith(`${copied}/`)), path).toBe(true);
    }
    for (const dist of ['packages/api/dist', 'packages/protocol/dist', 'node_modules']) expect(runtimeCopies).toContain(dist);
  });

  it('runs as a non-root user on port 8086 with a health check against /health', () => {
    expect(runtimeStage).toMatch(/^USER 10001:10001$/m);
    expect(runtimeStage).toMatch(/PORT=8086/);
    expect(runtimeStage).toMatch(/HOST=0\.0\.0\.0/);
    expect(runtimeStage).toMatch(/^EXPOSE 8086$/m);
    expect(runtimeStage).toMatch(/^HEALTHCHECK .*\n\s+CMD \["node", "-e", "fetch\(.*\/health'/m);
  });
});

describe('SearXNG settings', () => {
  it('enable the JSON format the web_search tool asks for', () => {
    expect(read('deploy/searxng/settings.yml')).toMatch(/^search:\n(?: {2}.*\n)*? {2}formats:\n {4}- html\n {4}- json$/m);
  });
});
