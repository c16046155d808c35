import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GlobSet, patternViolation } from '../../src/core/glob.ts';

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
