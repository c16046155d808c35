import { findServer } from '../mcp/discovery.ts';
import { canonicalRoot } from '../workspace/root.ts';
import { parse, WORKSPACE } from './args.ts';

// `rift status`: the workspace server — pid, port, version, connected clients, index state and
// memory — or that none runs (then every `rift mcp` starts one on demand).

const OPTIONS = { ...WORKSPACE, json: { type: 'boolean' } } as const;

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

function ago(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 120 ? `${s} s ago` : s < 7200 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;
}

export async function runStatus(argv: readonly string[]): Promise<number> {
  const { values } = parse(argv, OPTIONS, 0);
  const root = canonicalRoot(values.workspace ?? '.');
  const found = await findServer(root, 0).catch(() => null);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(found ? { running: true, ...found.status } : { running: false, workspace: root })}\n`);
    return 0;
  }
  if (!found) {
    process.stdout.write(`no rift server is running for ${root}\n(rift mcp starts one on demand; rift server starts one by hand)\n`);
    return 0;
  }
  const s = found.status;
  const idx = s.index as { state?: string; revision?: string };
  const lines = [
    `rift server ${s.version}  pid ${s.pid}  http://127.0.0.1:${s.port}/mcp  up since ${new Date(s.started_at).toISOString()}`,
    `workspace ${s.workspace}`,
    `index     ${idx.state ?? 'unknown'}${idx.revision ? ` at revision ${idx.revision}` : ''}`,
    `memory    ${mib(s.memory.rss_bytes)} resident, ${mib(s.memory.heap_used_bytes)} heap`,
    `clients   ${s.clients.length}`,
    ...s.clients.map((c) => `  ${c.name} ${c.version}  connected ${ago(c.connected_at)}, last request ${ago(c.last_request_at)}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
