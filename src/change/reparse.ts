import { fileId } from '../core/ids.ts';
import type { Diagnostic } from '../protocol/change.ts';
import { withTree, SyntaxLimitError } from '../syntax/runtime.ts';
import type { LanguageId } from '../syntax/types.ts';
import { riftDiagnostic } from './refusal.ts';

// Re-parse findings (reference F.10 rule 112): each written file a syntax provider claims is
// parsed again and its error regions reported; the change lands either way.

const MESSAGE = 'the parser marked this region erroneous after the change';

function finding(path: string, language: string, start: number, end: number, message = MESSAGE): Diagnostic {
  return { ...riftDiagnostic('error', 'rift.syntax.error', message), span: { unit: fileId(path), range: { start, end } }, reliability: 'recovered', language };
}

/** Error regions of one file, at most `max`, outermost first in source order. */
export function reparseFindings(path: string, language: LanguageId, bytes: Uint8Array, max: number): Diagnostic[] {
  if (max <= 0) return [];
  try {
    return withTree(language, bytes, (tree, source) => {
      const out: Diagnostic[] = [];
      if (!tree.rootNode.hasError) return out;
      const cursor = tree.walk();
      try {
        for (;;) {
          const node = cursor.currentNode;
          if (node.isError || node.isMissing) {
            const r = source.range(node.startIndex, node.endIndex);
            out.push(finding(path, language, r.start, r.end));
            if (out.length >= max) return out;
          } else if (node.hasError && cursor.gotoFirstChild()) continue;
          while (!cursor.gotoNextSibling()) {
            if (!cursor.gotoParent()) return out;
          }
        }
      } finally {
        cursor.delete();
      }
    });
  } catch (e) {
    if (e instanceof SyntaxLimitError) {
      return [finding(path, language, 0, bytes.length, `the file was not re-parsed after the change: syntax ${e.limit} ${e.observed} exceeds ${e.maximum}`)];
    }
    throw e;
  }
}
