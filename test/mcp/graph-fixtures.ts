// One small program per built-in language, written the same way in each: an entry point that
// constructs a Store imported from another file (or package) and calls its methods through a
// typed receiver; a method that reaches a field's type; a helper imported by name; a recursive
// function; a two-method cycle; a base type whose method is called through the subtype.
// The graph tests walk these over MCP.

export interface LanguageCase {
  language: string;
  files: Record<string, string>;
  /** Qualified names (by file) the tests address. */
  entry: [path: string, qname: string];
  store: [path: string, qname: string];
  find: [path: string, qname: string];
  lookup: [path: string, qname: string];
  inner: [path: string, qname: string];
  helper: [path: string, qname: string];
  recursive: [path: string, qname: string];
  base: [path: string, qname: string];
  ping: [path: string, qname: string];
}

export const CASES: LanguageCase[] = [
  {
    language: 'typescript',
    files: {
      'ts/store.ts': [
        "import { helper } from './util.js';",
        "import { Base } from './base';",
        '',
        'export class Inner {',
        '  get(): number { return 1; }',
        '}',
        '',
        'export class Store extends Base {',
        '  private readonly inner: Inner = new Inner();',
        '  find(key: string): number {',
        '    helper(key);',
        '    this.inner.get();',
        '    return this.lookup(key);',
        '  }',
        '  lookup(key: string): number {',
        '    return this.find(key);',
        '  }',
        '}',
        '',
      ].join('\n'),
      'ts/base.ts': ['export class Base {', '  ping(): void {}', '}', ''].join('\n'),
      'ts/util.ts': ['export function helper(n: string): number {', '  return n.length > 0 ? helper(n.slice(1)) : 0;', '}', ''].join('\n'),
      'ts/index.ts': ["export { Store } from './store';", "export * from './util';", ''].join('\n'),
      'ts/main.ts': [
        "import { Store } from './index';",
        '',
        'export function main(): void {',
        '  const store = new Store();',
        "  store.find('k');",
        '  store.ping();',
        '}',
        '',
      ].join('\n'),
    },
    entry: ['ts/main.ts', 'main'],
    store: ['ts/store.ts', 'Store'],
    find: ['ts/store.ts', 'Store.find'],
    lookup: ['ts/store.ts', 'Store.lookup'],
    inner: ['ts/store.ts', 'Inner.get'],
    helper: ['ts/util.ts', 'helper'],
    recursive: ['ts/util.ts', 'helper'],
    base: ['ts/base.ts', 'Base'],
    ping: ['ts/base.ts', 'Base.ping'],
  },
  {
    language: 'tsx',
    files: {
      'tsx/store.tsx': [
        "import { helper } from './util';",
        "import { Base } from './base';",
        '',
        'export class Inner {',
        '  get(): number { return 1; }',
        '}',
        '',
        'export class Store extends Base {',
        '  inner: Inner = new Inner();',
        '  find(key: string): JSX.Element {',
        '    helper(key);',
        '    this.inner.get();',
        '    this.lookup(key);',
        '    return <Row label={key} />;',
        '  }',
        '  lookup(key: string): void {',
        '    this.find(key);',
        '  }',
        '}',
        '',
        'export function Row(props: { label: string }): JSX.Element {',
        '  return <div>{props.label}</div>;',
        '}',
        '',
      ].join('\n'),
      'tsx/base.tsx': ['export class Base {', '  ping(): void {}', '}', ''].join('\n'),
      'tsx/util.tsx': ['export function helper(n: string): number {', '  return n ? helper(n.slice(1)) : 0;', '}', ''].join('\n'),
      'tsx/main.tsx': [
        "import { Store } from './store';",
        '',
        'export function main(): void {',
        '  const store: Store = new Store();',
        "  store.find('k');",
        '  store.ping();',
        '}',
        '',
      ].join('\n'),
    },
    entry: ['tsx/main.tsx', 'main'],
    store: ['tsx/store.tsx', 'Store'],
    find: ['tsx/store.tsx', 'Store.find'],
    lookup: ['tsx/store.tsx', 'Store.lookup'],
    inner: ['tsx/store.tsx', 'Inner.get'],
    helper: ['tsx/util.tsx', 'helper'],
    recursive: ['tsx/util.tsx', 'helper'],
    base: ['tsx/base.tsx', 'Base'],
    ping: ['tsx/base.tsx', 'Base.ping'],
  },
  {
    language: 'javascript',
    files: {
      'js/store.js': [
        "const { helper } = require('./util');",
        "import { Base } from './base.mjs';",
        '',
        'export class Inner {',
        '  get() { return 1; }',
        '}',
        '',
        'export class Store extends Base {',
        '  constructor() {',
        '    super();',
        '    this.inner = new Inner();',
        '  }',
        '  find(key) {',
        '    helper(key);',
        '    this.inner.get();',
        '    return this.lookup(key);',
        '  }',
        '  lookup(key) {',
        '    return this.find(key);',
        '  }',
        '}',
        '',
      ].join('\n'),
      'js/base.mjs': ['export class Base {', '  ping() {}', '}', ''].join('\n'),
      'js/util.js': ['function helper(n) {', '  return n ? helper(n - 1) : 0;', '}', 'module.exports = { helper };', ''].join('\n'),
      'js/main.js': [
        "import { Store } from './store.js';",
        '',
        'export function main() {',
        '  const store = new Store();',
        "  store.find('k');",
        '  store.ping();',
        '}',
        '',
      ].join('\n'),
    },
    entry: ['js/main.js', 'main'],
    store: ['js/store.js', 'Store'],
    find: ['js/store.js', 'Store.find'],
    lookup: ['js/store.js', 'Store.lookup'],
    inner: ['js/store.js', 'Inner.get'],
    helper: ['js/util.js', 'helper'],
    recursive: ['js/util.js', 'helper'],
    base: ['js/base.mjs', 'Base'],
    ping: ['js/base.mjs', 'Base.ping'],
  },
  {
    language: 'python',
    files: {
      'py/pkg/__init__.py': ['from .models import Store', ''].join('\n'),
      'py/pkg/base.py': ['class Base:', '    def ping(self):', '        return 1', ''].join('\n'),
      'py/pkg/util.py': ['def helper(n):', '    return helper(n - 1) if n else 0', ''].join('\n'),
      'py/pkg/models.py': [
        'from .base import Base',
        'from .util import helper',
        '',
        '',
        'class Inner:',
        '    def get(self):',
        '        return 1',
        '',
        '',
        'class Store(Base):',
        '    def __init__(self):',
        '        self.inner = Inner()',
        '',
        '    def find(self, key):',
        '        helper(key)',
        '        self.inner.get()',
        '        return self.lookup(key)',
        '',
        '    def lookup(self, key):',
        '        return self.find(key)',
        '',
      ].join('\n'),
      'py/app.py': [
        'from pkg import Store',
        '',
        '',
        'def main():',
        '    store = Store()',
        '    store.find("k")',
        '    store.ping()',
        '',
        '',
        'if __name__ == "__main__":',
        '    main()',
        '',
      ].join('\n'),
    },
    entry: ['py/app.py', 'main'],
    store: ['py/pkg/models.py', 'Store'],
    find: ['py/pkg/models.py', 'Store.find'],
    lookup: ['py/pkg/models.py', 'Store.lookup'],
    inner: ['py/pkg/models.py', 'Inner.get'],
    helper: ['py/pkg/util.py', 'helper'],
    recursive: ['py/pkg/util.py', 'helper'],
    base: ['py/pkg/base.py', 'Base'],
    ping: ['py/pkg/base.py', 'Base.ping'],
  },
  {
    language: 'rust',
    files: {
      'rs/src/base.rs': ['pub trait Base {', '    fn ping(&self) {}', '}', ''].join('\n'),
      'rs/src/util.rs': ['pub fn helper(n: u32) -> u32 {', '    if n == 0 { 0 } else { helper(n - 1) }', '}', ''].join('\n'),
      'rs/src/store.rs': [
        'use crate::base::Base;',
        'use crate::util::helper;',
        '',
        'pub struct Inner;',
        '',
        'impl Inner {',
        '    pub fn get(&self) -> u32 { 1 }',
        '}',
        '',
        'pub struct Store {',
        '    inner: Inner,',
        '}',
        '',
        'impl Store {',
        '    pub fn new() -> Store {',
        '        Store { inner: Inner }',
        '    }',
        '    pub fn find(&self, key: u32) -> u32 {',
        '        helper(key);',
        '        self.inner.get();',
        '        self.lookup(key)',
        '    }',
        '    fn lookup(&self, key: u32) -> u32 {',
        '        self.find(key)',
        '    }',
        '}',
        '',
        'impl Base for Store {}',
        '',
      ].join('\n'),
      'rs/src/main.rs': [
        'use crate::base::Base;',
        'use crate::store::Store;',
        '',
        'mod base;',
        'mod store;',
        'mod util;',
        '',
        'fn main() {',
        '    let store = Store::new();',
        '    store.find(1);',
        '    store.ping();',
        '}',
        '',
      ].join('\n'),
    },
    entry: ['rs/src/main.rs', 'main'],
    store: ['rs/src/store.rs', 'Store'],
    find: ['rs/src/store.rs', 'Store::find'],
    lookup: ['rs/src/store.rs', 'Store::lookup'],
    inner: ['rs/src/store.rs', 'Inner::get'],
    helper: ['rs/src/util.rs', 'helper'],
    recursive: ['rs/src/util.rs', 'helper'],
    base: ['rs/src/base.rs', 'Base'],
    ping: ['rs/src/base.rs', 'Base::ping'],
  },
  {
    language: 'go',
    files: {
      'go/store/base.go': ['package store', '', 'type Base struct{}', '', 'func (b *Base) Ping() {}', ''].join('\n'),
      'go/store/util.go': ['package store', '', 'func helper(n int) int {', '\tif n == 0 {', '\t\treturn 0', '\t}', '\treturn helper(n - 1)', '}', ''].join('\n'),
      'go/store/store.go': [
        'package store',
        '',
        'type Inner struct{}',
        '',
        'func (i *Inner) Get() int { return 1 }',
        '',
        'type Store struct {',
        '\tBase',
        '\tinner *Inner',
        '}',
        '',
        'func NewStore() *Store { return &Store{inner: &Inner{}} }',
        '',
        'func (s *Store) Find(key int) int {',
        '\thelper(key)',
        '\ts.inner.Get()',
        '\treturn s.lookup(key)',
        '}',
        '',
        'func (s *Store) lookup(key int) int {',
        '\treturn s.Find(key)',
        '}',
        '',
      ].join('\n'),
      'go/main.go': [
        'package main',
        '',
        'import "example.com/app/store"',
        '',
        'func main() {',
        '\ts := store.NewStore()',
        '\ts.Find(1)',
        '\ts.Ping()',
        '}',
        '',
      ].join('\n'),
    },
    entry: ['go/main.go', 'main'],
    store: ['go/store/store.go', 'Store'],
    find: ['go/store/store.go', 'Store.Find'],
    lookup: ['go/store/store.go', 'Store.lookup'],
    inner: ['go/store/store.go', 'Inner.Get'],
    helper: ['go/store/util.go', 'helper'],
    recursive: ['go/store/util.go', 'helper'],
    base: ['go/store/base.go', 'Base'],
    ping: ['go/store/base.go', 'Base.Ping'],
  },
  {
    language: 'java',
    files: {
      'java/src/com/acme/store/Base.java': ['package com.acme.store;', '', 'public class Base {', '    public void ping() {}', '}', ''].join('\n'),
      'java/src/com/acme/store/Util.java': [
        'package com.acme.store;',
        '',
        'public class Util {',
        '    public static int helper(int n) {',
        '        return n == 0 ? 0 : helper(n - 1);',
        '    }',
        '}',
        '',
      ].join('\n'),
      'java/src/com/acme/store/Inner.java': ['package com.acme.store;', '', 'class Inner {', '    int get() { return 1; }', '}', ''].join('\n'),
      'java/src/com/acme/store/Store.java': [
        'package com.acme.store;',
        '',
        'import static com.acme.store.Util.helper;',
        '',
        'public class Store extends Base {',
        '    private Inner inner = new Inner();',
        '',
        '    public int find(int key) {',
        '        helper(key);',
        '        inner.get();',
        '        return lookup(key);',
        '    }',
        '',
        '    int lookup(int key) {',
        '        return this.find(key);',
        '    }',
        '}',
        '',
      ].join('\n'),
      'java/src/com/acme/App.java': [
        'package com.acme;',
        '',
        'import com.acme.store.Store;',
        '',
        'public class App {',
        '    public static void main(String[] args) {',
        '        Store store = new Store();',
        '        store.find(1);',
        '        store.ping();',
        '    }',
        '}',
        '',
      ].join('\n'),
    },
    entry: ['java/src/com/acme/App.java', 'App.main'],
    store: ['java/src/com/acme/store/Store.java', 'Store'],
    find: ['java/src/com/acme/store/Store.java', 'Store.find'],
    lookup: ['java/src/com/acme/store/Store.java', 'Store.lookup'],
    inner: ['java/src/com/acme/store/Inner.java', 'Inner.get'],
    helper: ['java/src/com/acme/store/Util.java', 'Util.helper'],
    recursive: ['java/src/com/acme/store/Util.java', 'Util.helper'],
    base: ['java/src/com/acme/store/Base.java', 'Base'],
    ping: ['java/src/com/acme/store/Base.java', 'Base.ping'],
  },
];

/**
 * Per language, a function whose parameter's stated type is a class of another file: a
 * `references` relationship (and, where an import brings the type in, an `imports` one too).
 */
export interface ReferenceCase {
  language: string;
  files: Record<string, string>;
  referrer: [path: string, qname: string];
  referenced: [path: string, qname: string];
}

export const REFERENCE_CASES: ReferenceCase[] = [
  {
    language: 'typescript',
    files: {
      'refs/ts/model.ts': 'export class Model {}\n',
      'refs/ts/use.ts': "import { Model } from './model';\n\nexport function describe(m: Model): string {\n  return '';\n}\n",
    },
    referrer: ['refs/ts/use.ts', 'describe'],
    referenced: ['refs/ts/model.ts', 'Model'],
  },
  {
    language: 'tsx',
    files: {
      'refs/tsx/model.tsx': 'export class Model {}\n',
      'refs/tsx/use.tsx': "import { Model } from './model';\n\nexport function describe(m: Model): string {\n  return '';\n}\n",
    },
    referrer: ['refs/tsx/use.tsx', 'describe'],
    referenced: ['refs/tsx/model.tsx', 'Model'],
  },
  {
    language: 'javascript',
    files: {
      'refs/js/model.js': 'export class Model {}\n',
      'refs/js/use.js': "import { Model } from './model.js';\n\nexport function describe(m) {\n  return m instanceof Model;\n}\n",
    },
    referrer: ['refs/js/use.js', 'describe'],
    referenced: ['refs/js/model.js', 'Model'],
  },
  {
    language: 'python',
    files: {
      'refs/py/model.py': 'class Model:\n    pass\n',
      'refs/py/use.py': 'from .model import Model\n\n\ndef describe(m: Model) -> str:\n    return ""\n',
    },
    referrer: ['refs/py/use.py', 'describe'],
    referenced: ['refs/py/model.py', 'Model'],
  },
  {
    language: 'rust',
    files: {
      'refs/rs/src/model.rs': 'pub struct Model;\n',
      'refs/rs/src/lib.rs': 'mod model;\nuse crate::model::Model;\n\npub fn describe(m: &Model) -> u32 {\n    0\n}\n',
    },
    referrer: ['refs/rs/src/lib.rs', 'describe'],
    referenced: ['refs/rs/src/model.rs', 'Model'],
  },
  {
    language: 'go',
    files: {
      'refs/go/model.go': 'package refs\n\ntype Model struct{}\n',
      'refs/go/use.go': 'package refs\n\nfunc describe(m *Model) int {\n\treturn 0\n}\n',
    },
    referrer: ['refs/go/use.go', 'describe'],
    referenced: ['refs/go/model.go', 'Model'],
  },
  {
    language: 'java',
    files: {
      'refs/java/p/Model.java': 'package p;\n\nclass Model {}\n',
      'refs/java/p/Use.java': 'package p;\n\nclass Use {\n    static int describe(Model m) {\n        return 0;\n    }\n}\n',
    },
    referrer: ['refs/java/p/Use.java', 'Use.describe'],
    referenced: ['refs/java/p/Model.java', 'Model'],
  },
];

/**
 * Links no binding explains: a method called through a parameter of unknown type whose name one
 * declaration in the workspace carries, and (Python) a bare name no import binds. Each guessed
 * name is unique in its language family, which is what makes the guess.
 */
export interface HeuristicCase {
  language: string;
  files: Record<string, string>;
  guesser: [path: string, qname: string];
  guessed: [path: string, qname: string];
}

export const HEURISTIC_CASES: HeuristicCase[] = [
  {
    language: 'typescript',
    files: {
      'guess/ts/gadget.ts': 'export class Gadget {\n  recalibrateWidgets(): void {}\n}\n',
      'guess/ts/use.ts': 'export function tune(x: any): void {\n  x.recalibrateWidgets();\n}\n',
    },
    guesser: ['guess/ts/use.ts', 'tune'],
    guessed: ['guess/ts/gadget.ts', 'Gadget.recalibrateWidgets'],
  },
  {
    language: 'python',
    files: {
      'guess/py/gadget.py': 'class Gadget:\n    def recalibrate_widgets(self):\n        pass\n',
      'guess/py/use.py': 'def tune(x):\n    x.recalibrate_widgets()\n',
    },
    guesser: ['guess/py/use.py', 'tune'],
    guessed: ['guess/py/gadget.py', 'Gadget.recalibrate_widgets'],
  },
  {
    language: 'python',
    files: {
      'guess/py/lonely.py': 'def lonely_helper():\n    return 1\n',
      'guess/py/orphan.py': 'def orphan():\n    return lonely_helper()\n',
    },
    guesser: ['guess/py/orphan.py', 'orphan'],
    guessed: ['guess/py/lonely.py', 'lonely_helper'],
  },
];

export function allFiles(): Record<string, string> {
  return Object.assign({}, ...CASES.map((c) => c.files));
}

/**
 * A hub in one language: `hub` calls `count` functions declared beside it, and the first of those
 * calls `beyond`, two hops from `hub`. Generated, so a hub wider than the traversal's node bound
 * costs no fixture text.
 */
export interface Hub {
  files: Record<string, string>;
  hub: [path: string, qname: string];
  callee: (i: number) => [path: string, qname: string];
  beyond: [path: string, qname: string];
}

export function hubFixture(language: string, count: number): Hub {
  const names = Array.from({ length: count }, (_, i) => calleeName(i));
  const lines = (f: (name: string) => string) => names.map(f).join('\n');
  const first = names[0];
  switch (language) {
    case 'typescript':
    case 'tsx':
    case 'javascript': {
      const path = { typescript: 'hub/hub.ts', tsx: 'hub/hub.tsx', javascript: 'hub/hub.js' }[language];
      const t = language === 'javascript' ? '' : ': void';
      const text = [
        `export function hub()${t} {`,
        lines((n) => `  ${n}();`),
        '}',
        lines((n) => `function ${n}()${t} {${n === first ? ' beyond(); ' : ''}}`),
        `function beyond()${t} {}`,
        '',
      ].join('\n');
      return plain(path, text);
    }
    case 'python': {
      const text = ['def hub():', lines((n) => `    ${n}()`), '', lines((n) => `def ${n}():\n    ${n === first ? 'beyond()' : 'pass'}\n`), 'def beyond():', '    pass', ''].join('\n');
      return plain('hub/hub.py', text);
    }
    case 'rust': {
      const text = ['pub fn hub() {', lines((n) => `    ${n}();`), '}', lines((n) => `fn ${n}() {${n === first ? ' beyond(); ' : ''}}`), 'fn beyond() {}', ''].join('\n');
      return plain('hub/src/lib.rs', text);
    }
    case 'go': {
      const text = ['package hub', '', 'func hub() {', lines((n) => `\t${n}()`), '}', '', lines((n) => `func ${n}() {${n === first ? ' beyond() ' : ''}}`), '', 'func beyond() {}', ''].join('\n');
      return plain('hub/hub.go', text);
    }
    case 'java': {
      const text = [
        'package hub;',
        '',
        'class Hub {',
        '    static void hub() {',
        lines((n) => `        ${n}();`),
        '    }',
        lines((n) => `    static void ${n}() {${n === first ? ' beyond(); ' : ''}}`),
        '    static void beyond() {}',
        '}',
        '',
      ].join('\n');
      const path = 'hub/Hub.java';
      return { files: { [path]: text }, hub: [path, 'Hub.hub'], callee: (i) => [path, `Hub.${calleeName(i)}`], beyond: [path, 'Hub.beyond'] };
    }
    default:
      throw new Error(`no hub fixture for ${language}`);
  }
}

function calleeName(i: number): string {
  return `f${String(i).padStart(4, '0')}`;
}

/** A hub whose declarations all sit at file scope: qualified names are the names. */
function plain(path: string, text: string): Hub {
  return { files: { [path]: text }, hub: [path, 'hub'], callee: (i) => [path, calleeName(i)], beyond: [path, 'beyond'] };
}
