import { readFileSync } from 'node:fs';
import { sep } from 'node:path';

// Kernel pseudo-filesystems (procfs, sysfs, device and control filesystems) hold no source:
// their "files" are live kernel state that may be unbounded, change on every read, or block.
// They are never walked, watched or read, wherever they are mounted — at `/proc` under a
// workspace rooted at `/`, or bind-mounted inside a repository.

/** Filesystem types (as /proc/self/mountinfo names them) that are never entered. */
const SPECIAL_TYPES: ReadonlySet<string> = new Set([
  'autofs',
  'binfmt_misc',
  'bpf',
  'cgroup',
  'cgroup2',
  'configfs',
  'debugfs',
  'devpts',
  'devtmpfs',
  'efivarfs',
  'fusectl',
  'hugetlbfs',
  'mqueue',
  'nsfs',
  'proc',
  'pstore',
  'rpc_pipefs',
  'securityfs',
  'selinuxfs',
  'sysfs',
  'tracefs',
]);

/** Where the kernel's own trees live on Unix-like systems; the fallback when mounts cannot be listed. */
const KERNEL_DIRECTORIES = ['/proc', '/sys', '/dev'];

interface Mount {
  point: string;
  special: boolean;
}

/** Decodes the octal escapes mountinfo uses for space, tab, newline and backslash. */
function unescapeMountPath(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** Every mount point with whether its filesystem is special; the kernel directories when mounts cannot be listed. */
function mounts(): Mount[] {
  let text: string;
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return KERNEL_DIRECTORIES.map((point) => ({ point, special: true }));
  }
  const out: Mount[] = [];
  for (const line of text.split('\n')) {
    // `id parent major:minor root mount-point options [optional…] - type source super-options`
    const fields = line.split(' ');
    const dash = fields.indexOf('-');
    if (dash < 5) continue;
    out.push({ point: unescapeMountPath(fields[4]), special: SPECIAL_TYPES.has(fields[dash + 1]) });
  }
  return out;
}

function isAtOrBelow(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/**
 * The mount point of the special filesystem `absRoot` (canonical, absolute) lies on, or null
 * when the deepest mount holding it is an ordinary filesystem.
 */
export function specialFilesystemOf(absRoot: string): string | null {
  let deepest: Mount | null = null;
  for (const m of mounts()) {
    if (isAtOrBelow(absRoot, m.point) && (deepest === null || m.point.length >= deepest.point.length)) deepest = m;
  }
  return deepest?.special ? deepest.point : null;
}

/** Project paths (relative, `/`-separated) below `absRoot` where a special filesystem is mounted; sorted. */
export function specialMountsUnder(absRoot: string): string[] {
  const base = absRoot.endsWith(sep) ? absRoot : absRoot + sep;
  const out = new Set<string>();
  for (const m of mounts()) {
    if (m.special && m.point.length > base.length && m.point.startsWith(base)) out.add(m.point.slice(base.length).split(sep).join('/'));
  }
  return [...out].sort();
}
