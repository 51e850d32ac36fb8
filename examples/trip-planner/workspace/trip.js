// Utilities for the trip-planner workspace's scripts.

// The item of `list` with the lowest `field` (null for an empty list).
function cheapest(list, field) {
  if (!Array.isArray(list) || list.length === 0) return null;
  return list.reduce((best, x) => (x[field] < best[field] ? x : best));
}

// What a flight and `nights` nights in a hotel cost together.
function tripCost(flight, hotel, nights) {
  return (flight ? flight.price_usd : 0) + (hotel ? hotel.rate_usd * nights : 0);
}
