import { canonicalJson } from '../protocol/canonical.ts';
import { SERVER_INSTRUCTIONS, servedTools } from './server.ts';
import { RESOURCES, RESOURCE_MIME_TYPE } from './resources.ts';
import { jsonSchema } from './tools.ts';

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
    resources: RESOURCES.map((r) => ({
      uri: r.uri,
      name: r.name,
      description: r.description,
      uri_template: r.template,
      mime_type: RESOURCE_MIME_TYPE,
      schema: jsonSchema(r.schema, 'output'),
    })),
  });
}
