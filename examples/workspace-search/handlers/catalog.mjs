// product-catalog: search over data/products.json (read-only). Called as f(input, ctx) in a jailed
// JS worker; the workspace-search example's search box and filters call searchProducts as the
// side effect of a change, and listCategories feeds its categories state.
function products(ctx) {
  return JSON.parse(ctx.readFile('data/products.json'));
}

export function searchProducts(input, ctx) {
  const pattern = (input.pattern ?? '').trim().toLowerCase();
  const words = pattern.split(/\s+/).filter(Boolean);
  const matches = products(ctx).filter((p) => {
    const text = [p.name, ...(p.tags ?? [])].join(' ').toLowerCase();
    if (!words.every((w) => text.includes(w))) return false;
    if (input.category && p.category !== input.category) return false;
    if (input.minPrice != null && p.price < input.minPrice) return false;
    if (input.maxPrice != null && p.price > input.maxPrice) return false;
    return true;
  });
  matches.sort((a, b) => a.price - b.price || a.id - b.id);
  return matches.slice(0, input.limit ?? 10);
}

export function listCategories(input, ctx) {
  const counts = new Map();
  for (const p of products(ctx)) counts.set(p.category, (counts.get(p.category) ?? 0) + 1);
  return [...counts].map(([name, count]) => ({ name, count })).sort((a, b) => a.name.localeCompare(b.name));
}
