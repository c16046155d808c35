import { closeSync, fstatSync, openSync, constants } from 'node:fs';
import { isAbsolute } from 'node:path';
import { invalidField, limitExceeded } from '../core/errors.ts';
import { pseudoFilesystem } from '../workspace/filesystems.ts';
import { readBounded } from '../workspace/safe-open.ts';

// BodySource (reference A.5): inline text, or `{"file": "/abs/path"}` the server reads itself.
// The bound applies to the resolved bytes, so both forms cross it the same way. A file on a
// kernel pseudo-filesystem (/proc, /sys, …) is refused: its stated size is no size at all.

export type BodySourceValue = string | { file: string };

export function resolveBodySource(field: 'body' | 'patch', source: BodySourceValue, maxBytes: number): Buffer {
  if (typeof source === 'string') {
    const bytes = Buffer.from(source, 'utf8');
    if (bytes.length > maxBytes) throw limitExceeded(field, maxBytes, bytes.length);
    return bytes;
  }
  const path = source.file;
  if (!isAbsolute(path)) throw invalidField(`${field}.file`, 'not an absolute path; `file` names a path on the server machine, such as /tmp/body.txt');
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    throw invalidField(`${field}.file`, `unreadable (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw invalidField(`${field}.file`, 'not a regular file');
    const pseudo = pseudoFilesystem(`/proc/self/fd/${fd}`) ?? pseudoFilesystem(path);
    if (pseudo) throw invalidField(`${field}.file`, `on the special filesystem ${pseudo}, whose files have no stable size or content; copy the bytes to a regular file first`);
    if (st.size > maxBytes) throw limitExceeded(field, maxBytes, st.size);
    const bytes = readBounded(fd, st.size, maxBytes);
    if (bytes === null) throw limitExceeded(field, maxBytes, maxBytes + 1);
    return bytes;
  } finally {
    closeSync(fd);
  }
}
