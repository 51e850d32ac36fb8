// Utilities a script of the product-search workspace can call. Top-level function declarations:
// the workspace's view lists each with its parameters and the comment above it.

// Trims and lower-cases a search, and squeezes inner spaces.
function normalizeSearch(text) {
  return String(text).trim().toLowerCase().replace(/\s+/g, ' ');
}

// True when min and max make a price range (both at least 0, min not above max).
function validatePriceRange(min, max) {
  if (min < 0 || max < 0) throw new Error('a price cannot be negative');
  return min <= max;
}

// The search words of a query, without words shorter than two letters.
function buildSearchQuery(text) {
  return normalizeSearch(text).split(' ').filter((w) => w.length > 1).join(' ');
}
