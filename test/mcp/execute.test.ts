import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { treeRevision } from '../../src/core/digest.ts';
import { probeSandbox } from '../../src/process/sandbox.ts';
import { startRift, type RiftMcp } from '../helpers/mcp.ts';
import { eventually, removeWorkspace, tempWorkspace, writeFiles } from '../helpers/workspace.ts';

// `execute` through the MCP SDK client over stdio, real runtimes and processes (reference A.8,
// F.16 rules 168–171): the execution copy persists and is refreshed, writes never reach the
// tree, languages need [execution].allow and a runtime, code, time and output are bounded,
// max_concurrent holds across processes (and recovers after SIGKILL), and the result says
// whether the OS sandbox held the run.

const sandboxed = probeSandbox().available;
const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');

/** Every file below `root` (`.rift/` left out) with its bytes' digest. */
function tree(root: string, dir = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = dir === '' ? e.name : `${dir}/${e.name}`;
    if (rel === '.rift') continue;
    if (e.isDirectory()) Object.assign(out, tree(root, rel));
    else if (e.isFile()) out[rel] = sha(readFileSync(join(root, rel)));
    else out[rel] = 'other';
  }
  return out;
}

type Result = {
  snapshot: { tree_revision: string };
  language: string;
  result: { status: string; exit_code: number | null; stdout: Captured; stderr: Captured; diagnostics: Array<{ code: string; message: string }> };
  budget: { timeout_ms: number; output_bytes: number };
  sandbox: { kind: string; reason?: string };
};
type Captured = { text: string; captured_bytes: number; total_bytes: number; truncated: boolean; digest: string };

const run = async (rift: RiftMcp, language: string, source: string, working_directory?: string): Promise<Result> =>
  (await rift.call('execute', { language, block: working_directory === undefined ? { source } : { source, working_directory } })) as unknown as Result;

describe('execute: the execution copy', () => {
  const outside = mkdtempSync(join(tmpdir(), 'rift-exec-outside-'));
  writeFileSync(join(outside, 'target.txt'), 'outside\n');
  const files = {
    'rift.toml': '[execution]\nallow = ["python", "javascript", "bash"]\nmax_code = "1kb"\nmax_output = "100b"\n',
    '.gitignore': 'secret.env\n',
    'secret.env': 'TOKEN=1\n',
    'src/a.txt': 'first\n',
    'src/b.txt': 'doomed\n',
    '.git/config': '[core]\n',
  };
  let root: string;
  let rift: RiftMcp;
  before(async () => {
    root = tempWorkspace(files);
    symlinkSync(join(outside, 'target.txt'), join(root, 'src', 'link.txt'));
    rift = await startRift(root, {}, { standalone: true });
  });
  after(async () => {
    await rift.close();
    removeWorkspace(root);
    rmSync(outside, { recursive: true, force: true });
  });

  it('answers the exact result shape, with the tree revision of the files it copied', async () => {
    const r = await run(rift, 'python', 'import sys; print("out"); print("err", file=sys.stderr)');
    const copied = ['.gitignore', 'rift.toml', 'src/a.txt', 'src/b.txt'];
    assert.deepEqual(r, {
      snapshot: { tree_revision: treeRevision(copied.map((p) => ({ path: p, sha256: sha(readFileSync(join(root, p))) }))) },
      language: 'python',
      result: {
        status: 'completed',
        exit_code: 0,
        stdout: { text: 'out\n', captured_bytes: 4, total_bytes: 4, truncated: false, digest: sha('out\n').slice(0, 8) },
        stderr: { text: 'err\n', captured_bytes: 4, total_bytes: 4, truncated: false, digest: sha('err\n').slice(0, 8) },
        diagnostics: [],
      },
      budget: { timeout_ms: 30_000, output_bytes: 100 },
      sandbox: sandboxed ? { kind: 'bubblewrap' } : { kind: 'none', reason: probeSandbox().reason },
    });
  });

  it('copies exactly the visible regular files: never .git/, ignored files or symlinks', async () => {
    const r = await run(rift, 'bash', 'find . -path ./node_modules -prune -o \\( -type f -o -type l \\) -print | sort');
    assert.equal(r.result.stdout.text, './.gitignore\n./rift.toml\n./src/a.txt\n./src/b.txt\n');
  });

  it('keeps files between calls (rule 168): a file written in one call is read in the next', async () => {
    await run(rift, 'bash', 'mkdir -p node_modules/dep && echo installed > node_modules/dep/index.js && echo made > made.txt');
    const r = await run(rift, 'javascript', 'const fs = require("fs"); process.stdout.write(fs.readFileSync("made.txt", "utf8") + fs.readFileSync("node_modules/dep/index.js", "utf8"))');
    assert.equal(r.result.stdout.text, 'made\ninstalled\n');
  });

  it('refreshes before each run: an edit is visible, a deleted file is gone, copy-only files stay', async () => {
    writeFileSync(join(root, 'src', 'a.txt'), 'second\n');
    unlinkSync(join(root, 'src', 'b.txt'));
    writeFiles(root, { 'src/new.txt': 'new\n' });
    const r = await run(rift, 'python', 'import os; print(open("src/a.txt").read(), end=""); print(os.path.exists("src/b.txt")); print(open("src/new.txt").read(), end=""); print(os.path.exists("made.txt"))');
    assert.equal(r.result.stdout.text, 'second\nFalse\nnew\nTrue\n');
  });

  it('never writes back (rule 169): the workspace stays byte-identical, and a changed copy file is restored', async () => {
    const beforeRun = tree(root);
    const r = await run(
      rift,
      'python',
      'import os\nopen("src/a.txt", "w").write("clobbered")\nos.remove("rift.toml")\nopen("fresh.txt", "w").write("x")\nos.makedirs("deep/er", exist_ok=True)\nprint("done")',
    );
    assert.equal(r.result.status, 'completed');
    assert.deepEqual(tree(root), beforeRun);
    assert.equal(existsSync(join(root, 'fresh.txt')), false);
    const again = await run(rift, 'bash', 'cat src/a.txt; test -f rift.toml && echo restored');
    assert.equal(again.result.stdout.text, 'second\nrestored\n');
  });

  it('replaces a symlink the code left where the tree has a directory, never writing through it', async () => {
    writeFileSync(join(outside, 'a.txt'), 'outside a\n');
    // Only possible without the sandbox's read-only view of `outside`; the refresh must cope either way.
    await run(rift, 'bash', `rm -rf src && ln -s ${outside} src`);
    writeFileSync(join(root, 'src', 'a.txt'), 'third\n');
    const r = await run(rift, 'bash', 'test -L src && echo link; cat src/a.txt');
    assert.equal(r.result.stdout.text, 'third\n');
    assert.equal(readFileSync(join(outside, 'a.txt'), 'utf8'), 'outside a\n');
  });

  it('runs in working_directory inside the copy; hostile ones are refused', async () => {
    const r = await run(rift, 'python', 'import os; print(os.getcwd())', 'src');
    assert.equal(r.result.stdout.text.trim().endsWith(join('.rift', 'exec', 'workspace', 'src')), true, r.result.stdout.text);
    for (const [wd, violation] of [['..', 'dot_segment'], ['src/../..', 'dot_segment'], ['/etc', 'absolute'], ['missing', 'not a directory in the execution copy'], ['.rift', 'rift_state']]) {
      const err = await rift.fail('execute', { language: 'bash', block: { source: 'pwd', working_directory: wd } });
      assert.equal(err.data.code, 'invalid_request', wd);
      assert.equal(err.data.message, `the request does not match the documented form: field block.working_directory, violation ${violation}; correct the reported field and resend the request`);
    }
    await run(rift, 'bash', `ln -s ${outside} outlink`);
    const link = await rift.fail('execute', { language: 'bash', block: { source: 'pwd', working_directory: 'outlink' } });
    assert.equal(link.data.code, 'permission_denied');
    assert.match(String(link.data.message), /field block\.working_directory, path outlink, violation symlink component in the execution copy/);
  });

  it('refuses a language [execution].allow does not name exactly, and a projection (rule 171)', async () => {
    const sh = await rift.fail('execute', { language: 'sh', block: { source: 'true' } });
    assert.deepEqual(
      { code: sh.data.code, retry: sh.data.retry, message: sh.data.message },
      {
        code: 'capability_unavailable',
        retry: 'operator_action',
        message: 'no configured provider serves this request: capability execute sh, requires [execution].allow naming "sh"; adjust the request to a served capability, or configure a provider that serves it',
      },
    );
    const dialect = await rift.fail('execute', { language: 'python:3', block: { source: 'print(1)' } });
    assert.equal(dialect.data.code, 'capability_unavailable');
  });

  it('with projection runs in that projection\'s own execution copy, refreshed from its tree; the workspace copy never sees it', async () => {
    const p = (await rift.call('projection_create', {})) as unknown as { id: string };
    try {
      const patched = (await rift.call('patch', { projection: p.id, patch: '--- /dev/null\n+++ b/only-here.txt\n@@ -0,0 +1 @@\n+in the projection\n' })) as { status: string };
      assert.equal(patched.status, 'applied', JSON.stringify(patched));
      const inProjection = (await rift.call('execute', { language: 'bash', block: { source: 'cat only-here.txt; pwd; echo made > projection-run.txt' }, projection: p.id })) as unknown as Result;
      const [text, cwd] = inProjection.result.stdout.text.trim().split('\n');
      assert.equal(text, 'in the projection');
      assert.equal(cwd.endsWith(`/.rift/exec/${p.id}`), true, cwd);
      const inWorkspace = await run(rift, 'bash', 'test -e only-here.txt && echo seen || echo unseen; test -e projection-run.txt && echo leaked || echo clean');
      assert.equal(inWorkspace.result.stdout.text, 'unseen\nclean\n');
      assert.equal(existsSync(join(root, '.rift', 'projections', p.id, 'projection-run.txt')), false, 'nothing the run wrote reached the projection');
    } finally {
      await rift.call('projection_remove', { projection: p.id });
    }
    assert.equal(existsSync(join(root, '.rift', 'exec', p.id)), false, 'the execution copy goes with its projection');
    const unknown = await rift.fail('execute', { language: 'bash', block: { source: 'true' }, projection: p.id });
    assert.equal(unknown.data.code, 'resource_not_found');
  });

  it('bounds the code by max_code (limit_exceeded with limit)', async () => {
    const source = `print(${'1'.repeat(1018)})`; // 1025 bytes
    const err = await rift.fail('execute', { language: 'python', block: { source } });
    assert.equal(err.data.code, 'limit_exceeded');
    assert.deepEqual(err.data.limit, { field: 'execution.max_code', limit: 1024, required: 1025 });
    assert.equal(
      err.data.message,
      'the request exceeded a declared resource limit: limit execution.max_code, maximum 1024, required 1025; resize the request below the named limit, or raise that limit in the workspace configuration',
    );
    const at = await run(rift, 'python', `print(${'1'.repeat(1017)})`);
    assert.equal(at.result.status, 'completed');
  });

  it('keeps max_output bytes per stream, cut at a character boundary, with the whole stream counted and digested', async () => {
    const r = await run(rift, 'python', 'import sys; sys.stdout.write("a" + "é" * 100); sys.stderr.write("e" * 300); sys.exit(3)');
    const whole = `a${'é'.repeat(100)}`;
    assert.deepEqual(r.result.stdout, { text: `a${'é'.repeat(49)}`, captured_bytes: 99, total_bytes: 201, truncated: true, digest: sha(whole).slice(0, 8) });
    assert.deepEqual(r.result.stderr, { text: 'e'.repeat(100), captured_bytes: 100, total_bytes: 300, truncated: true, digest: sha('e'.repeat(300)).slice(0, 8) });
    assert.equal(r.result.status, 'failed');
    assert.equal(r.result.exit_code, 3);
  });

  it('runs under bubblewrap where it works: no network, nothing writable outside the copy', { skip: sandboxed ? false : 'bubblewrap is unavailable here' }, async () => {
    const listener: Server = createServer((s) => s.end('hi'));
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const port = (listener.address() as AddressInfo).port;
    // Outside both the workspace and /tmp (which the sandbox replaces with a private tmpfs).
    const varTmp = mkdtempSync('/var/tmp/rift-exec-');
    const treeBefore = tree(root);
    try {
      const r = await run(
        rift,
        'python',
        `import socket\ntry:\n  socket.create_connection(("127.0.0.1", ${port}), timeout=2); print("connected")\nexcept OSError: print("no network")\n` +
          `try:\n  open(${JSON.stringify(join(varTmp, 'escaped.txt'))}, "w"); print("wrote")\nexcept OSError as e: print(e.strerror)\n` +
          `try:\n  open(${JSON.stringify(join(root, 'src', 'a.txt'))}, "w").write("escaped")\nexcept OSError: pass`,
      );
      assert.equal(r.sandbox.kind, 'bubblewrap');
      assert.equal(r.result.stdout.text, 'no network\nRead-only file system\n');
      assert.equal(existsSync(join(varTmp, 'escaped.txt')), false);
      assert.deepEqual(tree(root), treeBefore);
    } finally {
      listener.close();
      rmSync(varTmp, { recursive: true, force: true });
    }
  });
});

describe('execute: timeout', () => {
  let root: string;
  let rift: RiftMcp;
  before(async () => {
    root = tempWorkspace({ 'rift.toml': '[execution]\nallow = ["bash"]\nmax_timeout = "2s"\n' });
    rift = await startRift(root, {}, { standalone: true });
  });
  after(async () => {
    await rift.close();
    removeWorkspace(root);
  });

  it('kills the whole process group at max_timeout and says so', async () => {
    const r = await run(rift, 'bash', 'echo begun; (sleep 3; echo late > late.txt) & sleep 30');
    assert.equal(r.result.status, 'failed');
    assert.equal(r.result.exit_code, null);
    assert.equal(r.result.stdout.text, 'begun\n');
    assert.deepEqual(
      r.result.diagnostics.map((d) => [d.code, d.message]),
      [['rift.execute.timed_out', 'the evaluation ran past [execution].max_timeout (2000 ms); its process group was killed']],
    );
    // The background child died with its group: it never writes, however long one waits.
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(existsSync(join(root, '.rift', 'exec', 'workspace', 'late.txt')), false);
  });
});

describe('execute: max_concurrent across processes (rule 170)', () => {
  let root: string;
  let a: RiftMcp;
  let b: RiftMcp;
  before(async () => {
    root = tempWorkspace({ 'rift.toml': '[execution]\nallow = ["bash"]\nmax_concurrent = 1\nmax_timeout = "2m"\n' });
    [a, b] = await Promise.all([startRift(root, {}, { standalone: true }), startRift(root, {}, { standalone: true })]);
  });
  after(async () => {
    await Promise.allSettled([a.close(), b.close()]);
    removeWorkspace(root);
  });

  it('refuses temporarily_unavailable while another server holds the only slot, and recovers it after SIGKILL', async () => {
    const flag = join(root, '.rift', 'exec', 'workspace', 'started.flag');
    const holding = run(a, 'bash', 'touch started.flag; sleep 60').catch((e: Error) => e);
    await eventually(() => (existsSync(flag) ? true : undefined), 60_000);
    const busy = await b.fail('execute', { language: 'bash', block: { source: 'echo hi' } });
    assert.deepEqual(
      { code: busy.data.code, retry: busy.data.retry, message: busy.data.message },
      {
        code: 'temporarily_unavailable',
        retry: 'same_request',
        message: 'the server cannot serve this request yet: operation execute, max_concurrent 1, detail every evaluation slot of the workspace is in use; resend the same request after a short delay',
      },
    );
    // The holder's own process is bound the same way.
    const self = await a.fail('execute', { language: 'bash', block: { source: 'echo hi' } });
    assert.equal(self.data.code, 'temporarily_unavailable');
    process.kill(a.pid!, 'SIGKILL');
    assert.ok((await holding) instanceof Error);
    // The kernel drops a dead process's locks: the same request now runs.
    const r = await eventually(async () => {
      try {
        return await run(b, 'bash', 'echo hi');
      } catch (e) {
        if ((e as { data?: { code?: string } }).data?.code === 'temporarily_unavailable') return undefined;
        throw e;
      }
    }, 30_000);
    assert.equal(r.result.stdout.text, 'hi\n');
  });
});

describe('execute: runtimes and environment', () => {
  let root: string;
  let bin: string;
  let rift: RiftMcp;
  before(async () => {
    root = tempWorkspace({ 'rift.toml': '[execution]\nallow = ["python", "javascript"]\n' });
    // A PATH holding node alone: no python3, and no bwrap.
    bin = mkdtempSync(join(tmpdir(), 'rift-exec-bin-'));
    symlinkSync(process.execPath, join(bin, 'node'));
    rift = await startRift(root, { PATH: bin, RIFT_TEST_SECRET: 'hunter2' }, { standalone: true });
  });
  after(async () => {
    await rift.close();
    removeWorkspace(root);
    rmSync(bin, { recursive: true, force: true });
  });

  it('refuses an allowed language whose runtime is not on PATH, naming it', async () => {
    const err = await rift.fail('execute', { language: 'python', block: { source: 'print(1)' } });
    assert.equal(err.data.code, 'capability_unavailable');
    assert.equal(
      err.data.message,
      "no configured provider serves this request: capability execute python, runtime python3, requires python3 on the server's PATH; adjust the request to a served capability, or configure a provider that serves it",
    );
  });

  it('runs without a sandbox where there is none, says why, and scrubs the environment', async () => {
    const r = await run(rift, 'javascript', 'console.log(Object.keys(process.env).sort().join(","))');
    assert.equal(r.sandbox.kind, 'none');
    assert.equal(r.sandbox.reason, 'bubblewrap (bwrap) is not installed — install it (Debian/Ubuntu: apt-get install bubblewrap) to run commands in a sandbox');
    const keys = r.result.stdout.text.trim().split(',');
    assert.ok(keys.includes('PATH'));
    assert.equal(keys.includes('RIFT_TEST_SECRET'), false);
    assert.equal(keys.includes('RIFT_HOME'), false);
    assert.ok(statSync(join(root, '.rift', 'exec', 'workspace')).isDirectory());
  });
});

