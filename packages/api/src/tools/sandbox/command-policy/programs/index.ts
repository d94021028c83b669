import { ARCHIVE_PROGRAMS } from './archives.js';
import { awk } from './awk.js';
import { CODE_RUNNERS } from './code-runners.js';
import { FILE_READERS } from './file-readers.js';
import { FILE_WRITERS } from './file-writers.js';
import { find } from './find.js';
import { git } from './git.js';
import { grep } from './grep.js';
import { INFO_PROGRAMS } from './info.js';
import { sed } from './sed.js';
import type { ProgramCheck } from './types.js';

export type { CheckedArgs, CommandContext, ProgramCheck } from './types.js';

/** Argument rules for every allowlisted program; a program without rules cannot run. */
export const PROGRAM_CHECKS: Readonly<Record<string, ProgramCheck>> = {
  ...FILE_READERS,
  ...FILE_WRITERS,
  ...INFO_PROGRAMS,
  ...ARCHIVE_PROGRAMS,
  ...CODE_RUNNERS,
  find,
  grep,
  sed,
  awk,
  git,
};
