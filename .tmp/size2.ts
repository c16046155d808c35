import { z } from 'zod';
import { ChangeResult } from '/work/wt/polish/src/protocol/change.ts';
import { SearchResult } from '/work/wt/polish/src/protocol/search.ts';
for (const reused of ['inline', 'ref'] as const) {
  const j = z.toJSONSchema(ChangeResult, { io: 'output', target: 'draft-2020-12', reused });
  console.log(reused, Buffer.byteLength(JSON.stringify(j)), Object.keys((j as any).$defs ?? {}).length);
}
const j = z.toJSONSchema(ChangeResult, { io: 'output', target: 'draft-2020-12', reused: 'ref' }) as any;
console.log(JSON.stringify(j).slice(0, 3000));
