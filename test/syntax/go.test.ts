import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { initSyntax } from '../../src/syntax/runtime.ts';
import { declare, get, table, utf8 } from './support.ts';

before(() => initSyntax());

describe('go declarations', () => {
  it('classifies package-level kinds, visibility and facets', () => {
    const d = declare('go', [
      'package server',
      '',
      'import "fmt"',
      '',
      'type Server struct{ addr string }',
      'type Handler interface{ Serve() }',
      'type ID = string',
      'type Count int',
      'const Version = "1"',
      'var debug bool',
      'func New() *Server { return nil }',
      'func (s *Server) Handle() {}',
      'func (s Server) close() {}',
      'func (l *List[T]) Push(v T) {}',
      'func helper() { var local int; _ = local; fmt.Println() }',
      'func main() {}',
      '',
    ].join('\n'));
    assert.deepEqual(table(d), {
      Server: ['struct', 'exported', 'type,public'],
      Handler: ['interface', 'exported', 'type,public'],
      ID: ['type_alias', 'exported', 'type,alias,public'],
      Count: ['type', 'exported', 'type,public'],
      Version: ['constant', 'exported', 'value,public'],
      debug: ['variable', 'private', 'value,mutable'],
      New: ['function', 'exported', 'value,callable,public'],
      'Server.Handle': ['method', 'exported', 'value,callable,member,public'],
      'Server.close': ['method', 'private', 'value,callable,member'],
      'List.Push': ['method', 'exported', 'value,callable,member,public'],
      helper: ['function', 'private', 'value,callable'],
      main: ['function', 'private', 'value,callable'], // not package main: no entrypoint
    });
    assert.equal(get(d, 'Server.Handle').container, 'Server');
    assert.equal(get(d, 'List.Push').container, null); // List is declared elsewhere
  });

  it('entrypoint on func main in package main; tests by signature', () => {
    const d = declare('go', [
      'package main',
      'import "testing"',
      'func main() {}',
      'func TestParse(t *testing.T) {}',
      'func BenchmarkParse(b *testing.B) {}',
      'func Testimony() {}',
      '',
    ].join('\n'));
    assert.deepEqual(get(d, 'main').facets, ['value', 'callable', 'entrypoint']);
    assert.deepEqual(get(d, 'TestParse').facets, ['value', 'callable', 'test', 'public']);
    assert.deepEqual(get(d, 'BenchmarkParse').facets, ['value', 'callable', 'test', 'public']);
    assert.deepEqual(get(d, 'Testimony').facets, ['value', 'callable', 'public']);
  });

  it('the comment group directly above attaches (godoc); blank lines and trailing comments do not', () => {
    const src = [
      'package p',
      '',
      '// Server serves.',
      '//',
      '// Deprecated: use Other.',
      'type Server struct{}',
      '',
      '// detached',
      '',
      'func A() {}',
      'var x = 1 // trailing',
      'func B() {}',
      '/* Block doc. */',
      'func C() {}',
      '',
    ].join('\n');
    const d = declare('go', src);
    assert.equal(get(d, 'Server').text, '// Server serves.\n//\n// Deprecated: use Other.\ntype Server struct{}');
    assert.equal(get(d, 'Server').facets.includes('deprecated'), true);
    assert.equal(get(d, 'A').text, 'func A() {}');
    assert.equal(get(d, 'B').text, 'func B() {}');
    assert.equal(get(d, 'C').text, '/* Block doc. */\nfunc C() {}');
  });

  it('grouped specs are their own items with their own docs', () => {
    const d = declare('go', [
      'package p',
      'const (',
      '\t// A is first.',
      '\tA = iota',
      '\tB',
      ')',
      'var (',
      '\t// x doc',
      '\tx, y int',
      ')',
      '// Single doc.',
      'const Single = 1',
      '',
    ].join('\n'));
    assert.equal(get(d, 'A').text, '// A is first.\n\tA = iota');
    assert.equal(get(d, 'B').text, 'B');
    assert.equal(get(d, 'x').text, '// x doc\n\tx, y int');
    assert.equal(get(d, 'y').text, '// x doc\n\tx, y int');
    assert.equal(get(d, 'Single').text, '// Single doc.\nconst Single = 1');
    assert.equal(get(d, 'Single').item, 'const Single = 1');
  });

  it('a repeated name gets ~2; CRLF and non-ASCII stay byte-exact', () => {
    const src = 'package p\r\n\r\nvar s = "日本語 😀"\r\n\r\n// Größe doc\r\nfunc Größe() {}\r\nfunc (t T) M() {}\r\nfunc (t *T) M() {}\r\n';
    const d = declare('go', src);
    const f = get(d, 'Größe');
    assert.equal(f.text, '// Größe doc\r\nfunc Größe() {}');
    assert.equal(f.visibility, 'exported');
    assert.equal(f.span.start, utf8(src.slice(0, src.indexOf('// Größe'))).length);
    assert.deepEqual(d.filter((x) => x.name === 'M').map((x) => x.qualifiedName), ['T.M', 'T.M~2']);
  });
});
