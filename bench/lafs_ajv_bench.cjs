// The ajv side of the LAFS validation benchmark: ajv 8 + ajv-formats configured as the LAFS
// reference validator (allErrors, strict, allowUnionTypes), on the same documents and with the
// same loop as hearth-lafs-bench. Prints one JSON line.
// Usage: NODE_PATH=<node_modules> node lafs_ajv_bench.cjs SCHEMA FIXTURES_DIR [SECONDS]
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');
const addFormats = require('ajv-formats');

const [schemaPath, fixtures, secondsArg] = process.argv.slice(2);
const seconds = Number(secondsArg || 3);
const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(fs.readFileSync(schemaPath, 'utf8')));

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : p.endsWith('.json') ? [p] : [];
  });
}
// The same selection as hearth-lafs-bench: envelopes, and the steps of workflow documents.
const docs = [];
for (const file of walk(fixtures).sort()) {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  const isObject = doc !== null && typeof doc === 'object' && !Array.isArray(doc);
  if (isObject && !('_meta' in doc) && ('jsonFlag' in doc || 'humanFlag' in doc)) continue;
  if (isObject && Array.isArray(doc.envelopes)) {
    for (const step of doc.envelopes) docs.push(step.envelope);
  } else {
    docs.push(doc);
  }
}
const valid = docs.filter((d) => validate(d)).length;
let validations = 0;
let errors = 0;
const start = process.hrtime.bigint();
const stop = start + BigInt(Math.round(seconds * 1e9));
while (process.hrtime.bigint() < stop) {
  for (let round = 0; round < 100; round++) {
    for (const d of docs) {
      if (!validate(d)) errors += validate.errors.length;
    }
    validations += docs.length;
  }
}
const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ validator: 'ajv', documents: docs.length, valid, validations, seconds: elapsed,
  perSecond: Math.round(validations / elapsed), errors }));
