export function bump(input, ctx) {
  ctx.publish('updates', { round: input.round });
  return { published: input.round };
}
