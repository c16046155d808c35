import { canonicalJson } from '../protocol/canonical.ts';
import { SERVER_INSTRUCTIONS, servedTools } from './server.ts';

/** The exported document `docs/mcp.json`: the served tool list, sorted by name, canonical JSON. */
export function schemaDocument(): string {
  return canonicalJson({
    description: SERVER_INSTRUCTIONS,
    tools: servedTools().map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      annotations: t.annotations,
      input_schema: t.inputSchema,
      output_schema: t.outputSchema,
    })),
  });
}
