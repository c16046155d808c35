// `npm run schema`: writes docs/mcp.json, the served tool list. A test fails when the
// committed file drifts from what the server serves.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { schemaDocument } from '../src/mcp/schema-export.ts';

const target = fileURLToPath(new URL('../docs/mcp.json', import.meta.url));
writeFileSync(target, schemaDocument());
process.stdout.write(`wrote ${target}\n`);
