import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { initSyntax } from '../../src/syntax/runtime.ts';
import { declare, get, table, utf8 } from './support.ts';

before(() => initSyntax());

describe('typescript declarations', () => {
  it('classifies module-level kinds, visibility and facets', () => {
    const d = declare('typescript', [
      'export function parse(): void {}',
      'function* walk() {}',
      'export async function load() {}',
      'export const handler = async () => 1;',
      'const legacy = function () {};',
      'export class Parser {}',
      'export abstract class Base {}',
      'interface Shape { area(): number; readonly name: string }',
      'export type Id = string;',
      'enum Color { Red }',
      'export const LIMIT = 10;',
      'let counter = 0;',
      'var old = 1;',
      'const Klass = class {};',
      'export namespace Geo { export const unit = 1; function hidden() {} }',
      'declare module "pkg" { export function api(): void; }',
      'function main() {}',
      '',
    ].join('\n'));
    assert.deepEqual(table(d), {
      parse: ['function', 'exported', 'value,callable,public'],
      walk: ['function', 'private', 'value,callable,generator'],
      load: ['function', 'exported', 'value,callable,public,async'],
      handler: ['function', 'exported', 'value,callable,public,async'],
      legacy: ['function', 'private', 'value,callable'],
      Parser: ['class', 'exported', 'type,constructible,public'],
      Base: ['class', 'exported', 'type,abstract,public'],
      Shape: ['interface', 'private', 'type'],
      'Shape.area': ['method', 'public', 'value,callable,member'],
      'Shape.name': ['property', 'public', 'value,member,property'],
      Id: ['type_alias', 'exported', 'type,alias,public'],
      Color: ['enum', 'private', 'type,enumeration'],
      LIMIT: ['constant', 'exported', 'value,public'],
      counter: ['variable', 'private', 'value,mutable'],
      old: ['variable', 'private', 'value,mutable'],
      Klass: ['class', 'private', 'type,constructible'],
      Geo: ['namespace', 'exported', 'namespace,public'],
      'Geo.unit': ['constant', 'exported', 'value,public'],
      'Geo.hidden': ['function', 'private', 'value,callable'],
      pkg: ['module', 'private', 'namespace,module'],
      'pkg.api': ['function', 'exported', 'value,callable,public'],
      main: ['function', 'private', 'value,callable'], // no entrypoint in JS/TS
    });
  });

  it("an interface's construct signature is its `new` method; overloads number; type literals declare nothing", () => {
    const src = ['export interface ArrayCtor {', '  new (length: number): number[];', '  new <T>(...items: T[]): T[];', '  readonly prototype: unknown[];', '}', 'type Lit = { new (): Lit };', ''].join('\n');
    const d = declare('typescript', src);
    assert.deepEqual(table(d), {
      ArrayCtor: ['interface', 'exported', 'type,public'],
      'ArrayCtor.new': ['method', 'public', 'value,callable,member,constructor,public'],
      'ArrayCtor.new~2': ['method', 'public', 'value,callable,member,constructor,public'],
      'ArrayCtor.prototype': ['property', 'public', 'value,member,property,public'],
      Lit: ['type_alias', 'private', 'type,alias'],
    });
    const sig = get(d, 'ArrayCtor.new');
    assert.equal(src.slice(sig.span.start, sig.span.end), 'new (length: number): number[]');
  });

  it('classifies class members: accessibility, #private, static, abstract, async, generator, accessors', () => {
    const d = declare('typescript', [
      'export abstract class Parser<T> {',
      '  #secret = 1;',
      '  protected depth: number = 0;',
      '  private cache?: Map<string, T>;',
      '  static count = 0;',
      '  constructor(private readonly src: string) {}',
      '  abstract reset(): void;',
      '  static async *stream() {}',
      '  get size() { return 0; }',
      '  parse(): T { return null!; }',
      '}',
      'class Local { run() {} }',
      '',
    ].join('\n'));
    assert.deepEqual(table(d), {
      Parser: ['class', 'exported', 'type,abstract,public'],
      'Parser.#secret': ['property', 'private', 'value,member,property'],
      'Parser.depth': ['property', 'protected', 'value,member,property'],
      'Parser.cache': ['property', 'private', 'value,member,property'],
      'Parser.count': ['property', 'public', 'value,member,property,static,public'],
      'Parser.constructor': ['method', 'public', 'value,callable,member,constructor,public'],
      'Parser.reset': ['method', 'public', 'value,callable,member,abstract,public'],
      'Parser.stream': ['method', 'public', 'value,callable,member,static,public,async,generator'],
      'Parser.size': ['method', 'public', 'value,callable,member,property,public'],
      'Parser.parse': ['method', 'public', 'value,callable,member,public'],
      Local: ['class', 'private', 'type,constructible'],
      'Local.run': ['method', 'public', 'value,callable,member'],
    });
    assert.equal(get(d, 'Parser.parse').container, 'Parser');
  });

  it('does not declare locals, object-literal methods or class-expression arguments', () => {
    const d = declare('typescript', [
      'function outer() { const local = 1; function inner() {} }',
      'const obj = { method() {} };',
      'register(class { hook() {} });',
      'for (const item of []) {}',
      'describe("x", () => { const y = 2; });',
      '',
    ].join('\n'));
    assert.deepEqual(d.map((x) => x.qualifiedName), ['outer', 'outer.inner', 'obj']);
    assert.equal(get(d, 'outer.inner').container, 'outer');
  });

  it('overload signatures and the implementation get ~2, ~3', () => {
    const d = declare('typescript', [
      'export function f(a: string): void;',
      'export function f(a: number): void;',
      'export function f(a: unknown) {}',
      'class K { m(): void; m(x?: number) {} }',
      '',
    ].join('\n'));
    assert.deepEqual(d.map((x) => x.qualifiedName), ['f', 'f~2', 'f~3', 'K', 'K.m', 'K.m~2']);
    assert.equal(get(d, 'f~3').text, 'export function f(a: unknown) {}');
  });

  it('whole span covers JSDoc and the export statement; item span is the declaration', () => {
    const src = '/** Parses. */\nexport function parse() {}\n';
    const p = get(declare('typescript', src), 'parse');
    assert.equal(p.text, '/** Parses. */\nexport function parse() {}');
    assert.equal(p.item, 'function parse() {}');
  });

  it('plain comments and blank lines do not attach; adjacent docs do not overlap', () => {
    const d = declare('typescript', [
      '// plain',
      'function a() {}',
      '/* block */',
      'function b() {}',
      '/** detached */',
      '',
      'function c() {}',
      '/** one */',
      'function one() {}',
      '/** two */',
      'function two() {}',
      '',
    ].join('\n'));
    assert.equal(get(d, 'a').text, 'function a() {}');
    assert.equal(get(d, 'b').text, 'function b() {}');
    assert.equal(get(d, 'c').text, 'function c() {}');
    assert.equal(get(d, 'one').text, '/** one */\nfunction one() {}');
    assert.equal(get(d, 'two').text, '/** two */\nfunction two() {}');
  });

  it('decorators belong to class and member spans', () => {
    const d = declare('typescript', [
      '/** A component. */',
      '@Component({ selector: "x" })',
      'export class Widget {',
      '  /** Input. */',
      '  @Input() name = "";',
      '  /** Handler. */',
      '  @HostListener("click")',
      '  @Throttle()',
      '  onClick() {}',
      '}',
      '',
    ].join('\n'));
    assert.equal(get(d, 'Widget').text.startsWith('/** A component. */\n@Component'), true);
    assert.equal(get(d, 'Widget.name').text, '/** Input. */\n  @Input() name = ""');
    assert.equal(get(d, 'Widget.onClick').text, '/** Handler. */\n  @HostListener("click")\n  @Throttle()\n  onClick() {}');
    assert.equal(get(d, 'Widget.onClick').item, 'onClick() {}');
  });

  it('export default of anonymous class and function is named default', () => {
    const d = declare('typescript', 'export default class { run() {} }\n');
    assert.deepEqual(table(d), {
      default: ['class', 'exported', 'type,constructible,public'],
      'default.run': ['method', 'public', 'value,callable,member,public'],
    });
  });

  it('marks @deprecated JSDoc', () => {
    const d = declare('typescript', '/** @deprecated use b */\nexport function a() {}\n');
    assert.deepEqual(get(d, 'a').facets, ['value', 'callable', 'public', 'deprecated']);
  });

  it('keeps CRLF and non-ASCII sources byte-exact', () => {
    const src = 'const s = "héllo 😀";\r\n/** Dóc. */\r\nexport function ünï() {\r\n}\r\n';
    const d = declare('typescript', src);
    const f = get(d, 'ünï');
    assert.equal(f.text, '/** Dóc. */\r\nexport function ünï() {\r\n}');
    assert.equal(f.span.start, utf8(src.slice(0, src.indexOf('/** Dóc'))).length);
  });
});

describe('tsx declarations', () => {
  it('reads components and JSX', () => {
    const d = declare('tsx', [
      '/** Shows a greeting. */',
      'export const Hello = ({ name }: { name: string }) => <p>Hi {name}</p>;',
      'export function List<T,>() { return <ul></ul>; }',
      '',
    ].join('\n'));
    assert.deepEqual(table(d), {
      Hello: ['function', 'exported', 'value,callable,public'],
      List: ['function', 'exported', 'value,callable,public'],
    });
    assert.equal(get(d, 'Hello').text.startsWith('/** Shows a greeting. */\nexport const Hello'), true);
  });
});

describe('javascript declarations', () => {
  it('reads classes, fields, methods with decorators and default exports', () => {
    const d = declare('javascript', [
      '/** Doc. */',
      'export class Store {',
      '  static #instances = 0;',
      '  items = [];',
      '  @bound save() {}',
      '  async *[Symbol.asyncIterator]() {}',
      '}',
      'export default function () {}',
      'const render = () => <div />;',
      'module.exports = { Store };',
      '',
    ].join('\n'));
    assert.deepEqual(table(d), {
      Store: ['class', 'exported', 'type,constructible,public'],
      'Store.#instances': ['property', 'private', 'value,member,property,static'],
      'Store.items': ['property', 'public', 'value,member,property,public'],
      'Store.save': ['method', 'public', 'value,callable,member,public'],
      'Store.[Symbol.asyncIterator]': ['method', 'public', 'value,callable,member,public,async,generator'],
      default: ['function', 'exported', 'value,callable,public'],
      render: ['function', 'private', 'value,callable'],
    });
    assert.equal(get(d, 'Store.save').text, '@bound save() {}');
    assert.equal(get(d, 'Store').text.startsWith('/** Doc. */\nexport class Store'), true);
  });
});
