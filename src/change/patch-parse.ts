import { invalidField, limitExceeded } from '../core/errors.ts';
import { PATCH_FILES_MAX, PATCH_HUNKS_MAX } from '../core/limits.ts';
import { projectPathViolation } from '../core/path.ts';
import { unsupported } from './refusal.ts';
import { splitEnding, splitLinesKeepEnds } from '../core/lines.ts';

// Parsing a unified diff the way `git apply --recount` reads one (reference F.12 rules
// 128–135). Text is handled as latin1 so each byte is one code unit: matching and output
// stay byte-exact whatever the encoding. Header counts are hints; each hunk's counts are
// re-derived from its body.

export interface PatchLine {
  op: ' ' | '-' | '+';
  /** Line content without its ending (latin1). */
  text: string;
  /** The ending the diff carried: '\n', '\r\n' or '' (last line of the patch). */
  eol: string;
  /** Followed by `\ No newline at end of file`. */
  noNewline: boolean;
}

export interface Hunk {
  /** 1-based within its file. */
  ordinal: number;
  oldStart: number;
  newStart: number;
  /** Re-derived from the body. */
  oldCount: number;
  newCount: number;
  lines: PatchLine[];
}

export interface FilePatch {
  /** 1-based within the patch. */
  ordinal: number;
  /** Project path before; null for `/dev/null` (creation). */
  oldPath: string | null;
  /** Project path after; null for `/dev/null` (deletion). */
  newPath: string | null;
  hunks: Hunk[];
}

const HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
const UNIFIED_FORM = 'send a unified diff: `--- a/<path>` and `+++ b/<path>` file headers followed by `@@ -l,n +l,n @@` hunks';

/** Renders a hunk header git-style (a count of 1 is omitted). */
export function renderHeader(h: Hunk): string {
  const side = (start: number, count: number) => (count === 1 ? `${start}` : `${start},${count}`);
  return `@@ -${side(h.oldStart, h.oldCount)} +${side(h.newStart, h.newCount)} @@`;
}

function unquote(raw: string): string {
  if (!raw.startsWith('"')) return raw;
  // git's C-style quoting: \t \n \" \\ and octal byte escapes.
  let out = '';
  for (let i = 1; i < raw.length; i++) {
    const c = raw[i];
    if (c === '"') break;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const n = raw[++i];
    if (n >= '0' && n <= '7') {
      const oct = raw.slice(i, i + 3);
      out += String.fromCharCode(parseInt(oct, 8));
      i += 2;
    } else out += ({ t: '\t', n: '\n', '"': '"', '\\': '\\', a: '\x07', b: '\b', f: '\f', r: '\r', v: '\v' } as Record<string, string>)[n] ?? n;
  }
  return out;
}

/**
 * The project path of a `---`/`+++` header, or null for `/dev/null`. Like `git apply -p1`, the
 * `a/` or `b/` prefix is dropped on either side, so a reversed diff (`git diff -R`: `--- b/x`,
 * `+++ a/x`) names the same file on both.
 */
function headerPath(line: string, fileOrdinal: number): string | null {
  let raw = splitEnding(line).text.slice(4);
  if (!raw.startsWith('"')) {
    const tab = raw.indexOf('\t');
    if (tab >= 0) raw = raw.slice(0, tab);
    raw = raw.replace(/\s+$/, '');
  }
  raw = unquote(raw);
  if (raw === '/dev/null') return null;
  if (raw.startsWith('a/') || raw.startsWith('b/')) raw = raw.slice(2);
  const path = Buffer.from(raw, 'latin1').toString('utf8');
  const violation = projectPathViolation(path);
  if (violation === 'backslash') {
    throw invalidField('patch', `file ${fileOrdinal}: path uses backslash separators; project paths are forward-slash relative on every platform, such as \`src/lib.rs\``);
  }
  if (violation) throw invalidField('patch', `file ${fileOrdinal}: path ${JSON.stringify(path)} ${violation}`);
  return path;
}

const NO_RENAME = 'patch carries no rename or copy support — use move_file, then patch the moved file';

function pureRenameOrCopy(ordinal: number) {
  return unsupported(`patch file ${ordinal} is a git rename or copy without content changes; ${NO_RENAME}`);
}

/**
 * Parses a patch body (bytes as sent). Throws `invalid_request` naming the unified form for a
 * body that is not one, `limit_exceeded` past the file bound, and a `Refusal` (`unsupported`)
 * for renames, copies and `/dev/null` on both sides.
 */
export function parsePatch(body: Buffer): FilePatch[] {
  const text = body.toString('latin1');
  if (/^\*\*\* Begin Patch/m.test(text)) {
    throw invalidField('patch', `an \`*** Begin Patch\` envelope is not a unified diff; ${UNIFIED_FORM}`);
  }
  const lines = splitLinesKeepEnds(text);
  // Trailing blank lines after the last hunk are transport padding, not empty context.
  while (lines.length > 0 && /^\r?\n$/.test(lines[lines.length - 1])) lines.pop();
  const files: FilePatch[] = [];
  let renameOrCopy = false;
  let hunkTotal = 0;
  let i = 0;
  const isFileHeader = (k: number) => lines[k]?.startsWith('--- ') === true && lines[k + 1]?.startsWith('+++ ') === true;
  while (i < lines.length) {
    const line = lines[i];
    if (line.startsWith('diff ')) {
      // A rename or copy with no content change carries no `---`/`+++` header at all.
      if (renameOrCopy) throw pureRenameOrCopy(files.length + 1);
      i++;
      continue;
    }
    if (/^(rename|copy) (from|to) /.test(line) || line.startsWith('similarity index ')) {
      renameOrCopy = true;
      i++;
      continue;
    }
    if (!isFileHeader(i)) {
      i++; // preamble, `index`, mode lines: git ignores them too
      continue;
    }
    const ordinal = files.length + 1;
    if (ordinal > PATCH_FILES_MAX) {
      let total = ordinal;
      for (let k = i + 2; k < lines.length; k++) if (isFileHeader(k)) total++;
      throw limitExceeded('patch.files', PATCH_FILES_MAX, total);
    }
    const oldPath = headerPath(lines[i], ordinal);
    const newPath = headerPath(lines[i + 1], ordinal);
    i += 2;
    if (oldPath === null && newPath === null) throw unsupported(`patch file ${ordinal} has /dev/null on both sides; a patch creates, modifies or deletes one named file`);
    if (renameOrCopy || (oldPath !== null && newPath !== null && oldPath !== newPath)) {
      throw unsupported(`patch file ${ordinal} renames or copies ${oldPath ?? '/dev/null'} to ${newPath ?? '/dev/null'}; ${NO_RENAME}`);
    }
    const hunks: Hunk[] = [];
    while (i < lines.length && lines[i].startsWith('@@')) {
      const m = HEADER.exec(lines[i]);
      const hunkOrdinal = hunks.length + 1;
      if (!m) throw invalidField('patch', `file ${ordinal} hunk ${hunkOrdinal}: malformed \`@@\` header; expected \`@@ -l,n +l,n @@\``);
      i++;
      const body: PatchLine[] = [];
      while (i < lines.length && !isFileHeader(i)) {
        const l = lines[i];
        const c = l[0];
        if (c === ' ' || c === '-' || c === '+') {
          const { text: t, eol } = splitEnding(l.slice(1));
          body.push({ op: c, text: t, eol, noNewline: false });
        } else if (c === '\\') {
          if (body.length > 0) body[body.length - 1].noNewline = true;
        } else if (l === '\n' || l === '\r\n') {
          body.push({ op: ' ', text: '', eol: l, noNewline: false }); // an empty context line (newer GNU diff)
        } else break;
        i++;
      }
      if (body.length === 0) throw invalidField('patch', `file ${ordinal} hunk ${hunkOrdinal}: the hunk carries no lines`);
      if (++hunkTotal > PATCH_HUNKS_MAX) throw limitExceeded('patch.hunks', PATCH_HUNKS_MAX, hunkTotal);
      hunks.push({
        ordinal: hunkOrdinal,
        oldStart: Number(m[1]),
        newStart: Number(m[3]),
        oldCount: body.filter((b) => b.op !== '+').length,
        newCount: body.filter((b) => b.op !== '-').length,
        lines: body,
      });
    }
    if (hunks.length === 0 && !(oldPath === null)) {
      throw invalidField('patch', `file ${ordinal}: no \`@@\` hunk follows the \`---\`/\`+++\` headers`);
    }
    const path = newPath ?? oldPath!;
    if (files.some((f) => (f.newPath ?? f.oldPath) === path)) throw invalidField('patch', `file ${ordinal}: ${path} is addressed twice; put all of a file's hunks under one header`);
    files.push({ ordinal, oldPath, newPath, hunks });
    renameOrCopy = false;
  }
  if (renameOrCopy) throw pureRenameOrCopy(files.length + 1);
  if (files.length === 0) {
    throw invalidField('patch', `carries no \`---\` file header; ${UNIFIED_FORM}`);
  }
  return files;
}
