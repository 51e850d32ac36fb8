// Function handlers used by tests/integration/test_functions.py.
import { describe } from './lib/describe.mjs';

export function echo(input, ctx) {
  return { input, endpoint: ctx.endpoint, service: ctx.service, about: describe(input) };
}

export async function later(input) {
  await new Promise((resolve) => setTimeout(resolve, input.ms ?? 5));
  return { waited: input.ms ?? 5 };
}

export function fail(input) {
  throw new RangeError(`bad value ${input.value}`);
}

export function spin() {
  for (;;) { /* stopped by maxExecutionTime */ }
}

export function bomb() {
  const keep = [];
  for (;;) keep.push(new Array(100000).fill(keep.length));
}

export function read(input, ctx) {
  return ctx.readFile(input.path);
}

export function addNote(input, ctx) {
  let notes = [];
  try {
    notes = JSON.parse(ctx.readFile('data/notes.json'));
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  notes.push(input.text);
  ctx.writeFile('data/notes.json', JSON.stringify(notes));
  ctx.publish('notes', { added: input.text, count: notes.length });
  return { count: notes.length };
}

export async function fetchStatus(input, ctx) {
  const response = await ctx.fetch(input.url);
  return response.status;
}

export function snapshot(input, ctx) {
  try {
    return { notes: JSON.parse(ctx.readFile('data/notes.json')) };
  } catch (e) {
    return { notes: [] };
  }
}
