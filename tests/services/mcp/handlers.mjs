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

// Logs while it runs: an MCP client hears each line as notifications/message during the call.
export async function logging() {
  for (const step of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
    console.info(step);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return 'Tool with logging executed successfully';
}

// Media: the endpoints' output schemas say what they are (contentEncoding, contentMediaType), so
// MCP clients get image and audio blocks.
export function image() {
  return 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
}

export function audio() {
  return 'UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA';
}
