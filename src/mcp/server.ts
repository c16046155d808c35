import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { invalidField } from '../core/errors.ts';
import { ENGINE_EDIT_FILES_MAX } from '../core/limits.ts';
import { log } from '../core/log.ts';
import { parseInput } from '../protocol/validate.ts';
import type { ChangeOptions } from '../services/change-service.ts';
import { TOOLS, jsonSchema, type ToolAnnotations, type ToolServices } from './tools.ts';
import { RENAME_REVIEW_META, TRUSTED_HOOKS_META } from './wire.ts';
import type { RenameReview } from '../change/rename.ts';
import { RESOURCES, RESOURCE_MIME_TYPE, resolveResourceUri } from './resources.ts';
import { wireError } from './errors.ts';
import { BoundedStdioTransport } from './stdio-transport.ts';

// The MCP transport: the tool table over the SDK's low-level Server, so a failure reaches
// the wire as a JSON-RPC error carrying ErrorData (the high-level McpServer drops `data`).

export const SERVER_INSTRUCTIONS =
  'Read the current workspace by meaning: search ranks declarations and files for words or identifiers and walks the relationship graph (traversal: callers, callees, paths), ' +
  'get_symbol finds declarations by name with their exact source, and nodes lists the witnessed syntax nodes at a byte position. ' +
  'Resources: rift://map orients (languages, modules, hubs, entry points, docs), rift://workspace lists configuration and sources, rift://fs reads files and directories, rift://logs reads the server\'s diagnostics. ' +
  'Change it only through witnessed, atomic edits: replace_symbol, insert_symbol, remove_symbol, replace_node, insert_node, remove_node, patch and move_file ' +
  'resolve against the current bytes before writing, land whole or not at all, and return a ChangeResult: applied, refused (with the reason and the failed preconditions), or unchanged. ' +
  'execute runs code in a persistent execution copy of the tree (languages [execution].allow names) and never writes back. ' +
  'To work in isolation, projection_create makes a copy of the tree: pass its id as projection to any read or change tool, or to execute, then publish lands its changes atomically, refusing on conflicts with the workspace.';

function changeOptions(meta: Record<string, unknown> | undefined): ChangeOptions {
  const options: ChangeOptions = {};
  const trusted = meta?.[TRUSTED_HOOKS_META];
  if (typeof trusted === 'string') options.trustedHooks = trusted;
  const review = meta?.[RENAME_REVIEW_META];
  if (review !== undefined) options.renameReview = renameReview(review);
  return options;
}

/** `"propose"` or `{"approved": [{"path", "sha256"}, …]}`; anything else is a bad request. */
function renameReview(value: unknown): RenameReview {
  const field = `_meta.${RENAME_REVIEW_META}`;
  if (value === 'propose') return { propose: true };
  const approved = (value as { approved?: unknown } | null)?.approved;
  if (typeof value !== 'object' || value === null || Object.keys(value).length !== 1 || !Array.isArray(approved)) {
    throw invalidField(field, 'not "propose" or {"approved": [...]}');
  }
  if (approved.length > ENGINE_EDIT_FILES_MAX) throw invalidField(field, `more than ${ENGINE_EDIT_FILES_MAX} approved files`);
  return {
    approved: approved.map((w: unknown) => {
      const { path, sha256 } = (w ?? {}) as { path?: unknown; sha256?: unknown };
      if (typeof path !== 'string' || typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256) || Object.keys(w as object).length !== 2) {
        throw invalidField(field, 'an approved file is not {"path": <project path>, "sha256": <64 hex digits>}');
      }
      return { path, sha256 };
    }),
  };
}

export interface ServedTool {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations & { title: string };
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
}

let served: ServedTool[] | null = null;

/** The served tools with their JSON Schemas, computed once per process (converting them costs more than a session's start). */
export function servedTools(): ServedTool[] {
  served ??= TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    // Older clients read the title from the annotations (MCP 2025-03-26), newer ones from the tool.
    annotations: { title: t.title, ...t.annotations },
    inputSchema: jsonSchema(t.input, 'input'),
    outputSchema: jsonSchema(t.output, 'output'),
  }));
  return served;
}

/** The served resources and templates, as resources/list and resources/templates/list answer. */
export function servedResources() {
  return {
    resources: RESOURCES.filter((r) => r.id === undefined).map((r) => ({ uri: r.uri, name: r.name, description: r.description, mimeType: RESOURCE_MIME_TYPE })),
    resourceTemplates: RESOURCES.filter((r) => r.template !== null).map((r) => ({
      uriTemplate: r.template!,
      // A template that only pages a listed resource is named for the page; one that addresses (an id, a path) for the resource.
      name: r.id === undefined && !r.path ? `${r.name} page` : r.name,
      description: r.id === undefined && !r.path ? `${r.description} page_index selects a zero-based page.` : r.description,
      mimeType: RESOURCE_MIME_TYPE,
    })),
  };
}

/**
 * One MCP session's server. `services` may still be opening (a workspace server answers
 * `initialize` and the lists at once; a tool call or resource read waits for them).
 */
export function createMcpServer(services: ToolServices | Promise<ToolServices>, version: string): Server {
  const server = new Server(
    { name: 'rift', version },
    { capabilities: { tools: {}, resources: {} }, instructions: SERVER_INSTRUCTIONS },
  );
  const { resources, resourceTemplates } = servedResources();
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const started = performance.now();
    try {
      const { def, args } = resolveResourceUri(request.params.uri);
      const body = await def.read((await services).resources, args.pageIndex, args);
      log('debug', 'mcp.read', 'resource answered', { resource: def.name, elapsed_ms: Math.round(performance.now() - started) });
      return { contents: [{ uri: request.params.uri, mimeType: RESOURCE_MIME_TYPE, text: JSON.stringify(body) }] };
    } catch (err) {
      const wire = wireError(err, 'read');
      log('info', 'mcp.read', 'resource read failed', { code: (wire as Error & { data: { code: string } }).data.code });
      throw wire;
    }
  });
  const tools = servedTools();
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const def = TOOLS.find((t) => t.name === request.params.name);
    const phase = def?.phase ?? 'read';
    const started = performance.now();
    try {
      if (!def) throw invalidField('name', `unknown tool; served tools are ${TOOLS.map((t) => t.name).join(', ')}`);
      const args = parseInput(def.input, request.params.arguments ?? {});
      const result = (await def.handler(await services, args as never, changeOptions(request.params._meta))) as Record<string, unknown>;
      log('debug', 'mcp.call', 'tool answered', { tool: def.name, elapsed_ms: Math.round(performance.now() - started) });
      return { content: [{ type: 'text' as const, text: JSON.stringify(result) }], structuredContent: result };
    } catch (err) {
      const wire = wireError(err, phase);
      log('info', 'mcp.call', 'tool failed', { tool: def?.name ?? 'unknown', code: (wire as Error & { data: { code: string } }).data.code });
      throw wire;
    }
  });
  return server;
}

export async function serveStdio(server: Server): Promise<void> {
  const transport = new BoundedStdioTransport();
  await server.connect(transport);
}
