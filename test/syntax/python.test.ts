import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { initSyntax } from '../../src/syntax/runtime.ts';
import { declare, get, table, utf8 } from './support.ts';

before(() => initSyntax());

describe('python declarations', () => {
  it('a lambda bound by a plain assignment declares like a def in its place; other lambdas do not', () => {
    const src = [
      'square = lambda x: x * x',
      'HANDLER = lambda: None',
      '_hidden = lambda: 0',
      'typed: object = lambda: 1',
      'a, b = lambda: 1, 2',
      'calls = sorted([], key=lambda v: v)',
      'if True:',
      '    guarded = lambda: 2',
      'class Point:',
      '    __lt__ = lambda self, o: self.x < o.x',
      '    def norm(self):',
      '        inner = lambda: 3',
      '        return inner()',
      '',
    ].join('\n');
    const d = declare('python', src);
    assert.deepEqual(table(d), {
      square: ['function', 'public', 'value,callable,public'],
      HANDLER: ['function', 'public', 'value,callable,public'],
      _hidden: ['function', 'private', 'value,callable'],
      typed: ['function', 'public', 'value,callable,public'],
      guarded: ['function', 'public', 'value,callable,public'],
      Point: ['class', 'public', 'type,constructible,public'],
      'Point.__lt__': ['method', 'public', 'value,callable,member,public'],
      'Point.norm': ['method', 'public', 'value,callable,member,public'],
      'Point.norm.inner': ['function', 'public', 'value,callable,public'],
    });
    const lt = get(d, 'Point.__lt__');
    assert.equal(src.slice(lt.span.start, lt.span.end), '__lt__ = lambda self, o: self.x < o.x');
    assert.equal(lt.container, 'Point');
    assert.equal(get(d, 'Point.norm.inner').container, 'Point.norm');
  });

  it('classifies functions, classes, methods and constants', () => {
    const d = declare('python', [
      'MAX_SIZE = 10',
      '_PRIVATE_LIMIT: int = 3',
      'lower_case = 1',
      'def parse(text): return text',
      'async def fetch(): pass',
      'def _helper(): pass',
      'def numbers():',
      '    yield 1',
      'def test_parse(): pass',
      'class Parser:',
      '    kind = "x"',
      '    def __init__(self): pass',
      '    @staticmethod',
      '    def make(): pass',
      '    @classmethod',
      '    def load(cls): pass',
      '    @property',
      '    def size(self): return 0',
      '    def _reset(self): pass',
      '    def __private(self): pass',
      '    async def run(self):',
      '        def step():',
      '            yield 2',
      '        return step',
      'class _Hidden: pass',
      '',
    ].join('\n'));
    assert.deepEqual(table(d), {
      MAX_SIZE: ['constant', 'public', 'value,public'],
      _PRIVATE_LIMIT: ['constant', 'private', 'value'],
      parse: ['function', 'public', 'value,callable,public'],
      fetch: ['function', 'public', 'value,callable,public,async'],
      _helper: ['function', 'private', 'value,callable'],
      numbers: ['function', 'public', 'value,callable,public,generator'],
      test_parse: ['function', 'public', 'value,callable,test,public'],
      Parser: ['class', 'public', 'type,constructible,public'],
      'Parser.__init__': ['method', 'public', 'value,callable,member,constructor,public'],
      'Parser.make': ['method', 'public', 'value,callable,member,static,public'],
      'Parser.load': ['method', 'public', 'value,callable,member,public'],
      'Parser.size': ['method', 'public', 'value,callable,member,property,public'],
      'Parser._reset': ['method', 'private', 'value,callable,member'],
      'Parser.__private': ['method', 'private', 'value,callable,member'],
      'Parser.run': ['method', 'public', 'value,callable,member,public,async'],
      'Parser.run.step': ['function', 'public', 'value,callable,public,generator'],
      _Hidden: ['class', 'private', 'type,constructible'],
    });
    assert.equal(get(d, 'Parser.run.step').container, 'Parser.run');
    assert.equal(get(d, 'Parser.run').container, 'Parser');
  });

  it('decorators are part of the span; comments never attach', () => {
    const src = [
      '# a plain comment',
      '@dataclass',
      '@total_ordering',
      'class Point:',
      '    x: int',
      '',
      '# note',
      'def plain(): pass',
      '',
    ].join('\n');
    const d = declare('python', src);
    assert.equal(get(d, 'Point').text, '@dataclass\n@total_ordering\nclass Point:\n    x: int');
    assert.equal(get(d, 'Point').item, 'class Point:\n    x: int');
    assert.equal(get(d, 'plain').text, 'def plain(): pass');
  });

  it('nested definitions in a class body branch are still methods', () => {
    const d = declare('python', 'class C:\n    if True:\n        def m(self): pass\n');
    assert.equal(get(d, 'C.m').kind, 'method');
  });

  it('a redefinition gets ~2 in source order', () => {
    const d = declare('python', 'def f(): pass\ndef f(): pass\nclass A:\n    def m(self): pass\n    def m(self, x): pass\n');
    assert.deepEqual(d.map((x) => x.qualifiedName), ['f', 'f~2', 'A', 'A.m', 'A.m~2']);
    assert.equal(get(d, 'A.m~2').text, 'def m(self, x): pass');
  });

  it('entrypoint: module-level main with a __main__ guard only', () => {
    const guarded = declare('python', 'def main(): pass\nclass K:\n    def main(self): pass\nif __name__ == "__main__":\n    main()\n');
    assert.equal(get(guarded, 'main').facets.includes('entrypoint'), true);
    assert.equal(get(guarded, 'K.main').facets.includes('entrypoint'), false);
    const unguarded = declare('python', 'def main(): pass\n');
    assert.equal(get(unguarded, 'main').facets.includes('entrypoint'), false);
  });

  it('keeps CRLF and non-ASCII sources byte-exact', () => {
    const src = 's = "naïve 😀"\r\n# ünï\r\n@deco\r\ndef grüß():\r\n    pass\r\n';
    const d = declare('python', src);
    const f = get(d, 'grüß');
    assert.equal(f.text, '@deco\r\ndef grüß():\r\n    pass');
    assert.equal(f.span.start, utf8(src.slice(0, src.indexOf('@deco'))).length);
  });
});
