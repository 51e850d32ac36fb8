// The reference side of the differential test: validates JSON documents, one per input line,
// with ajv 8 (draft-07) and ajv-formats against the LAFS envelope schema, configured as the LAFS
// reference validator is (allErrors, strict, allowUnionTypes). Prints one line per document:
// "1" when valid, "0 <first error>" when not.
// Usage: NODE_PATH=<node_modules> node ajv_validate.cjs SCHEMA.json DOCUMENTS.jsonl
'use strict';
const fs = require('fs');
const Ajv = require('ajv');
const addFormats = require('ajv-formats');

const [schemaPath, docsPath] = process.argv.slice(2);
const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(fs.readFileSync(schemaPath, 'utf8')));
const out = [];
for (const line of fs.readFileSync(docsPath, 'utf8').split('\n')) {
  if (line === '') continue;
  const doc = JSON.parse(line);
  if (validate(doc)) {
    out.push('1');
  } else {
    const e = validate.errors[0];
    out.push(`0 ${e.instancePath || '/'} ${e.message}`);
  }
}
process.stdout.write(out.join('\n') + '\n');
