import { arch } from 'node:process';

/*
 * A seccomp program (classic BPF, as bubblewrap's `--seccomp` loads it) that keeps a writable
 * sandbox from leaving setuid or setgid files behind. Its mounts are nosuid, but the bits stay on
 * disk: outside, anyone who can reach such a file runs it as its owner, the service's user (root
 * for a root service, whose uid 0 is the sandbox's). Owners may set these bits without any
 * capability, so only the system calls can be refused.
 */

/** The mode bits refused: S_ISUID and S_ISGID. */
const SETID = 0o6000;
/** O_CREAT and __O_TMPFILE (the same on x86_64 and aarch64): the only opens whose mode is used. */
const CREATES = 0o100 | 0o20000000;
const EPERM = 1;
const ENOSYS = 38;
const RET_ALLOW = 0x7fff0000;
const retErrno = (errno: number): number => 0x00050000 | errno;

/** Where a call carries its mode (and, for an open, its flags): argument indexes. */
type Rule = { nr: number; mode: number; flags?: number } | { nr: number; refuse: true };

interface Table {
  auditArch: number;
  /** x86_64's x32 numbers (bit 30): the same calls by other numbers, refused outright. */
  x32: boolean;
  rules: readonly Rule[];
}

/**
 * openat2 takes its mode in a struct seccomp cannot read, and io_uring opens files without system
 * calls of their own: both answer ENOSYS, which programs take as "fall back to openat".
 */
const refused = (nr: number): Rule => ({ nr, refuse: true });

const TABLES: Partial<Record<string, Table>> = {
  x64: {
    auditArch: 0xc000003e,
    x32: true,
    rules: [
      { nr: 90, mode: 1 }, // chmod
      { nr: 91, mode: 1 }, // fchmod
      { nr: 268, mode: 2 }, // fchmodat
      { nr: 452, mode: 2 }, // fchmodat2
      { nr: 2, flags: 1, mode: 2 }, // open
      { nr: 257, flags: 2, mode: 3 }, // openat
      { nr: 85, mode: 1 }, // creat
      { nr: 133, mode: 1 }, // mknod
      { nr: 259, mode: 2 }, // mknodat
      refused(437), // openat2
      refused(425), // io_uring_setup
    ],
  },
  arm64: {
    auditArch: 0xc00000b7,
    x32: false,
    rules: [
      { nr: 52, mode: 1 }, // fchmod
      { nr: 53, mode: 2 }, // fchmodat
      { nr: 452, mode: 2 }, // fchmodat2
      { nr: 56, flags: 2, mode: 3 }, // openat
      { nr: 33, mode: 2 }, // mknodat
      refused(437), // openat2
      refused(425), // io_uring_setup
    ],
  },
};

const LD_ABS = 0x20;
const JEQ = 0x15;
const JGE = 0x35;
const JSET = 0x45;
const RET = 0x06;

/** The low 32 bits of argument `index` in struct seccomp_data (little-endian). */
const argOffset = (index: number): number => 16 + 8 * index;

/** An instruction whose jumps name labels, resolved once the program is laid out. */
interface Op {
  code: number;
  k: number;
  jt?: string;
  jf?: string;
  label?: string;
}

/**
 * The program for this machine's architecture, or undefined where no table is known (the sandbox
 * then runs without it). A call of another architecture (32-bit code on x86_64) or an x32 number
 * answers ENOSYS: its numbers differ and would pass unchecked.
 */
export function setuidFilter(machine: string = arch): Buffer | undefined {
  const table = TABLES[machine];
  if (table === undefined) return undefined;
  const ops: Op[] = [
    { code: LD_ABS, k: 4 },
    { code: JEQ, k: table.auditArch, jt: 'native', jf: 'nosys' },
    { code: LD_ABS, k: 0, label: 'native' },
    ...(table.x32 ? [{ code: JGE, k: 0x40000000, jt: 'nosys', jf: 'next0' }] : []),
  ];
  table.rules.forEach((rule, i) => {
    const here = `next${i}`;
    const next = `next${i + 1}`;
    const body = `rule${i}`;
    // The first rule's label sits on its own test; an x32 check jumps to it.
    ops.push({ code: JEQ, k: rule.nr, jt: body, jf: next, label: here });
  });
  ops.push({ code: RET, k: RET_ALLOW, label: `next${table.rules.length}` });
  table.rules.forEach((rule, i) => {
    const body = `rule${i}`;
    if ('refuse' in rule) {
      ops.push({ code: RET, k: retErrno(ENOSYS), label: body });
      return;
    }
    if (rule.flags !== undefined) {
      ops.push({ code: LD_ABS, k: argOffset(rule.flags), label: body });
      ops.push({ code: JSET, k: CREATES, jt: `mode${i}`, jf: 'allow' });
      ops.push({ code: LD_ABS, k: argOffset(rule.mode), label: `mode${i}` });
    } else ops.push({ code: LD_ABS, k: argOffset(rule.mode), label: body });
    ops.push({ code: JSET, k: SETID, jt: 'eperm', jf: 'allow' });
  });
  ops.push({ code: RET, k: RET_ALLOW, label: 'allow' });
  ops.push({ code: RET, k: retErrno(EPERM), label: 'eperm' });
  ops.push({ code: RET, k: retErrno(ENOSYS), label: 'nosys' });
  return assemble(ops);
}

/** struct sock_filter, 8 bytes each: code (u16), jt and jf (u8, instructions skipped), k (u32). */
function assemble(ops: readonly Op[]): Buffer {
  const at = new Map<string, number>();
  ops.forEach((op, index) => {
    if (op.label !== undefined) at.set(op.label, index);
  });
  const skip = (from: number, label: string | undefined): number => {
    if (label === undefined) return 0;
    const target = at.get(label);
    const distance = target === undefined ? -1 : target - from - 1;
    if (distance < 0 || distance > 255) throw new Error(`seccomp program: no forward jump to ${label}`);
    return distance;
  };
  const out = Buffer.alloc(ops.length * 8);
  ops.forEach((op, index) => {
    out.writeUInt16LE(op.code, index * 8);
    out.writeUInt8(skip(index, op.jt), index * 8 + 2);
    out.writeUInt8(skip(index, op.jf), index * 8 + 3);
    out.writeUInt32LE(op.k >>> 0, index * 8 + 4);
  });
  return out;
}
