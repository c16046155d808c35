import { isRiftError } from '../../core/errors.ts';
import { ToolError, optInt, stringArg, type Tool } from '../base/tool.ts';
import type { ToolContext } from './context.ts';

// Code tools backed in-process by rift's own services: the same answers the MCP server gives,
// without a transport. Each exists only when its service does (see registry).

export const GET_SYMBOL_SOURCE_CHARS_MAX = 12_000;

export const getSymbolTool: Tool<ToolContext> = {
  name: 'get_symbol',
  description: 'Find declarations by (qualified) name, e.g. Parser.parse; returns path, line and source.',
  parameters: {
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string' }, limit: { type: 'integer', description: 'default 5' } },
  },
  async run(args, ctx) {
    const read = ctx.code.read;
    if (!read) throw new ToolError('get_symbol is unavailable in this session; use grep instead');
    const name = stringArg(args, 'name', 'get_symbol');
    const limit = optInt(args, 'limit', 'get_symbol');
    let result;
    try {
      result = await read.getSymbol({ name, ...(limit !== undefined ? { limit } : {}) });
    } catch (e) {
      throw new ToolError(isRiftError(e) ? `get_symbol failed: ${e.code}: ${e.message}` : `get_symbol failed: ${(e as Error).message}`);
    }
    if (result.hits.length === 0) return `no declaration named '${name}'. Try a shorter name or grep for it.`;
    const parts = result.hits.map((h) => {
      const head = `${h.path}:${h.line} ${h.symbol.kind} ${h.symbol.name} (${h.symbol.id})`;
      const src = h.source?.text;
      if (!src) return head;
      const body = src.length > GET_SYMBOL_SOURCE_CHARS_MAX ? `${src.slice(0, GET_SYMBOL_SOURCE_CHARS_MAX)}\n[source truncated; read ${h.path} for the rest]` : src;
      return `${head}\n${body}`;
    });
    const more = result.pagination.total_pages > 1 ? `\n[page 1 of ${result.pagination.total_pages}; ask with a more specific name]` : '';
    const warn = result.warnings.length > 0 ? `\n[${result.warnings.map((w) => w.kind).join(', ')}]` : '';
    return parts.join('\n\n') + more + warn;
  },
};

export const SEARCH_LIMIT_AGENT = 20;
const SEARCH_LINE_CHARS_MAX = 250;

export const searchTool: Tool<ToolContext> = {
  name: 'search',
  description: 'Ranked search over declaration names, declaration sources and file contents; returns path:line hits.',
  parameters: {
    type: 'object',
    required: ['query'],
    properties: {
      query: { type: 'string' },
      target: { type: 'string', enum: ['symbol', 'file', 'all'], description: 'default all' },
      path: { type: 'string', description: 'glob a hit path must match, e.g. src/**' },
    },
  },
  async run(args, ctx) {
    const service = ctx.code.search;
    if (!service) throw new ToolError('search is unavailable in this session; use grep instead');
    const query = stringArg(args, 'query', 'search');
    const target = args.target === 'symbol' || args.target === 'file' || args.target === 'all' ? args.target : undefined;
    const path = typeof args.path === 'string' && args.path.trim() !== '' ? args.path : undefined;
    let result;
    try {
      result = await service.search({
        query,
        include: ['source'],
        limit: SEARCH_LIMIT_AGENT,
        ...(target ? { target } : {}),
        ...(path ? { paths: { include: [path] } } : {}),
      });
    } catch (e) {
      throw new ToolError(isRiftError(e) ? `search failed: ${e.code}: ${e.message}` : `search failed: ${(e as Error).message}`);
    }
    if (result.results.length === 0) return `no results for '${query}'. Try other words, or grep for a literal.`;
    const lines = result.results.map((h) => {
      const what = h.hit.target === 'symbol' ? `${h.hit.symbol.kind} ${h.hit.symbol.name}` : 'file';
      const first = (h.source ?? '').split('\n')[0].trim().slice(0, SEARCH_LINE_CHARS_MAX);
      return `${h.path}:${h.line}: ${what}${first ? ` — ${first}` : ''}`;
    });
    const more = result.pagination.total_pages > 1 ? `\n[showing the top ${result.results.length}; narrow the query or set path]` : '';
    return lines.join('\n') + more;
  },
};
