import { z } from 'zod';
import { ChangeResult, Diagnostic, SourceSpan, PreconditionValue, Address } from '../src/protocol/change.ts';
const reg = z.globalRegistry;
for (const [sch, id] of [[Diagnostic,'Diagnostic'],[SourceSpan,'SourceSpan'],[PreconditionValue,'PreconditionValue'],[Address,'Address']] as const) reg.add(sch as any, { ...(reg.get(sch as any) ?? {}), id });
const j = z.toJSONSchema(ChangeResult, { io: 'output', target: 'draft-2020-12' }) as any;
const strip = (v: any): any => {
  if (Array.isArray(v)) return v.map(strip);
  if (v && typeof v === 'object') {
    const o: any = {};
    for (const [k, x] of Object.entries(v)) {
      if ((k === 'maximum' && x === Number.MAX_SAFE_INTEGER) || (k === 'minimum' && x === Number.MIN_SAFE_INTEGER)) continue;
      o[k] = strip(x);
    }
    return o;
  }
  return v;
};
console.log(Buffer.byteLength(JSON.stringify(j)), Object.keys(j.$defs ?? {}), Buffer.byteLength(JSON.stringify(strip(j))));
console.log(JSON.stringify(j).slice(0, 600));
