// People against the bots: win rates by stated experience, with 95% Wilson intervals.
import { el } from "./util.js";

export function showPeople(main) {
  const box = el("div", { id: "people" }, "loading…");
  main.append(el("h2", {}, "People against the bots"),
    el("p", {}, "Every finished game a person played here, by the experience they stated before it. ",
      "Score: wins plus half the draws, from the person's side; interval: Wilson's, 95%."), box);
  fetch("/api/people").then((r) => r.json()).then((d) => {
    if (d.rows.length === 0) { box.replaceChildren(el("p", {}, "no finished game yet")); return; }
    box.replaceChildren(el("table", { id: "people-table" },
      el("tr", {}, ["experience", "opponent", "games", "score", "score %", "95% interval"].map((h) => el("th", {}, h))),
      d.rows.map((r) => el("tr", { class: r.opponent === "all" ? "total" : "" },
        el("td", {}, r.experience), el("td", {}, r.opponent), el("td", { class: "num" }, r.games),
        el("td", { class: "num" }, r.score), el("td", { class: "num" }, r.score_pct.toFixed(1)),
        el("td", { class: "num" }, `[${r.ci95_pct[0].toFixed(1)}, ${r.ci95_pct[1].toFixed(1)}]`)))));
  });
  return () => {};
}
