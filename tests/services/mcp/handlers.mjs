// Handlers of the MCP fixture service.
export function simpleText() {
  return 'This is a simple text response for testing.';
}

export function fail() {
  throw new Error('This tool intentionally returns an error for testing');
}

export async function slow(input) {
  const ms = input.ms ?? 1500;
  await new Promise((resolve) => setTimeout(resolve, ms));
  return { waited: ms };
}

export function echo(input) {
  return { echoed: input };
}

export function add(input) {
  return { sum: input.a + input.b };
}

export function sum(input) {
  return input.reduce((a, b) => a + b, 0);
}
