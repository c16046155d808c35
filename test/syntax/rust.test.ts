import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { initSyntax } from '../../src/syntax/runtime.ts';
import { declare, get, table, utf8 } from './support.ts';

before(() => initSyntax());

describe('rust declarations', () => {
  it('classifies every declaration kind with visibility and facets', () => {
    const d = declare('rust', [
      'use std::fmt;',
      'pub fn free() {}',
      'pub async fn fetch() {}',
      'pub(crate) struct Point { x: i32 }',
      'pub enum Shape { Circle, Square }',
      'pub(super) trait Speaks { fn say(&self); fn hello(&self) {} }',
      'pub(in crate::geo) type Alias = u8;',
      'const LIMIT: u8 = 1;',
      'pub static NAME: &str = "x";',
      'static mut COUNTER: u32 = 0;',
      'mod inner { pub fn helper() {} }',
      'macro_rules! shout { () => {} }',
      'impl Point { pub fn new() -> Self { Point { x: 0 } } fn len(&self) -> i32 { 0 } }',
      '',
    ].join('\n'));
    assert.deepEqual(table(d), {
      free: ['function', 'pub', 'value,callable,public'],
      fetch: ['function', 'pub', 'value,callable,public,async'],
      Point: ['struct', 'pub(crate)', 'type'],
      Shape: ['enum', 'pub', 'type,enumeration,public'],
      Speaks: ['trait', 'pub(super)', 'type'],
      'Speaks::hello': ['method', 'private', 'value,callable,member'],
      Alias: ['type_alias', 'pub(in crate::geo)', 'type,alias'],
      LIMIT: ['constant', 'private', 'value'],
      NAME: ['static', 'pub', 'value,public'],
      COUNTER: ['static', 'private', 'value,mutable'],
      inner: ['module', 'private', 'namespace,module'],
      'inner::helper': ['function', 'pub', 'value,callable,public'],
      shout: ['macro', 'private', 'macro'],
      'Point::new': ['method', 'pub', 'value,callable,member,public'],
      'Point::len': ['method', 'private', 'value,callable,member'],
    });
    // Bodyless trait signatures, variants, fields, impl blocks and `use` are not declarations.
    assert.equal(d.some((x) => x.name === 'say' || x.name === 'Circle' || x.name === 'x' || x.name === 'fmt'), false);
  });

  it('qualifies by mod, trait and impl type (whitespace removed) and links containers', () => {
    const d = declare('rust', [
      'mod outer { pub mod deep { pub struct Beacon; impl Beacon { pub fn signal(&self) {} } } }',
      'struct Wrap<T>(T);',
      'impl<T: Clone> Wrap< T > { fn get(&self) {} }',
      'trait Tr { fn run(&self) {} }',
      'impl Tr for Wrap<u8> { fn run(&self) {} }',
      'impl Missing { fn orphan() {} }',
      '',
    ].join('\n'));
    assert.deepEqual(d.map((x) => [x.qualifiedName, x.container]), [
      ['outer', null],
      ['outer::deep', 'outer'],
      ['outer::deep::Beacon', 'outer::deep'],
      ['outer::deep::Beacon::signal', 'outer::deep::Beacon'],
      ['Wrap', null],
      ['Wrap<T>::get', 'Wrap'],
      ['Tr', null],
      ['Tr::run', 'Tr'],
      ['Wrap<u8>::run', 'Wrap'],
      ['Missing::orphan', null],
    ]);
  });

  it('qualifies items nested in a function body by the function', () => {
    const d = declare('rust', 'impl S { fn outer(&self) { fn inner() {} } }\nstruct S;\n');
    assert.deepEqual(table(d)['S::outer::inner'], ['function', 'private', 'value,callable']);
    assert.equal(get(d, 'S::outer::inner').container, 'S::outer');
  });

  it('struct span includes leading doc and derive; item span excludes them', () => {
    const src = '//! crate docs\n\n/// A point.\n/// Two lines.\n#[derive(Debug)]\npub struct P { x: i32 }\n';
    const p = get(declare('rust', src), 'P');
    assert.equal(p.text, '/// A point.\n/// Two lines.\n#[derive(Debug)]\npub struct P { x: i32 }');
    assert.equal(p.item, 'pub struct P { x: i32 }');
    assert.equal(p.span.start, src.indexOf('/// A point.'));
  });

  it('attribute-only and block doc comments attach', () => {
    const d = declare('rust', '#[inline]\nfn fast() {}\n/** Block doc. */\nenum E { A }\n');
    assert.equal(get(d, 'fast').text, '#[inline]\nfn fast() {}');
    assert.equal(get(d, 'E').text, '/** Block doc. */\nenum E { A }');
  });

  it('a blank line detaches; plain and inner comments never attach', () => {
    const d = declare('rust', [
      '/// detached',
      '',
      'fn a() {}',
      '// plain',
      'fn b() {}',
      '/* plain block */',
      'fn c() {}',
      '/// doc',
      '// plain between',
      'fn d() {}',
      '//// four slashes are plain',
      'fn e() {}',
      '',
    ].join('\n'));
    assert.equal(get(d, 'a').text, 'fn a() {}');
    assert.equal(get(d, 'b').text, 'fn b() {}');
    assert.equal(get(d, 'c').text, 'fn c() {}');
    assert.equal(get(d, 'd').text, 'fn d() {}');
    assert.equal(get(d, 'e').text, 'fn e() {}');
  });

  it('inner docs and inner attributes at file top stay out of the first item', () => {
    const d = declare('rust', '//! inner doc\n#![allow(dead_code)]\n/*! inner block */\n/// own doc\nfn first() {}\n');
    assert.equal(get(d, 'first').text, '/// own doc\nfn first() {}');
  });

  it('adjacent documented items never overlap', () => {
    const d = declare('rust', '/// one\nfn one() {}\n/// two\n#[cold]\nfn two() {}\n');
    const one = get(d, 'one');
    const two = get(d, 'two');
    assert.equal(one.text, '/// one\nfn one() {}');
    assert.equal(two.text, '/// two\n#[cold]\nfn two() {}');
    assert.ok(one.span.end <= two.span.start);
  });

  it('test, deprecated and entrypoint facets', () => {
    const d = declare('rust', [
      '#[test]',
      'fn unit() {}',
      '#[tokio::test]',
      'async fn tokio_case() {}',
      '#[deprecated]',
      'fn old() {}',
      'fn main() { fn main() {} }',
      'mod m { fn main() {} }',
      'struct App;',
      'impl App { fn main() {} }',
      '',
    ].join('\n'));
    assert.deepEqual(get(d, 'unit').facets, ['value', 'callable', 'test']);
    assert.deepEqual(get(d, 'tokio_case').facets, ['value', 'callable', 'test', 'async']);
    assert.deepEqual(get(d, 'old').facets, ['value', 'callable', 'deprecated']);
    assert.deepEqual(get(d, 'main').facets, ['value', 'callable', 'entrypoint']);
    assert.equal(get(d, 'main::main').facets.includes('entrypoint'), false);
    assert.equal(get(d, 'm::main').facets.includes('entrypoint'), false);
    assert.equal(get(d, 'App::main').facets.includes('entrypoint'), false);
  });

  it('a repeated qualified name gets ~2, ~3 in source order', () => {
    const d = declare('rust', '#[cfg(unix)]\nfn f() {}\n#[cfg(windows)]\nfn f() {}\n#[cfg(test)]\nfn f() {}\n');
    assert.deepEqual(d.map((x) => x.qualifiedName), ['f', 'f~2', 'f~3']);
    assert.equal(get(d, 'f~2').text, '#[cfg(windows)]\nfn f() {}');
  });

  it('keeps CRLF sources exact', () => {
    const src = '/// doc\r\n#[inline]\r\nfn a() {\r\n}\r\n/// gone\r\n\r\nfn b() {}\r\n';
    const d = declare('rust', src);
    assert.equal(get(d, 'a').text, '/// doc\r\n#[inline]\r\nfn a() {\r\n}');
    assert.equal(get(d, 'b').text, 'fn b() {}');
  });

  it('reports UTF-8 byte offsets after non-ASCII text', () => {
    const src = '// ünïcödé 😀 日本\nconst S: &str = "ß😀";\n/// dóc\nfn ƒn_é() {}\n';
    const d = declare('rust', src);
    const f = get(d, 'ƒn_é');
    assert.equal(f.text, '/// dóc\nfn ƒn_é() {}');
    assert.equal(f.span.start, utf8(src.slice(0, src.indexOf('/// dóc'))).length);
    assert.equal(f.span.end, utf8(src.slice(0, src.indexOf('{}') + 2)).length);
    assert.equal(get(d, 'S').text, 'const S: &str = "ß😀";');
  });
});
