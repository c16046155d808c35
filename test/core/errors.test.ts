import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_CODES, ERROR_REGISTRY, RiftError, invalidField, limitExceeded, renderError } from '../../src/core/errors.ts';

test('a rendered error names its values and its action', () => {
  assert.equal(
    invalidField('limit', 'zero').message,
    'the request does not match the documented form: field limit, violation zero; correct the reported field and resend the request',
  );
  assert.equal(renderError('internal_error', []), 'the server failed in a way it did not classify; retry once, and report the full message if the failure repeats');
});

test('every registry entry explains in lowercase without a trailing period and directs an action', () => {
  for (const code of ERROR_CODES) {
    const d = ERROR_REGISTRY[code];
    assert.match(d.explanation, /^[a-z]/, code);
    assert.doesNotMatch(d.explanation, /\.$/, code);
    assert.ok(d.action.length > 10, code);
  }
  assert.equal(ERROR_REGISTRY.resource_not_found.retry, 'operator_action');
  assert.equal(ERROR_REGISTRY.temporarily_unavailable.retry, 'same_request');
});

test('limit_exceeded always carries which limit and by how much', () => {
  const e = limitExceeded('limit', 1000, 1500);
  assert.deepEqual(e.limit, { field: 'limit', limit: 1000, required: 1500 });
  assert.equal(e.code, 'limit_exceeded');
  assert.equal(new RiftError('internal_error').limit, undefined);
});

test('retry is per instance, defaulting to the registry', () => {
  assert.equal(new RiftError('storage_failure').retry, 'same_request');
  assert.equal(new RiftError('storage_failure', [], { retry: 'operator_action' }).retry, 'operator_action');
});
