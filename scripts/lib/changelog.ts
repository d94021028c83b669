/**
 * Keep a Changelog bookkeeping: turning the Unreleased section into a dated release section.
 * Everything outside the two headings is left byte for byte as it was.
 */

export class ChangelogError extends Error {}

export interface ReleasedChangelog {
  text: string;
  /** The released entries, as they stood under Unreleased (used for the tag message). */
  notes: string;
}

const UNRELEASED = /^## \[unreleased\][ \t]*$/im;
/** A section ends at the next level-2 heading or at the link reference definitions at the foot. */
const SECTION_END = /^(## |\[[^\]]+\]:\s)/m;
/** An entry is a list item; headings such as "### Added" on their own announce nothing. */
const ENTRY = /^\s*[-*+]\s+\S/m;

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function releaseChangelog(text: string, version: string, date: string): ReleasedChangelog {
  const heading = UNRELEASED.exec(text);
  if (!heading) throw new ChangelogError('no "## [Unreleased]" section');
  if (new RegExp(`^## \\[${escape(version)}\\]`, 'm').test(text)) {
    throw new ChangelogError(`a "## [${version}]" section already exists`);
  }
  const headingEnd = heading.index + heading[0].length;
  const afterHeading = text.slice(headingEnd);
  const end = SECTION_END.exec(afterHeading);
  const body = afterHeading.slice(0, end ? end.index : afterHeading.length);
  const rest = afterHeading.slice(body.length);
  const notes = body.trim();
  if (!ENTRY.test(notes)) throw new ChangelogError('the Unreleased section has no entries: nothing to release');

  const released = `${heading[0]}\n\n## [${version}] - ${date}\n\n${notes}\n`;
  return { text: text.slice(0, heading.index) + released + (rest === '' ? '' : `\n${rest}`), notes };
}
