import { createRequire } from 'node:module';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';

// Every ACP message checked against the protocol's own JSON Schema (the one the SDK ships,
// `schema/v1/schema.json`): the JSON-RPC envelope against the root schema, and the params or
// result against the definition the schema marks with that method and side (`x-method`,
// `x-side`). Extension methods (`_…`) are checked as envelopes only: ACP leaves them free.

const require = createRequire(import.meta.url);
const SCHEMA = require('@agentclientprotocol/sdk/schema/v1/schema.json') as { $defs: Record<string, { 'x-method'?: string; 'x-side'?: string }> };

export interface WireMessage {
  /** Who sent it. */
  from: 'client' | 'agent';
  message: Record<string, unknown>;
}

type Kind = 'Request' | 'Response' | 'Notification';

const INT_RANGES: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint16: [0, 2 ** 16 - 1],
  uint32: [0, 2 ** 32 - 1],
  uint64: [0, Number.MAX_SAFE_INTEGER],
};

function compile(): { root: ValidateFunction; error: ValidateFunction; defs: Map<string, ValidateFunction> } {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const [name, [min, max]] of Object.entries(INT_RANGES)) {
    ajv.addFormat(name, { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= min && n <= max });
  }
  ajv.addFormat('double', { type: 'number', validate: (n: number) => Number.isFinite(n) });
  ajv.addFormat('uri', (s: string) => URL.canParse(s));
  ajv.addSchema(SCHEMA, 'acp');
  const defs = new Map<string, ValidateFunction>();
  for (const [name, def] of Object.entries(SCHEMA.$defs)) {
    const kind = (['Request', 'Response', 'Notification'] as Kind[]).find((k) => name.endsWith(k));
    if (!def['x-method'] || !def['x-side'] || !kind) continue;
    defs.set(`${def['x-side']} ${def['x-method']} ${kind}`, ajv.getSchema(`acp#/$defs/${name}`)!);
  }
  return { root: ajv.getSchema('acp')!, error: ajv.getSchema('acp#/$defs/Error')!, defs };
}

const { root, error, defs } = compile();

/** The side that handles a method: what the agent answers is `agent`, what the client answers is `client`. */
function handler(from: WireMessage['from']): 'agent' | 'client' {
  return from === 'client' ? 'agent' : 'client';
}

/**
 * The problems with a transcript (empty when every message conforms). Responses are matched
 * to their request by id and direction; an error response is checked against `Error`.
 */
export function schemaProblems(transcript: readonly WireMessage[]): string[] {
  const problems: string[] = [];
  const asked = new Map<string, string>();
  for (const { from, message: m } of transcript) {
    const where = `${from} ${JSON.stringify(m).slice(0, 160)}`;
    if (!root(m)) problems.push(`${where}: not an ACP message: ${JSON.stringify(root.errors?.slice(0, 3))}`);
    const method = typeof m.method === 'string' ? m.method : undefined;
    if (method !== undefined && 'id' in m) asked.set(`${from} ${JSON.stringify(m.id)}`, method);
    if (method?.startsWith('_') || method === '$/cancel_request') continue;
    let check: ValidateFunction | undefined;
    let value: unknown;
    if (method !== undefined) {
      const kind: Kind = 'id' in m ? 'Request' : 'Notification';
      check = defs.get(`${handler(from)} ${method} ${kind}`);
      value = m.params;
      if (!check) problems.push(`${where}: no ${kind.toLowerCase()} ${method} on the ${handler(from)} side in ACP v1`);
    } else {
      const request = asked.get(`${from === 'client' ? 'agent' : 'client'} ${JSON.stringify(m.id)}`);
      if (request === undefined) {
        problems.push(`${where}: a response to no request`);
        continue;
      }
      if (request.startsWith('_')) continue;
      if ('error' in m) {
        check = error;
        value = m.error;
      } else {
        check = defs.get(`${from} ${request} Response`);
        value = m.result;
        if (!check) problems.push(`${where}: no response to ${request} from the ${from}`);
      }
    }
    if (check && !check(value)) problems.push(`${where}: ${JSON.stringify(check.errors?.slice(0, 3))}`);
  }
  return problems;
}
