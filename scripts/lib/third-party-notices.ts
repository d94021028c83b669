import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';

interface BundledPackage {
  name: string;
  version: string;
  license: string;
  text?: string;
}

const LICENSE_FILE = /^(licen[cs]e|copying)(\b|[-._])/i;

/** node_modules/<name> or node_modules/@scope/<name>: the innermost package a bundled file is in. */
function packageDirOf(file: string): string | undefined {
  const parts = file.split(/[\\/]/);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0 || at + 1 >= parts.length) return undefined;
  const length = parts[at + 1]!.startsWith('@') ? 3 : 2;
  return parts.slice(0, at + length).join(sep);
}

function readPackage(root: string, dir: string): BundledPackage {
  const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  const license = typeof manifest.license === 'string' ? manifest.license : 'see the package';
  const file = readdirSync(join(root, dir)).sort().find((name) => LICENSE_FILE.test(name));
  return {
    name: String(manifest.name),
    version: String(manifest.version),
    license,
    ...(file !== undefined ? { text: readFileSync(join(root, dir, file), 'utf8').trim() } : {}),
  };
}

/**
 * The licence notices of every third-party package whose code went into a bundle, so the
 * published file carries them as MIT, ISC and the like require. `inputs` are the bundler's input
 * paths, relative to `root`.
 */
export function thirdPartyNotices(root: string, inputs: readonly string[], bundleName: string): string {
  const dirs = new Set(inputs.map(packageDirOf).filter((dir): dir is string => dir !== undefined));
  const packages = [...dirs]
    .filter((dir) => existsSync(join(root, dir, 'package.json')))
    .map((dir) => readPackage(root, dir))
    .sort((a, b) => a.name.localeCompare(b.name));
  const sections = packages.map((pkg) =>
    [`## ${pkg.name} ${pkg.version} (${pkg.license})`, '', pkg.text ?? '(the package ships no licence file)'].join('\n'),
  );
  return `# Third-party software in ${bundleName}\n\n${bundleName} bundles the following packages.\n\n${sections.join('\n\n')}\n`;
}
