import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Visibility, isPolicyFile, rebaseGitignoreLine, type SourcePolicy } from '../../src/workspace/visibility.ts';
import { walkVisible, walkWorkspace } from '../../src/workspace/walk.ts';

const DEFAULT_EXCLUDE = ['node_modules/', 'target/', '.venv/', '__pycache__/'];

function policy(over: Partial<SourcePolicy> = {}): SourcePolicy {
  return {
    include: [],
    exclude: DEFAULT_EXCLUDE,
    respectGitignore: true,
    maxFileBytes: 4 * 1024 * 1024,
    maxFiles: 200_000,
    ...over,
  };
}

function tree(files: Record<string, string>, base?: string): string {
  const root = base ?? mkdtempSync(join(tmpdir(), 'rift-vis-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}

/**
 * The visible files, found both ways: the policy loaded whole before the walk, and read by the
 * walk as it goes (walkVisible) — which must agree exactly, skipped entries and the
 * `.gitignore` files in effect included.
 */
async function visibleFiles(root: string, p: SourcePolicy): Promise<string[]> {
  const v = await Visibility.load(root, p);
  const walk = await walkWorkspace(root, v, p);
  const onePass = await walkVisible(root, p);
  assert.deepEqual(onePass.walk, walk);
  assert.deepEqual(onePass.visibility.gitignoreFiles, v.gitignoreFiles);
  return walk.files.map((f) => f.path);
}

test('the floor (.git, .rift) is invisible at every depth under every setting', async () => {
  const root = tree({
    '.git/config': '[core]\n',
    '.git/HEAD': 'ref: refs/heads/main\n',
    '.rift/rift.db': 'x',
    'sub/.git/HEAD': 'x',
    'a/b/.rift/state': 'x',
    'src/.git': 'gitdir: ../.git/modules/src\n', // a submodule's .git file
    'src/main.ts': 'export {};\n',
  });
  try {
    const settings: SourcePolicy[] = [
      policy(),
      policy({ include: ['.git/**', '**/.rift/**', '**/.git', '**'], exclude: [], respectGitignore: false }),
      policy({ include: ['.git/', '.rift/'], exclude: [] }),
    ];
    for (const p of settings) {
      const v = await Visibility.load(root, p);
      for (const path of ['.git/config', '.rift/rift.db', 'sub/.git/HEAD', 'a/b/.rift/state', 'src/.git']) {
        assert.equal(v.isVisible(path), false, `${path} under ${JSON.stringify(p.include)}`);
      }
      assert.equal(v.isVisible('.git', true), false);
      assert.equal(v.isVisible('sub/.git', true), false);
      assert.equal(v.isVisible('a/b/.rift', true), false);
      const files = (await walkWorkspace(root, v, p)).files.map((f) => f.path);
      for (const f of files) assert.ok(!/(^|\/)\.(git|rift)(\/|$)/.test(f), f);
    }
    assert.deepEqual(await visibleFiles(root, settings[1]), ['src/main.ts']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

const GITIGNORE_TREE: Record<string, string> = {
  '.gitignore': '# build output\n*.log\nbuild/\n!keep.log\n/top-only.txt\n',
  'a.log': '',
  'keep.log': '',
  'top-only.txt': '',
  'secret.txt': '',
  'build/out.js': '',
  'build/.gitignore': '!out.js\n', // never read: nothing below an ignored directory re-includes
  'src/top-only.txt': '',
  'sub/.gitignore': 'secret.txt\n!important.log\n/only-here.txt\ncache/\n',
  'sub/x.log': '',
  'sub/important.log': '',
  'sub/secret.txt': '',
  'sub/only-here.txt': '',
  'sub/cache/data.bin': '',
  'sub/deeper/only-here.txt': '',
  'sub/deeper/secret.txt': '',
  'sub/deeper/other/secret.txt': '',
  'sub/deeper/.gitignore': '!secret.txt\n',
  'main.py': '',
};

test('root and nested .gitignore files apply relative to their directory, with negation', async () => {
  const root = tree(GITIGNORE_TREE);
  try {
    const v = await Visibility.load(root, policy());
    const expectVisible: Record<string, boolean> = {
      'a.log': false,
      'keep.log': true,
      'top-only.txt': false,
      'src/top-only.txt': true,
      'secret.txt': true,
      'build/out.js': false,
      'sub/x.log': false,
      'sub/important.log': true,
      'sub/secret.txt': false,
      'sub/only-here.txt': false,
      'sub/deeper/only-here.txt': true,
      'sub/cache/data.bin': false,
      'sub/deeper/secret.txt': true,
      'sub/deeper/other/secret.txt': true,
      'main.py': true,
      '.gitignore': true,
      'sub/.gitignore': true,
      'sub/deeper/.gitignore': true,
    };
    for (const [path, visible] of Object.entries(expectVisible)) assert.equal(v.isVisible(path), visible, path);
    assert.equal(v.isVisible('build', true), false);
    assert.equal(v.isVisible('sub/cache', true), false);
    assert.deepEqual(v.gitignoreFiles, ['.gitignore', 'sub/.gitignore', 'sub/deeper/.gitignore']);

    const files = await visibleFiles(root, policy());
    assert.deepEqual(
      files,
      Object.keys(expectVisible)
        .filter((p) => expectVisible[p])
        .sort(),
    );

    // respect_gitignore = false admits every one of them.
    const all = await visibleFiles(root, policy({ respectGitignore: false }));
    assert.deepEqual(all, Object.keys(GITIGNORE_TREE).sort());
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the .gitignore chain agrees with git itself', async (t) => {
  if (spawnSync('git', ['--version']).status !== 0) {
    t.skip('git is not available');
    return;
  }
  const root = tree(GITIGNORE_TREE);
  const home = mkdtempSync(join(tmpdir(), 'rift-vis-home-'));
  try {
    // No global or system configuration: only the tree's own .gitignore files apply.
    const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
    assert.equal(spawnSync('git', ['init', '-q'], { cwd: root, env }).status, 0);
    const out = spawnSync('git', ['ls-files', '--others', '--exclude-standard', '-z'], { cwd: root, env, encoding: 'utf8' });
    assert.equal(out.status, 0, out.stderr);
    const fromGit = out.stdout.split('\0').filter(Boolean).sort();
    assert.deepEqual(await visibleFiles(root, policy()), fromGit);
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
});

test('.git/info/exclude and a .gitignore above the root are not applied', async () => {
  const parent = mkdtempSync(join(tmpdir(), 'rift-vis-parent-'));
  try {
    tree({ '.gitignore': '*.py\nws/\n' }, parent);
    const root = tree({ '.git/info/exclude': '*.md\n', 'a.py': '', 'b.md': '', 'c.txt': '' }, join(parent, 'ws'));
    const v = await Visibility.load(root, policy());
    assert.equal(v.isVisible('a.py'), true);
    assert.equal(v.isVisible('b.md'), true);
    assert.deepEqual(await visibleFiles(root, policy()), ['a.py', 'b.md', 'c.txt']);
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test('.gitignore applies without a git repository', async () => {
  const root = tree({ '.gitignore': 'dist/\n', 'dist/a.js': '', 'src/a.ts': '' });
  try {
    assert.deepEqual(await visibleFiles(root, policy()), ['.gitignore', 'src/a.ts']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('[source].include narrows; directories stay traversable only while an include could match', async () => {
  const root = tree({
    'src/a.ts': '',
    'src/a.js': '',
    'src/d/b.ts': '',
    'lib/c.ts': '',
    'docs/README.md': '',
    'README.md': '',
    'Dockerfile': '',
  });
  try {
    const p = policy({ include: ['src/**/*.ts', 'README.md', 'Dockerfile'] });
    const v = await Visibility.load(root, p);
    // A slash-less pattern matches at any depth, so every directory stays traversable.
    assert.equal(v.isVisible('lib', true), true);
    assert.equal(v.isVisible('docs', true), true);
    assert.deepEqual(await visibleFiles(root, p), ['Dockerfile', 'README.md', 'docs/README.md', 'src/a.ts', 'src/d/b.ts']);

    const anchored = await Visibility.load(root, policy({ include: ['src/**/*.ts'] }));
    assert.equal(anchored.isVisible('src', true), true);
    assert.equal(anchored.isVisible('src/d', true), true);
    assert.equal(anchored.isVisible('lib', true), false);
    assert.equal(anchored.isVisible('docs', true), false);
    assert.equal(anchored.isVisible('src/a.js'), false);

    const q = policy({ include: ['src/d/'] });
    const w = await Visibility.load(root, q);
    assert.equal(w.isVisible('src', true), true);
    assert.equal(w.isVisible('lib', true), false);
    assert.deepEqual(await visibleFiles(root, q), ['src/d/b.ts']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('[source].exclude wins over include', async () => {
  const root = tree({ 'src/a.ts': '', 'src/gen/x.ts': '', 'src/a.snap': '', 'other.ts': '' });
  try {
    const p = policy({ include: ['src/**'], exclude: ['src/gen/', '*.snap'] });
    const v = await Visibility.load(root, p);
    assert.equal(v.isVisible('src/gen', true), false);
    assert.equal(v.isVisible('src/gen/x.ts'), false);
    assert.equal(v.isVisible('src/a.snap'), false);
    assert.deepEqual(await visibleFiles(root, p), ['src/a.ts']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('default excludes are pruned at any depth, before they are read', async () => {
  const root = tree({
    'node_modules/x/index.js': '',
    'pkg/node_modules/y.js': '',
    'target/debug/a': '',
    '.venv/lib/a.py': '',
    'pkg/__pycache__/a.pyc': '',
    'pkg/index.js': '',
  });
  try {
    // An entry the walk would report if it read the directory.
    symlinkSync('index.js', join(root, 'node_modules/x/link.js'));
    const p = policy();
    const v = await Visibility.load(root, p);
    assert.equal(v.isVisible('node_modules', true), false);
    assert.equal(v.isVisible('pkg/node_modules', true), false);
    const walk = await walkWorkspace(root, v, p);
    assert.deepEqual(
      walk.files.map((f) => f.path),
      ['pkg/index.js'],
    );
    assert.deepEqual(walk.skipped, []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('dotfiles and dot-directories other than the floor are visible', async () => {
  const root = tree({ '.env': '', '.github/workflows/ci.yml': '', '.config/tool/x.json': '', 'a/.hidden': '', '.gitignore': '' });
  try {
    assert.deepEqual(await visibleFiles(root, policy()), [
      '.config/tool/x.json',
      '.env',
      '.github/workflows/ci.yml',
      '.gitignore',
      'a/.hidden',
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('paths rift cannot address are not visible', () => {
  const v = Visibility.fromGitignores(policy(), new Map());
  assert.equal(v.isVisible(''), true);
  assert.equal(v.isVisible('a\\b.ts'), false);
  assert.equal(v.isVisible('a/../b.ts'), false);
  assert.equal(v.isVisible('./a.ts'), false);
  assert.equal(v.isVisible('/abs.ts'), false);
  assert.equal(v.isVisible('a//b.ts'), false);
  assert.equal(v.isVisible('bad\nname'), false);
  assert.equal(v.isVisible('ok/name.ts'), true);
});

test('fromGitignores builds the same policy from given contents', () => {
  const v = Visibility.fromGitignores(
    policy(),
    new Map([
      ['.gitignore', '*.log\n'],
      ['sub/.gitignore', '!x.log\n'],
    ]),
  );
  assert.equal(v.isVisible('a.log'), false);
  assert.equal(v.isVisible('sub/x.log'), true);
  assert.equal(v.isVisible('sub/y.log'), false);
  const bom = Visibility.fromGitignores(policy(), new Map([['.gitignore', '\uFEFF*.tmp\r\n']]));
  assert.equal(bom.isVisible('a.tmp'), false);
  const off = Visibility.fromGitignores(policy({ respectGitignore: false }), new Map([['.gitignore', '*\n']]));
  assert.equal(off.isVisible('a.log'), true);
});

test('nested .gitignore lines are rebased onto the root', () => {
  assert.equal(rebaseGitignoreLine('# comment', 'a'), null);
  assert.equal(rebaseGitignoreLine('', 'a'), null);
  assert.equal(rebaseGitignoreLine('   ', 'a'), null);
  assert.equal(rebaseGitignoreLine('*.log', ''), '*.log');
  assert.equal(rebaseGitignoreLine('*.log', 'a/b'), '/a/b/**/*.log');
  assert.equal(rebaseGitignoreLine('build/', 'a'), '/a/**/build/');
  assert.equal(rebaseGitignoreLine('/only', 'a'), '/a/only');
  assert.equal(rebaseGitignoreLine('x/y', 'a'), '/a/x/y');
  assert.equal(rebaseGitignoreLine('**/z', 'a'), '/a/**/z');
  assert.equal(rebaseGitignoreLine('!keep', 'a'), '!/a/**/keep');
  assert.equal(rebaseGitignoreLine('\\#lit', 'a'), '/a/**/\\#lit');
  assert.equal(rebaseGitignoreLine('*.tmp\r', 'a'), '/a/**/*.tmp');
  assert.equal(rebaseGitignoreLine('x', 'we[i]rd*'), '/we\\[i\\]rd\\*/**/x');
});

test('a directory whose name has glob characters still scopes its .gitignore', async () => {
  const root = tree({ 'a[1]/.gitignore': '*.tmp\n', 'a[1]/x.tmp': '', 'a1/x.tmp': '', 'a[1]/y.ts': '' });
  try {
    assert.deepEqual(await visibleFiles(root, policy()), ['a1/x.tmp', 'a[1]/.gitignore', 'a[1]/y.ts']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('isPolicyFile names rift.toml at the root and every .gitignore', () => {
  assert.equal(isPolicyFile('rift.toml'), true);
  assert.equal(isPolicyFile('sub/rift.toml'), false);
  assert.equal(isPolicyFile('.gitignore'), true);
  assert.equal(isPolicyFile('a/b/.gitignore'), true);
  assert.equal(isPolicyFile('a/b/x.gitignore'), false);
  assert.equal(isPolicyFile('src/main.ts'), false);
});
