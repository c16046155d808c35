import { z } from 'zod';
import { ChangeResult } from '../src/protocol/change.ts';
const j = z.toJSONSchema(ChangeResult, { io: 'output', target: 'draft-2020-12' }) as any;
// count repeated subtrees by serialized size
const seen = new Map<string, number>();
const walk = (v: any) => {
  if (v && typeof v === 'object') {
    const s = JSON.stringify(v);
    if (s.length > 200) seen.set(s, (seen.get(s) ?? 0) + 1);
    for (const k of Object.keys(v)) walk(v[k]);
  }
};
walk(j);
const rows = [...seen.entries()].filter(([, n]) => n > 1).map(([s, n]) => ({ n, len: s.length, waste: (n - 1) * s.length, head: s.slice(0, 140) })).sort((a, b) => b.waste - a.waste).slice(0, 8);
for (const r of rows) console.log(r.n, r.len, r.waste, r.head);
