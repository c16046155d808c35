// Warming a thread's parser before it is needed. V8 runs tree-sitter's WebAssembly first through
// its baseline compiler, compiling each function on its first call, and optimizes the hot ones
// only once they have run a while: a fresh thread's first parses of a large file take 3-5 times
// as long as the same parses a few files later (a history walk's first parses in a new server,
// a reparse after the first edit). A serving engine's idle workers spend a bounded moment
// parsing small samples of the tree's most common languages, a parse at a time, and stop at the
// first real request.

import { LANGUAGE_IDS, withTree } from './runtime.ts';
import type { LanguageId } from './types.ts';

/** One unit of each language's sample: the common constructs, numbered so the units differ. */
const UNITS: Record<LanguageId, (i: number) => string> = {
  python: (i) => `@decorator(${i})
def function_${i}(a, b=1, *args, **kwargs) -> int:
    """Documentation of function ${i}."""
    x = [a + b for a in range(${i}) if a % 2]
    if x and b:
        return {'k': x, "s": f"v{a}"}
    for y in x:
        try:
            y.call(a, b)
        except Exception as e:
            raise ValueError(e) from e
    return 0


class Shape${i}(Base):
    size: int = ${i}

    def area(self, q):
        with open(q) as f:
            return self.size * len(f.read())

`,
  typescript: (i) => `export interface Shape${i} { readonly id: number; name?: string; tags: Array<string> }
export class Box${i}<T> extends Base implements Shape${i} {
  private items: T[] = [];
  constructor(public id: number, name = \`box \${${i}}\`) { super(name); }
  get size(): number { return this.items.length; }
  async load(path: string): Promise<T | undefined> {
    for (const x of this.items) { if (x === undefined) continue; }
    try { return await fetch(path).then((r) => r.json() as T); } catch (e) { throw new Error(String(e)); }
  }
}
export function make${i}(n: number, ...rest: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  switch (n) { case 0: return out; default: out[rest[0] ?? 'k'] = n * 2; }
  return out;
}
export type Pair${i} = [key: string, value: number] | null;
enum Color${i} { Red = 1, Green, Blue }
`,
  tsx: (i) => `export interface Props${i} { title: string; items: number[] }
export function View${i}({ title, items }: Props${i}): JSX.Element {
  const [open, setOpen] = useState<boolean>(false);
  return (
    <div className="view" onClick={() => setOpen(!open)}>
      <h1>{title}</h1>
      {items.map((n) => <span key={n}>{n * ${i}}</span>)}
    </div>
  );
}
export const Row${i} = (p: { label: string }) => <li>{p.label}</li>;
`,
  javascript: (i) => `export class Store${i} extends Base {
  #items = new Map();
  constructor(name = 'store ${i}') { super(name); this.count = 0; }
  add(key, value) { this.#items.set(key, { value, at: Date.now() }); return this; }
  *entries() { for (const [k, v] of this.#items) yield [k, v.value]; }
}
export function parse${i}(text, { strict = false } = {}) {
  const m = /^(\\w+)=(.*)$/.exec(text);
  if (!m) return strict ? null : { key: text };
  return { key: m[1], value: m[2] ?? \`none \${${i}}\` };
}
export const double${i} = async (xs) => Promise.all(xs.map(async (x) => x * 2));
`,
  rust: (i) => `#[derive(Debug, Clone)]
pub struct Shape${i}<'a, T: Clone> {
    name: &'a str,
    items: Vec<T>,
}

impl<'a, T: Clone> Shape${i}<'a, T> {
    pub fn new(name: &'a str) -> Self {
        Self { name, items: Vec::new() }
    }

    pub fn find(&self, key: usize) -> Option<&T> {
        match self.items.get(key) {
            Some(x) if key > ${i} => Some(x),
            Some(x) => Some(x),
            None => None,
        }
    }
}

pub trait Area${i} {
    fn area(&self) -> f64;
}

pub enum Kind${i} { Circle(f64), Square { side: f64 }, Empty }

fn total${i}(xs: &[i64]) -> Result<i64, String> {
    let sum: i64 = xs.iter().map(|x| x * 2).filter(|x| *x > 0).sum();
    if sum < 0 { return Err(format!("negative {}", sum)); }
    Ok(sum)
}

`,
  go: (i) => `type Shape${i} struct {
	Name  string \`json:"name"\`
	Items []int
}

func (s *Shape${i}) Area(scale float64) (float64, error) {
	if s == nil {
		return 0, errors.New("nil shape")
	}
	total := 0.0
	for _, x := range s.Items {
		total += float64(x) * scale
	}
	return total, nil
}

func Make${i}(names ...string) map[string]int {
	out := make(map[string]int, len(names))
	for i, n := range names {
		switch {
		case n == "":
			continue
		default:
			out[n] = i
		}
	}
	go func() { fmt.Println(len(out)) }()
	return out
}

`,
  java: (i) => `class Shape${i}<T extends Comparable<T>> extends Base implements Area {
    private final List<T> items = new ArrayList<>();
    @Override
    public double area(double scale) throws IOException {
        double total = 0;
        for (T x : items) {
            if (x == null) continue;
            total += scale * ${i};
        }
        try {
            return items.stream().map(x -> x.toString()).count() * total;
        } catch (RuntimeException e) {
            throw new IOException("failed " + e.getMessage(), e);
        }
    }
    static <U> Optional<U> first(List<U> xs) { return xs.isEmpty() ? Optional.empty() : Optional.of(xs.get(0)); }
}
`,
};

/** Units per sample: a few kilobytes, enough for the parser's loops to run hot, small enough for one slice. */
const SAMPLE_UNITS = 12;

const samples = new Map<LanguageId, Uint8Array>();

/** The warm-up text of a language (a Java or Go sample is wrapped as its grammar needs). */
export function warmSample(language: LanguageId): Uint8Array {
  let sample = samples.get(language);
  if (sample === undefined) {
    let text = language === 'go' ? 'package sample\n\nimport (\n\t"errors"\n\t"fmt"\n)\n\n' : '';
    for (let i = 0; i < SAMPLE_UNITS; i++) text += UNITS[language](i);
    sample = new TextEncoder().encode(text);
    samples.set(language, sample);
  }
  return sample;
}

/**
 * Parses the samples of `languages` (names other than rift's grammars are passed over) in turn,
 * one parse per turn of the event loop, until `budgetMs` of parsing is spent or `stop()` says
 * real work has arrived (checked before each parse, so a request waits behind one sample's parse
 * at most). Resolves with the parses done. Call after `initSyntax`.
 */
export async function warmParser(languages: readonly string[], budgetMs: number, stop: () => boolean): Promise<number> {
  const known = LANGUAGE_IDS.filter((id) => languages.includes(id));
  let spent = 0;
  let parses = 0;
  for (let turn = 0; known.length > 0 && spent < budgetMs; turn++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (stop()) break;
    const language = known[turn % known.length];
    const started = performance.now();
    withTree(language, warmSample(language), (tree) => tree.rootNode.descendantCount);
    spent += performance.now() - started;
    parses++;
  }
  return parses;
}
