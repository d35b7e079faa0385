// The fallback drawing of a game without a renderer of its own: the position's JSON.
import { el } from "../util.js";

export function draw(view) {
  return el("pre", { class: "json board-json" }, JSON.stringify(view, null, 1));
}

export function describe(action) {
  return JSON.stringify(action);
}

export function squaresOf() {
  return { from: null, card: null, to: null };
}
