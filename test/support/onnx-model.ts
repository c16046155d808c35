import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// A real, tiny sentence-embedding model for the in-process provider's tests: an ONNX graph that
// onnxruntime runs (token ids → a row of an embedding table each, masked by the attention mask,
// as `last_hidden_state`), a WordPiece `tokenizer.json` and a BERT `config.json`, in the layout
// Hugging Face publishes. Each word of a concept group gets that concept's axis, every other
// token a near-zero vector, so after mean pooling a text points at the concepts it names: two
// texts sharing no word but naming the same concept are similar. No weights are downloaded.

// Protocol buffer encoding, as much of it as an ONNX ModelProto needs.
const utf8 = new TextEncoder();
function varint(value: number | bigint): number[] {
  let n = BigInt(value);
  if (n < 0n) n += 1n << 64n;
  const out: number[] = [];
  do {
    let b = Number(n & 0x7fn);
    n >>= 7n;
    if (n !== 0n) b |= 0x80;
    out.push(b);
  } while (n !== 0n);
  return out;
}
const lengthDelimited = (field: number, b: ArrayLike<number>) => [...varint((field << 3) | 2), ...varint(b.length), ...Array.from(b)];
const text = (field: number, s: string) => lengthDelimited(field, utf8.encode(s));
const integer = (field: number, n: number | bigint) => [...varint(field << 3), ...varint(n)];
const message = (field: number, parts: number[][]) => lengthDelimited(field, parts.flat());

// ONNX field numbers (onnx.proto): TensorProto dims 1, data_type 2, name 8, raw_data 9;
// ValueInfoProto name 1, type 2; TypeProto tensor_type 1 (elem_type 1, shape 2 → dim 1 →
// dim_value 1 | dim_param 2); NodeProto input 1, output 2, op_type 4, attribute 5 (name 1, i 3,
// type 20); GraphProto node 1, name 2, initializer 5, input 11, output 12; ModelProto
// ir_version 1, producer_name 2, graph 7, opset_import 8 (domain 1, version 2).
const FLOAT = 1;
const INT64 = 7;
const tensor = (name: string, dims: number[], type: number, raw: Uint8Array) => [...dims.flatMap((d) => integer(1, d)), ...integer(2, type), ...text(8, name), ...lengthDelimited(9, raw)];
const valueInfo = (name: string, elem: number, dims: Array<number | string>) => [
  ...text(1, name),
  ...message(2, [message(1, [integer(1, elem), message(2, dims.map((d) => message(1, [typeof d === 'number' ? integer(1, d) : text(2, d)])))])]),
];
const node = (op: string, inputs: string[], outputs: string[], attributes: number[][] = []) => [...inputs.flatMap((i) => text(1, i)), ...outputs.flatMap((o) => text(2, o)), ...text(4, op), ...attributes.flat()];

function onnxModel(table: Float32Array, width: number): Uint8Array {
  const rows = table.length / width;
  const graph = [
    message(1, [node('Gather', ['table', 'input_ids'], ['gathered'])]),
    message(1, [node('Cast', ['attention_mask'], ['mask'], [message(5, [text(1, 'to'), integer(3, FLOAT), integer(20, 2)])])]),
    message(1, [node('Unsqueeze', ['mask', 'last_axis'], ['mask3'])]),
    message(1, [node('Mul', ['gathered', 'mask3'], ['last_hidden_state'])]),
    text(2, 'concepts'),
    message(5, [tensor('table', [rows, width], FLOAT, new Uint8Array(table.buffer))]),
    message(5, [tensor('last_axis', [1], INT64, new Uint8Array(new BigInt64Array([-1n]).buffer))]),
    message(11, [valueInfo('input_ids', INT64, ['batch', 'sequence'])]),
    message(11, [valueInfo('attention_mask', INT64, ['batch', 'sequence'])]),
    message(12, [valueInfo('last_hidden_state', FLOAT, ['batch', 'sequence', width])]),
  ];
  return new Uint8Array([...integer(1, 8), ...text(2, 'rift-tests'), ...message(7, graph), ...message(8, [text(1, ''), integer(2, 13)])]);
}

const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

/**
 * Writes the model into `dir` (created): `concepts` are groups of lowercase words, each group one
 * axis; `words` are other known words (near zero, like the special tokens and unknown words).
 * `file` names the weights (`model.onnx`, or `model_quantized.onnx` as quantized exports are named).
 */
export function writeConceptModel(dir: string, concepts: readonly (readonly string[])[], words: readonly string[] = [], file = 'model.onnx'): void {
  const vocabulary = [...SPECIAL, ...new Set([...concepts.flat(), ...words])];
  const width = concepts.length + 1;
  const table = new Float32Array(vocabulary.length * width);
  vocabulary.forEach((w, i) => {
    const c = concepts.findIndex((group) => group.includes(w));
    if (c >= 0) table[i * width + c] = 1;
    else table[i * width + concepts.length] = 0.01;
  });
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  writeFileSync(join(dir, 'onnx', file), onnxModel(table, width));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'bert', architectures: ['BertModel'], hidden_size: width, vocab_size: vocabulary.length }));
  const vocab = Object.fromEntries(vocabulary.map((w, i) => [w, i]));
  const special = (t: string) => ({ id: t, ids: [vocab[t]], tokens: [t] });
  const token = (id: string, typeId: number) => ({ SpecialToken: { id, type_id: typeId } });
  const sequence = (id: string, typeId: number) => ({ Sequence: { id, type_id: typeId } });
  writeFileSync(
    join(dir, 'tokenizer.json'),
    JSON.stringify({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: SPECIAL.map((t, i) => ({ id: i, content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
      normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
      pre_tokenizer: { type: 'BertPreTokenizer' },
      post_processor: {
        type: 'TemplateProcessing',
        single: [token('[CLS]', 0), sequence('A', 0), token('[SEP]', 0)],
        pair: [token('[CLS]', 0), sequence('A', 0), token('[SEP]', 0), sequence('B', 1), token('[SEP]', 1)],
        special_tokens: { '[CLS]': special('[CLS]'), '[SEP]': special('[SEP]') },
      },
      decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
      model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
    }),
  );
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({ tokenizer_class: 'BertTokenizer', do_lower_case: true, model_max_length: 512, cls_token: '[CLS]', sep_token: '[SEP]', pad_token: '[PAD]', unk_token: '[UNK]', mask_token: '[MASK]' }),
  );
}
