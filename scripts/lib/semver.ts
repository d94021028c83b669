/** A version as Semantic Versioning 2.0.0 defines it. */
export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  prerelease: string[];
  build: string[];
}

// The expression semver.org publishes: no leading zeros, no leading "v".
const PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

export function parseSemVer(text: string): SemVer | undefined {
  const match = PATTERN.exec(text);
  if (!match) return undefined;
  const [, major, minor, patch, prerelease, build] = match;
  const safe = [major, minor, patch].map(Number);
  if (!safe.every(Number.isSafeInteger)) return undefined;
  return {
    major: safe[0]!,
    minor: safe[1]!,
    patch: safe[2]!,
    prerelease: prerelease ? prerelease.split('.') : [],
    build: build ? build.split('.') : [],
  };
}

const NUMERIC = /^\d+$/;

/** Rule 11.4: numeric identifiers compare as numbers and sort before alphanumeric ones. */
function compareIdentifiers(a: string, b: string): number {
  const aNumeric = NUMERIC.test(a);
  const bNumeric = NUMERIC.test(b);
  if (aNumeric && bNumeric) return Math.sign(Number(a) - Number(b));
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function comparePrerelease(a: string[], b: string[]): number {
  // A release ranks above any of its pre-releases (rule 11.3).
  if (a.length === 0 || b.length === 0) return Math.sign(b.length - a.length);
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const order = compareIdentifiers(a[i]!, b[i]!);
    if (order !== 0) return order;
  }
  return Math.sign(a.length - b.length);
}

/** Precedence as semver.org rule 11 defines it: negative, 0 or positive. Build metadata is ignored. */
export function compareSemVer(a: SemVer, b: SemVer): number {
  return (
    Math.sign(a.major - b.major) ||
    Math.sign(a.minor - b.minor) ||
    Math.sign(a.patch - b.patch) ||
    comparePrerelease(a.prerelease, b.prerelease)
  );
}
