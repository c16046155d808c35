import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GlobSet, compileGlob, patternViolation } from '../../src/core/glob.ts';

test('a slash-less pattern matches a name at any depth', () => {
  const g = new GlobSet(['README.md']);
  assert.equal(g.matches('README.md'), true);
  assert.equal(g.matches('docs/README.md'), true);
  assert.equal(g.matches('docs/README.mdx'), false);
});

test('a pattern with a slash is anchored at the root; * does not cross /, ** does', () => {
  const g = new GlobSet(['src/*.ts']);
  assert.equal(g.matches('src/a.ts'), true);
  assert.equal(g.matches('src/d/a.ts'), false);
  assert.equal(g.matches('lib/src/a.ts'), false);
  assert.equal(new GlobSet(['src/**/*.ts']).matches('src/d/e/a.ts'), true);
});

test('a trailing slash matches directories only, and everything below them', () => {
  const g = new GlobSet(['node_modules/']);
  assert.equal(g.matches('node_modules/a/b.js'), true);
  assert.equal(g.matches('pkg/node_modules/c.js'), true);
  assert.equal(g.matches('node_modules'), false);
  assert.equal(g.matches('node_modules', true), true);
});

test('pattern violations are labelled', () => {
  assert.equal(patternViolation(''), 'empty');
  assert.equal(patternViolation('/abs'), 'absolute');
  assert.equal(patternViolation('a\\b'), 'backslash');
  assert.equal(patternViolation('a/../b'), 'dot_segment');
  assert.equal(patternViolation('a\u0001'), 'control_character');
  assert.equal(patternViolation('['), 'invalid_glob');
  assert.equal(patternViolation('src/**'), null);
});

test('source dialect: [!a] negates a class and POSIX classes work (rift.toml and search paths)', () => {
  const g = new GlobSet(['[!a].txt']);
  assert.equal(g.matches('b.txt'), true);
  assert.equal(g.matches('a.txt'), false);
  assert.equal(g.matches('d/b.txt'), true);
  assert.equal(new GlobSet(['[[:digit:]]*.log']).matches('logs/7.log'), true);
  assert.equal(new GlobSet(['[[:digit:]]*.log']).matches('logs/x.log'), false);
});

test('source dialect: an anchored include says whether a directory can still hold a match', () => {
  const g = new GlobSet(['src/*/gen/**']);
  assert.equal(g.mayMatchBelow('src'), true);
  assert.equal(g.mayMatchBelow('src/a/gen'), true);
  assert.equal(g.mayMatchBelow('lib'), false);
  assert.equal(g.mayMatchBelow('src/a/other'), false);
  assert.equal(new GlobSet(['*.rs']).mayMatchBelow('anything/deep'), true);
});

test('path dialect (permission rules): * stays within a directory, ** crosses, [!x] negates', () => {
  const m = compileGlob('src/*.ts', 'path');
  assert.equal(m('src/a.ts'), true);
  assert.equal(m('src/d/a.ts'), false);
  assert.equal(compileGlob('src/**', 'path')('src/d/a.ts'), true);
  assert.equal(compileGlob('/home/*/[!.]*', 'path')('/home/u/x'), true);
  assert.equal(compileGlob('/home/*/[!.]*', 'path')('/home/u/.x'), false);
  assert.equal(compileGlob('.env', 'path')('.env'), true);
});

test('tool dialect (the agent glob tool): * crosses /, but a*/b still needs the slash', () => {
  const m = compileGlob('a*/b', 'tool');
  assert.equal(m('ax/b'), true);
  assert.equal(m('a/x/b'), true);
  assert.equal(m('ab'), false, 'a*/b is not a**b');
  assert.equal(compileGlob('*.ts', 'tool')('src/deep/a.ts'), true);
  assert.equal(compileGlob('**/*.ts', 'tool')('a.ts'), true);
  assert.equal(compileGlob('src/**/*.ts', 'tool')('src/a.ts'), true);
  assert.equal(compileGlob('{a,b}.ts', 'tool')('b.ts'), true);
  assert.equal(compileGlob('[!a].ts', 'tool')('a.ts'), false);
  assert.equal(compileGlob('[!a].ts', 'tool')('b.ts'), true);
  assert.equal(compileGlob('?', 'tool')('/'), false);
  assert.throws(() => compileGlob('{a,b', 'tool'));
  assert.throws(() => compileGlob('[ab', 'tool'));
});

test('flat dialect (commands, URLs): only * is special and it matches anything', () => {
  assert.equal(compileGlob('git push *', 'flat')('git push origin main'), true);
  assert.equal(compileGlob('git push *', 'flat')('git pull'), false);
  assert.equal(compileGlob('echo {a,b} ?', 'flat')('echo {a,b} ?'), true);
  assert.equal(compileGlob('echo {a,b}', 'flat')('echo a'), false);
  assert.equal(compileGlob('a*b*c', 'flat')('a\nxbyc'), true);
  assert.equal(compileGlob('a*ab', 'flat')('ab'), false);
  assert.equal(compileGlob('*', 'flat')(''), true);
});

test('a set passes over patterns whose literal text a path lacks, and answers exactly as matching every ancestor does', async () => {
  const picomatch = (await import('picomatch')).default;
  const patterns = ['*.py', '*.pyi', 'node_modules/', 'src/*.ts', 'a?c.md', '**/gen/**', 'docs/**/*.md', '[ab].txt', '{x,y}.rs', 'c++/', '*', 'lib', 'lib/'];
  const paths = ['a.py', 'x.pyc', 'dir.py/b.txt', 'pkg/m.pyi', 'a/node_modules/b.js', 'node_modulesx/a', 'src/a.ts', 'src/a/b.ts', 'abc.md', 'q/abc.md', 'x/gen/y.go', 'docs/a/b.md', 'a.txt', 'x.rs', 'c++/v.h', 'lib', 'lib/x.c', 'a/lib', '.hidden.py'];
  // The reference: the pattern (anchored below any directory when slash-less) against the path
  // and each of its ancestors, a trailing-slash pattern against directories only.
  const reference = (pattern: string, path: string, isDir: boolean) => {
    const dirOnly = pattern.endsWith('/');
    const body = dirOnly ? pattern.slice(0, -1) : pattern;
    const test = picomatch(body.includes('/') ? body : `**/${body}`, { dot: true, posix: true });
    const segments = path.split('/');
    return segments.some((_, i) => (!dirOnly || i < segments.length - 1 || isDir) && test(segments.slice(0, i + 1).join('/')));
  };
  for (const pattern of patterns) {
    const set = new GlobSet([pattern]);
    for (const path of paths) for (const isDir of [false, true]) assert.equal(set.matches(path, isDir), reference(pattern, path, isDir), `${pattern} ${path} ${isDir}`);
  }
});
