import { z } from 'zod';
const A = z.string().min(1).describe('base').meta({ id: 'A' });
const B = A.describe('override');
console.log(z.globalRegistry.get(B));
const S = z.object({ x: A, y: B });
try { console.log(JSON.stringify(z.toJSONSchema(S))); } catch (e) { console.log('ERR', (e as Error).message); }
