import { EMPTY_TREE, readLooseObject, writeObject } from './loose-store.js';

/**
 * A tree written without starting git: a base tree with some files put in (added or replaced),
 * the way `git write-tree` would write the index that holds them. Only the trees on the way to
 * those files are read (loose objects) and written; the rest is shared with the base.
 */

/** A file to put in: its path (bytes, relative, `/`-separated), git mode and blob id. */
export interface OverlayFile {
  path: string;
  mode: '100644' | '100755';
  blob: string;
}

const TREE_MODE = '40000';

interface TreeEntry {
  mode: string;
  id: string;
}

/** The files and directories to put into one directory of the tree. */
interface Node {
  files: Map<string, OverlayFile>;
  dirs: Map<string, Node>;
}

const emptyNode = (): Node => ({ files: new Map(), dirs: new Map() });

/**
 * The id of `base` with `files` put in; undefined when a tree it needs is not stored loose (the
 * caller lets git write the tree instead) or a file would take the place of a directory, or the
 * other way round.
 */
export function overlayTree(gitDir: string, base: string, files: readonly OverlayFile[]): string | undefined {
  const root = emptyNode();
  for (const file of files) {
    const parts = file.path.split('/');
    const name = parts.pop() ?? '';
    let node = root;
    for (const part of parts) {
      let child = node.dirs.get(part);
      if (!child) node.dirs.set(part, (child = emptyNode()));
      node = child;
    }
    node.files.set(name, file);
  }
  return writeNode(gitDir, base, root);
}

function writeNode(gitDir: string, base: string | undefined, node: Node): string | undefined {
  const entries = base === undefined ? new Map<string, TreeEntry>() : readTree(gitDir, base);
  if (!entries) return undefined;
  for (const [name, file] of node.files) {
    if (entries.get(name)?.mode === TREE_MODE || node.dirs.has(name)) return undefined;
    entries.set(name, { mode: file.mode, id: file.blob });
  }
  for (const [name, child] of node.dirs) {
    const existing = entries.get(name);
    if (existing && existing.mode !== TREE_MODE) return undefined;
    const id = writeNode(gitDir, existing?.id, child);
    if (id === undefined) return undefined;
    entries.set(name, { mode: TREE_MODE, id });
  }
  return writeObject(gitDir, 'tree', serializeTree(entries));
}

/** A tree's entries by name (bytes as `latin1`), or undefined when it is not stored loose. */
function readTree(gitDir: string, id: string): Map<string, TreeEntry> | undefined {
  if (id === EMPTY_TREE) return new Map();
  const body = readLooseObject(gitDir, 'tree', id);
  if (!body) return undefined;
  const entries = new Map<string, TreeEntry>();
  for (let at = 0; at < body.length; ) {
    const space = body.indexOf(0x20, at);
    const nul = body.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > body.length) return undefined;
    entries.set(body.subarray(space + 1, nul).toString('latin1'), {
      mode: body.subarray(at, space).toString('latin1'),
      id: body.subarray(nul + 1, nul + 21).toString('hex'),
    });
    at = nul + 21;
  }
  return entries;
}

/** git's order of tree entries: by name bytes, a directory's name read as if it ended in `/`. */
const sortKey = (name: string, entry: TreeEntry): string => (entry.mode === TREE_MODE ? `${name}/` : name);

function serializeTree(entries: Map<string, TreeEntry>): Buffer {
  // Names hold one byte a character (`latin1`): comparing them as strings compares their bytes.
  const sorted = [...entries].map(([name, entry]) => ({ name, entry, key: sortKey(name, entry) })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const body = Buffer.alloc(sorted.reduce((size, { name, entry }) => size + entry.mode.length + name.length + 22, 0));
  let at = 0;
  for (const { name, entry } of sorted) {
    at += body.write(`${entry.mode} ${name}\0`, at, 'latin1');
    at += body.write(entry.id, at, 'hex');
  }
  return body;
}
