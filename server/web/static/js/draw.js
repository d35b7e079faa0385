// The per-game drawing: each game may have its module in render/ (heroes.js); others fall
// back to generic.js, which shows the position's JSON. A renderer exports
//   draw(view, ctx) -> Element   ctx: {layout, seats, me (1, 2 or null), pick: {...}}
//   describe(action, entry, view) -> string   entry: the log's entry (a replay's may carry the
//                                             server's `text`); view: the position it is played in
// and, for play by clicking, squaresOf(action) -> {from, card, to}.
import * as generic from "./render/generic.js";

const cache = new Map();

export async function renderer(game) {
  if (!cache.has(game)) {
    cache.set(game, import(`./render/${encodeURIComponent(game)}.js`).catch(() => generic));
  }
  return cache.get(game);
}
