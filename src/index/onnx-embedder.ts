import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type * as Transformers from '@huggingface/transformers';

// In-process embeddings: a sentence-embedding model in ONNX format, from a directory on this
// machine (the layout Hugging Face publishes: `config.json`, `tokenizer.json` and
// `onnx/model.onnx` or `onnx/model_quantized.onnx`), run by onnxruntime through
// `@huggingface/transformers`. That package is optional (hundreds of megabytes of native
// runtimes), installed beside rift by whoever uses this provider; nothing is downloaded at run
// time: remote models are off, so a directory missing a file is an error, never a fetch.
// Token vectors are mean-pooled over the attention mask and normalized, as sentence-transformers
// models are used.

export interface OnnxEmbedder {
  /** Names the weights the vectors come from (their digest), so another model's vectors are never mixed in. */
  readonly id: string;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

const WEIGHTS = [
  { file: 'model.onnx', dtype: 'fp32' },
  { file: 'model_quantized.onnx', dtype: 'q8' },
] as const;

const loaded = new Map<string, Promise<OnnxEmbedder>>();

/** The model in `dir` (absolute), loaded once per process; rejects with a message saying what to do. */
export function onnxEmbedder(dir: string): Promise<OnnxEmbedder> {
  let model = loaded.get(dir);
  if (model === undefined) {
    model = load(dir);
    // A failure is not kept: a model put in place later loads on a later call.
    model.catch(() => loaded.delete(dir));
    loaded.set(dir, model);
  }
  return model;
}

async function load(dir: string): Promise<OnnxEmbedder> {
  const isFile = (p: string) => existsSync(p) && statSync(p).isFile();
  const weights = WEIGHTS.find((w) => isFile(join(dir, 'onnx', w.file)));
  const missing = ['config.json', 'tokenizer.json'].filter((f) => !isFile(join(dir, f)));
  if (weights === undefined) missing.push('onnx/model.onnx');
  if (weights === undefined || missing.length > 0) {
    throw new Error(`no ONNX embedding model in ${dir}: it needs config.json, tokenizer.json and onnx/model.onnx (or onnx/model_quantized.onnx); missing ${missing.join(', ')}`);
  }
  let lib: typeof Transformers;
  try {
    lib = await import('@huggingface/transformers');
  } catch {
    throw new Error('the onnx embedding provider needs the optional package @huggingface/transformers: install it where rift is installed (npm install @huggingface/transformers@4.3.2)');
  }
  lib.env.allowRemoteModels = false;
  lib.env.localModelPath = '';
  lib.env.useFSCache = false;
  const path = join(dir, 'onnx', weights.file);
  const digest = await fileDigest(path);
  let extractor: Awaited<ReturnType<typeof lib.pipeline<'feature-extraction'>>>;
  try {
    extractor = await lib.pipeline('feature-extraction', dir, { dtype: weights.dtype, local_files_only: true });
  } catch (e) {
    throw new Error(`the ONNX embedding model in ${dir} could not be loaded: ${(e as Error).message.slice(0, 300)}`);
  }
  return {
    id: `onnx:sha256:${digest}`,
    async embed(texts) {
      const out = await extractor([...texts], { pooling: 'mean', normalize: true });
      const [n, width] = out.dims as [number, number];
      const data = out.data as Float32Array;
      return Array.from({ length: n }, (_, i) => data.slice(i * width, (i + 1) * width));
    },
  };
}

function fileDigest(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}
