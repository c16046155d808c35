import Ajv from 'ajv';
const ajv = new Ajv({ strict: false, validateFormats: true, validateSchema: false, allErrors: true });
const v = ajv.compile({ type: 'object', properties: { a: { $ref: '#/$defs/A' } }, required: ['a'], $defs: { A: { type: 'string', minLength: 2 } } });
console.log(v({ a: 'xy' }), v({ a: 'x' }), v({}));
