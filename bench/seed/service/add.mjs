export function add(input) {
  return { sum: input.a + input.b };
}
