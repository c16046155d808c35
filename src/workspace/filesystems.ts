import { statfsSync } from 'node:fs';

// Kernel pseudo-filesystems: their files state no size (or a false one) and generate their
// bytes on read, so rift neither walks them nor reads them as source or bodies (issue 10).
// Linux superblock magic numbers (linux/magic.h).

const PSEUDO: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x1cd1, 'devpts'],
  [0x6165676c, 'pstore'],
  [0xcafe4a11, 'bpf'],
  [0x62656570, 'configfs'],
  [0xde5e81e4, 'efivarfs'],
  [0x65735543, 'fusectl'],
  [0x42494e4d, 'binfmt_misc'],
  [0x19800202, 'mqueue'],
  [0xf97cff8c, 'selinuxfs'],
]);

/** The name of the pseudo-filesystem holding `path`, or null for an ordinary one (or when unknown). */
export function pseudoFilesystem(path: string): string | null {
  try {
    return PSEUDO.get(Number(statfsSync(path).type)) ?? null;
  } catch {
    return null;
  }
}
