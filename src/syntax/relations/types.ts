// What one file says about its relationships, as written: the names it imports, the names its
// declarations call, construct, extend and mention, and the types its members and locals carry.
// Nothing here is resolved; the binding provider in index/graph/ resolves names across files.

/** Relationship kinds a syntax walk can see. `contains` comes from the declarations themselves. */
export type ReferenceKind = 'calls' | 'constructs' | 'references' | 'extends' | 'implements' | 'embeds';

/**
 * How the referenced name was qualified where it was written:
 * - `none`   a bare name (`f()`, `Foo`)
 * - `self`   through `this` / `self` (`this.f()`, `self.f()`)
 * - `super`  through `super` (`super.f()`, `super().f()`)
 * - `field`  through fields of `this` / `self` (`this.store.f()`, `this.a.b.f()`); `text` is the
 *            field path, `.`-joined
 * - `typed`  through a local or parameter whose type the syntax states; `text` is the type,
 *            then `#` and the field path read from it when there is one (`Store#inner`)
 * - `local`  through a local or parameter of unknown type
 * - `name`   through a non-local name (`ns.f()`, `Foo.f()`, `pkg.F()`); `text` is the name
 * - `path`   through a qualified path (`a::b::f()`, `a.b.f()`); `text` is the path as written,
 *            whitespace removed
 */
export type ReceiverKind = 'none' | 'self' | 'super' | 'field' | 'typed' | 'local' | 'name' | 'path';

export interface Reference {
  /** Qualified name of the innermost enclosing declaration of this file. */
  from: string;
  kind: ReferenceKind;
  /** The name referenced: the last segment of the callee or type. */
  name: string;
  receiver: ReceiverKind;
  /** Field, type, name or path for the receivers that carry one; null otherwise. */
  text: string | null;
  /** UTF-8 byte range of the first occurrence. */
  start: number;
  end: number;
}

export interface ImportBinding {
  /** The name bound in this file; `*` for a wildcard import (`from m import *`, `export *`). */
  local: string;
  /** The module as written (`./x.js`, `..pkg.mod`, `crate::a::b`, `example.com/m/store`, `c.d`); `` for this file. */
  module: string;
  /** The name taken from the module (`default` for a default import); null when the module itself is bound. */
  imported: string | null;
  /** Whether the binding is visible to importers of this file (TS `export … from`, Rust `pub use`). */
  reexport: boolean;
}

/** A type the syntax states for a member (`owner` a declaration) or a file-scope binding (`owner` ``). */
export interface MemberType {
  owner: string;
  member: string;
  /** The type as written, generics and references stripped (`Store`, `st.Store`, `crate::a::B`). */
  type: string;
}

export interface FileRelations {
  imports: ImportBinding[];
  references: Reference[];
  members: MemberType[];
}
