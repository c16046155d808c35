import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { PARSE_TIME_MAX_MS, SYNTAX_DEPTH_MAX, SYNTAX_NODES_MAX } from '../../src/core/limits.ts';
import { extractDeclarations } from '../../src/syntax/declarations.ts';
import { nodesAt } from '../../src/syntax/nodes.ts';
import { IncrementalTree, initSyntax, isSyntaxReady, LANGUAGE_IDS, SyntaxLimitError, withTree } from '../../src/syntax/runtime.ts';
import { declare, utf8 } from './support.ts';

before(() => initSyntax());

describe('syntax runtime', () => {
  it('initialises once; repeated calls are harmless', async () => {
    await Promise.all([initSyntax(), initSyntax()]);
    assert.equal(isSyntaxReady(), true);
    for (const language of LANGUAGE_IDS) {
      assert.ok(Array.isArray(extractDeclarations(language, utf8('\n')).declarations), language);
    }
  });

  it('refuses trees with too many nodes', () => {
    const elements = Math.ceil(SYNTAX_NODES_MAX / 2) + 10;
    const bytes = utf8(`x = [${'1,'.repeat(elements)}]\n`);
    assert.throws(() => extractDeclarations('python', bytes), (e: unknown) => e instanceof SyntaxLimitError && e.limit === 'nodes');
    assert.throws(() => nodesAt('python', bytes, 0), SyntaxLimitError);
  });

  it('refuses trees that are too deep', () => {
    const depth = SYNTAX_DEPTH_MAX + 10;
    const bytes = utf8(`x = ${'('.repeat(depth)}1${')'.repeat(depth)}\n`);
    assert.throws(() => extractDeclarations('python', bytes), (e: unknown) => e instanceof SyntaxLimitError && e.limit === 'depth');
    // Just under the bound parses.
    const shallow = utf8(`x = ${'('.repeat(200)}1${')'.repeat(200)}\n`);
    assert.equal(extractDeclarations('python', shallow).hasErrors, false);
  });

  it('cancels a parse that runs past PARSE_TIME_MAX_MS, and the parser then parses other files', () => {
    // Thousands of comment lines in one indented block make tree-sitter-python's scanner quadratic.
    const slow = utf8(`def f():\n${'    # a comment line\n'.repeat(6000)}    return 1\n`);
    assert.throws(
      () => extractDeclarations('python', slow),
      (e: unknown) => e instanceof SyntaxLimitError && e.limit === 'time' && e.maximum === PARSE_TIME_MAX_MS && e.observed >= PARSE_TIME_MAX_MS,
    );
    // The cancelled parse does not resume into the next one.
    const next = extractDeclarations('python', utf8('def g():\n    return 2\n'));
    assert.deepEqual(next.declarations.map((d) => d.qualifiedName), ['g']);
    assert.equal(next.hasErrors, false);
  });

  it('reports parse errors and still extracts what it can', () => {
    const r = extractDeclarations('rust', utf8('fn ok() {}\nfn broken( {\n'));
    assert.equal(r.hasErrors, true);
    assert.equal(r.declarations[0].qualifiedName, 'ok');
  });

  it('counts a UTF-8 BOM in byte offsets', () => {
    const d = declare('java', '\uFEFFclass A {}\n');
    assert.deepEqual(d[0].span, { start: 3, end: 13 });
    assert.equal(d[0].text, 'class A {}');
  });

  it('keeps byte offsets exact across parser read chunks in large non-ASCII files', () => {
    const lines: string[] = [];
    for (let i = 0; i < 1500; i++) lines.push(`// 😀é${'😀'.repeat(i % 7)}`, `fn f${i}() {}`);
    const d = declare('rust', lines.join('\n') + '\n');
    assert.equal(d.length, 1500);
    for (const [i, x] of d.entries()) assert.equal(x.text, `fn f${i}() {}`);
  });

  it('works inside a worker thread started from another directory', async () => {
    const cwd = process.cwd();
    process.chdir(tmpdir());
    try {
      // The .mjs entry registers tsx itself: an inherited `--import tsx` would resolve from
      // the cwd, and Node 20 does not apply it to a worker's entry module anyway.
      const worker = new Worker(new URL('./fixtures/worker.mjs', import.meta.url), {
        workerData: { language: 'rust', source: 'mod m { fn f() {} }\n' },
        execArgv: [],
      });
      const names = await new Promise<unknown>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      await worker.terminate();
      assert.deepEqual(names, ['m', 'm::f']);
    } finally {
      process.chdir(cwd);
    }
  });

  it('parses successive versions incrementally to the trees a fresh parse gives, whatever the caller does with a version\'s buffer after it', () => {
    // Versions of one file, each an edit of the one before (above, inside and below a function,
    // in non-ASCII text too), written one after the other into the same buffer as a history walk
    // reuses its buffers; only some versions are parsed, so the kept tree spans several edits.
    const versions: string[] = [];
    let text = `import os\n\n# héllo ✓\ndef f(a, b):\n    """Dóc."""\n    return a + b\n\n\nclass C:\n    def m(self):\n        return 'ünï'\n`;
    const edits: Array<(t: string) => string> = [
      (t) => t.replace('import os', 'import os\nimport sys'),
      (t) => t.replace('return a + b', 'return a * b  # ✓✓'),
      (t) => t.replace("'ünï'", "'ü'\n\n    def n(self, x):\n        return x"),
      (t) => t.replace('def f(a, b):', 'def f(a, b, c=1):'),
      (t) => `${t}\n\ndef g():\n    pass\n`,
      (t) => t.replace('# héllo ✓\n', ''),
      (t) => t.replace('class C:', 'class C(object):  # é'),
    ];
    versions.push(text);
    for (const e of edits) versions.push((text = e(text)));
    const buffer = Buffer.alloc(4096);
    const tree = new IncrementalTree('python');
    try {
      versions.forEach((v, i) => {
        const bytes = buffer.subarray(0, buffer.write(v, 0, 'utf8'));
        tree.advance(bytes);
        if (i % 3 !== 1) return;
        const incremental = tree.parse((t) => t.rootNode.toString());
        assert.equal(incremental, withTree('python', utf8(v), (t) => t.rootNode.toString()), `version ${i}`);
        assert.ok(!incremental.includes('ERROR'), `version ${i}`);
      });
    } finally {
      tree.close();
    }
  });
});
