import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { initSyntax } from '../../src/syntax/runtime.ts';
import { declare, get, table, utf8 } from './support.ts';

before(() => initSyntax());

describe('java declarations', () => {
  it('classifies types, members, visibility and facets', () => {
    const d = declare('java', [
      'package app;',
      'import java.util.List;',
      'public final class App {',
      '  private static int count = 0, limit;',
      '  protected final String name = "";',
      '  List<String> items;',
      '  public App() {}',
      '  public static void main(String[] args) {}',
      '  static void main(int x) {}',
      '  abstract static class Base { abstract void run(); }',
      '  interface Service { void call(); default void ping() {} static Service of() { return null; } int PORT = 80; }',
      '  enum Mode { ON, OFF; Mode() {} boolean on() { return true; } }',
      '  record Pair(int a, int b) { Pair {} }',
      '  @interface Marker { int value() default 0; }',
      '  @Deprecated void old() {}',
      '  @Test void checks() {}',
      '}',
      '',
    ].join('\n'));
    assert.deepEqual(table(d), {
      App: ['class', 'public', 'type,constructible,public'],
      'App.count': ['field', 'private', 'value,member,static,mutable'],
      'App.limit': ['field', 'private', 'value,member,static,mutable'],
      'App.name': ['field', 'protected', 'value,member'],
      'App.items': ['field', 'package', 'value,member,mutable'],
      'App.App': ['constructor', 'public', 'value,callable,member,constructor,public'],
      'App.main': ['method', 'public', 'value,callable,member,static,public,entrypoint'],
      'App.main~2': ['method', 'package', 'value,callable,member,static'],
      'App.Base': ['class', 'package', 'type,abstract,static'],
      'App.Base.run': ['method', 'package', 'value,callable,member,abstract'],
      'App.Service': ['interface', 'package', 'type,static'],
      'App.Service.call': ['method', 'public', 'value,callable,member,abstract,public'],
      'App.Service.ping': ['method', 'public', 'value,callable,member,public'],
      'App.Service.of': ['method', 'public', 'value,callable,member,static,public'],
      'App.Service.PORT': ['field', 'public', 'value,member,static,public'],
      'App.Mode': ['enum', 'package', 'type,enumeration,static'],
      'App.Mode.Mode': ['constructor', 'package', 'value,callable,member,constructor'],
      'App.Mode.on': ['method', 'package', 'value,callable,member'],
      'App.Pair': ['record', 'package', 'type,constructible,static'],
      'App.Pair.Pair': ['constructor', 'package', 'value,callable,member,constructor'],
      'App.Marker': ['annotation_type', 'package', 'type,annotation,static'],
      'App.Marker.value': ['method', 'public', 'value,callable,member,abstract,public'],
      'App.old': ['method', 'package', 'value,callable,member,deprecated'],
      'App.checks': ['method', 'package', 'value,callable,member,test'],
    });
    assert.equal(get(d, 'App.Service.call').container, 'App.Service');
  });

  it('anonymous and enum-constant class bodies declare nothing; local classes qualify by method', () => {
    const d = declare('java', [
      'class A {',
      '  Runnable r = new Runnable() { public void run() {} };',
      '  enum E { X { void f() {} } }',
      '  void m() { class Local { void g() {} } }',
      '}',
      '',
    ].join('\n'));
    assert.deepEqual(d.map((x) => x.qualifiedName), ['A', 'A.r', 'A.E', 'A.m', 'A.m.Local', 'A.m.Local.g']);
  });

  it('overloads get ~2, ~3', () => {
    const d = declare('java', 'class O { void f() {} void f(int a) {} void f(String s) {} O() {} O(int a) {} }\n');
    assert.deepEqual(d.map((x) => x.qualifiedName), ['O', 'O.f', 'O.f~2', 'O.f~3', 'O.O', 'O.O~2']);
  });

  it('Javadoc attaches with annotations; plain comments and blank lines do not', () => {
    const d = declare('java', [
      'class Doc {',
      '  /** Adds. */',
      '  @Override',
      '  public int add() { return 1; }',
      '  // plain',
      '  void a() {}',
      '  /* block */',
      '  void b() {}',
      '  /** detached */',
      '',
      '  void c() {}',
      '  /** one */',
      '  void one() {}',
      '  /** two */',
      '  void two() {}',
      '}',
      '',
    ].join('\n'));
    assert.equal(get(d, 'Doc.add').text, '/** Adds. */\n  @Override\n  public int add() { return 1; }');
    assert.equal(get(d, 'Doc.add').item, '@Override\n  public int add() { return 1; }');
    assert.equal(get(d, 'Doc.a').text, 'void a() {}');
    assert.equal(get(d, 'Doc.b').text, 'void b() {}');
    assert.equal(get(d, 'Doc.c').text, 'void c() {}');
    assert.equal(get(d, 'Doc.one').text, '/** one */\n  void one() {}');
    assert.equal(get(d, 'Doc.two').text, '/** two */\n  void two() {}');
  });

  it('entrypoint variants and nested main', () => {
    const d = declare('java', [
      'public class M {',
      '  public static void main(String... args) {}',
      '  static class Inner { public static void main(String args[]) {} }',
      '  public void main(String[] args) {}',
      '}',
      '',
    ].join('\n'));
    assert.equal(get(d, 'M.main').facets.includes('entrypoint'), true);
    assert.equal(get(d, 'M.Inner.main').facets.includes('entrypoint'), true);
    assert.equal(get(d, 'M.main~2').facets.includes('entrypoint'), false); // not static
  });

  it('keeps CRLF and non-ASCII sources byte-exact', () => {
    const src = 'class Ü {\r\n  String s = "日本 😀";\r\n  /** Dóc. */\r\n  void größe() {\r\n  }\r\n}\r\n';
    const d = declare('java', src);
    const m = get(d, 'Ü.größe');
    assert.equal(m.text, '/** Dóc. */\r\n  void größe() {\r\n  }');
    assert.equal(m.span.start, utf8(src.slice(0, src.indexOf('/** Dóc'))).length);
  });
});
