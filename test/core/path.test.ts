import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extensionOf, projectPathViolation, underFloor } from '../../src/core/path.ts';

test('every project-path violation has its label', () => {
  const cases: Array<[string, string | null]> = [
    ['src/lib.rs', null],
    ['', 'empty'],
    ['x'.repeat(5000), 'too_long'],
    ['/etc/passwd', 'absolute'],
    ['C:/x', 'absolute'],
    ['a/../b', 'dot_segment'],
    ['./a', 'dot_segment'],
    ['a//b', 'empty_segment'],
    ['a/', 'empty_segment'],
    [`a/${'é'.repeat(128)}/b`, 'segment_too_long'],
    [`a/${'é'.repeat(127)}/b`, null],
    ['a\\b', 'backslash'],
    ['a\tb', 'control_character'],
    ['cafe\u0301.py', 'non_canonical_unicode'],
    ['.rift/rift.db', 'rift_state'],
    ['pkg/.rift/x', 'rift_state'],
    ['.github/workflows/ci.yml', null],
  ];
  for (const [path, expected] of cases) assert.equal(projectPathViolation(path), expected, JSON.stringify(path));
});

test('the floor hides .git and .rift at any depth; extensions are read from the last segment', () => {
  assert.equal(underFloor('.git/config'), true);
  assert.equal(underFloor('vendor/lib/.git/HEAD'), true);
  assert.equal(underFloor('.gitignore'), false);
  assert.equal(extensionOf('src/a.test.ts'), 'ts');
  assert.equal(extensionOf('justfile'), null);
  assert.equal(extensionOf('.gitignore'), null);
  assert.equal(extensionOf('v1.2/Dockerfile'), null);
});
