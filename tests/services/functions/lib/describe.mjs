export function describe(value) {
  return Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
}
