// Field Notes' worker: run by hearth in a JS worker, one call at a time, under the jail. Its only
// way out is ctx.invoke, the host's capability bridge, acting as this app.
//
// summarise({limit}) reads the notes from the app's storage, saves their summary as a
// notes-summary artifact (artifacts/summary.schema.json) and returns both.

const STOP = new Set(["the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "with", "is", "it", "at"]);

export function summary(notes) {
  const counts = new Map();
  for (const note of notes) {
    for (const word of note.toLowerCase().match(/[a-z']+/g) ?? []) {
      if (!STOP.has(word)) counts.set(word, (counts.get(word) ?? 0) + 1);
    }
  }
  // Most frequent first; ties in the order first met (Map keeps it, the sort is stable).
  const topWords = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([w]) => w);
  const firstLines = notes.filter((n) => n.trim() !== "").slice(0, 3)
    .map((n) => n.split("\n")[0].slice(0, 120));
  return { count: notes.length, topWords, firstLines };
}

export async function summarise(input, ctx) {
  const limit = Number.isInteger(input?.limit) && input.limit > 0 ? input.limit : 1000;
  const { rows } = await ctx.invoke("lime.storage", "query", {
    sql: "SELECT text FROM notes ORDER BY id LIMIT ?",
    params: [limit],
  });
  const content = summary(rows.map((row) => row[0]));
  const artifact = await ctx.invoke("lime.artifacts", "create", { type: "notes-summary", content });
  return { summary: content, artifact: artifact.id };
}
