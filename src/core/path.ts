import { PATH_SEGMENT_BYTES_MAX, PROJECT_PATH_BYTES_MAX } from './limits.ts';

// Project paths: workspace-relative, `/`-separated, NFC, never naming rift's own state.

export type PathViolation =
  | 'empty'
  | 'too_long'
  | 'absolute'
  | 'dot_segment'
  | 'empty_segment'
  | 'segment_too_long'
  | 'backslash'
  | 'control_character'
  | 'non_canonical_unicode'
  | 'rift_state';

export const PATH_VIOLATIONS: readonly PathViolation[] = [
  'empty',
  'too_long',
  'absolute',
  'dot_segment',
  'empty_segment',
  'segment_too_long',
  'backslash',
  'control_character',
  'non_canonical_unicode',
  'rift_state',
];

/** Directory names that are never visible at any depth (decisions.md). */
export const FLOOR_NAMES: ReadonlySet<string> = new Set(['.git', '.rift']);

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The first violation of a project path, or null when it is a valid project path. */
export function projectPathViolation(path: string): PathViolation | null {
  if (path.length === 0) return 'empty';
  if (Buffer.byteLength(path, 'utf8') > PROJECT_PATH_BYTES_MAX) return 'too_long';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'absolute';
  if (path.includes('\\')) return 'backslash';
  if (CONTROL.test(path)) return 'control_character';
  const segments = path.split('/');
  for (const s of segments) {
    if (s === '.' || s === '..') return 'dot_segment';
  }
  for (const s of segments) if (s === '') return 'empty_segment';
  for (const s of segments) if (Buffer.byteLength(s, 'utf8') > PATH_SEGMENT_BYTES_MAX) return 'segment_too_long';
  if (path.normalize('NFC') !== path) return 'non_canonical_unicode';
  if (segments.includes('.rift')) return 'rift_state';
  return null;
}

/** True when any segment of the path is under the floor (`.git`, `.rift`). */
export function underFloor(path: string): boolean {
  for (const s of path.split('/')) if (FLOOR_NAMES.has(s)) return true;
  return false;
}

/** The extension of a path's last segment without the dot, or null when it has none. */
export function extensionOf(path: string): string | null {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  if (dot <= 0 || dot === base.length - 1) return null;
  return base.slice(dot + 1);
}
