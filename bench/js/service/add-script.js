'use strict';
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify({ sum: input.a + input.b }) + '\n');
