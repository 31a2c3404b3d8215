// The built-in `node:assert`: the checks tools use to validate their input.
const { isDeepStrictEqual, inspect } = require("node:util");
class AssertionError extends Error {
  constructor(message) { super(message); this.name = "AssertionError"; this.code = "ERR_ASSERTION"; }
}
const fail = (message, fallback) => { throw message instanceof Error ? message : new AssertionError(message ?? fallback); };
const assert = (value, message) => { if (!value) fail(message, "The expression evaluated to a falsy value"); };
assert.ok = assert;
assert.AssertionError = AssertionError;
assert.fail = (message) => fail(message, "Failed");
assert.equal = (a, b, message) => { if (a != b) fail(message, `${inspect(a)} == ${inspect(b)}`); };
assert.notEqual = (a, b, message) => { if (a == b) fail(message, `${inspect(a)} != ${inspect(b)}`); };
assert.strictEqual = (a, b, message) => { if (!Object.is(a, b)) fail(message, `Expected values to be strictly equal: ${inspect(a)} !== ${inspect(b)}`); };
assert.notStrictEqual = (a, b, message) => { if (Object.is(a, b)) fail(message, `Expected values to differ: ${inspect(a)}`); };
assert.deepEqual = (a, b, message) => { if (!isDeepStrictEqual(a, b)) fail(message, "Expected values to be deeply equal"); };
assert.deepStrictEqual = assert.deepEqual;
assert.notDeepStrictEqual = (a, b, message) => { if (isDeepStrictEqual(a, b)) fail(message, "Expected values not to be deeply equal"); };
assert.throws = (run, _expected, message) => { try { run(); } catch { return; } fail(message, "Missing expected exception"); };
assert.rejects = async (run, _expected, message) => { try { await (typeof run === "function" ? run() : run); } catch { return; } fail(message, "Missing expected rejection"); };
assert.match = (text, pattern, message) => { if (!pattern.test(text)) fail(message, `The input did not match ${pattern}`); };
assert.strict = assert;
module.exports = assert;
