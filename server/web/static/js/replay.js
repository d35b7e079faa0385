// A stored game: a slider and step buttons over its positions; each position is fetched from
// /api/replay/ID/at/N (re-simulated by the referee's replay module), with a link to that JSON.
import { el, valueGraph, logList, resultText } from "./util.js";
import { renderer } from "./draw.js";
import { voidForm } from "./host.js";

export function showReplay(main, gid, at) {
  const head = el("h2", {}, `replay ${gid}`);
  main.append(head);
  let alive = true;
  (async () => {
    const res = await fetch(`/api/replay/${encodeURIComponent(gid)}`);
    if (!res.ok) { head.textContent = `replay ${gid}: ${await res.text()}`; return; }
    const rp = await res.json();
    const r = await renderer(rp.game);
    head.replaceChildren(`${rp.game} #${rp.game_id}: `, el("span", { class: "seat1" }, rp.seats[0]), " vs ",
      el("span", { class: "seat2" }, rp.seats[1]), ` — ${resultText(rp.result, rp.seats)}`);
    const slider = el("input", { type: "range", id: "ply", min: 0, max: rp.plies, value: 0 });
    const label = el("span", { id: "ply-label" });
    const link = el("a", { id: "position-json", target: "_blank" }, "position as JSON");
    const board = el("div", { id: "board" });
    const side = el("div", { id: "side" });
    const step = (d) => { slider.value = String(Math.max(0, Math.min(rp.plies, Number(slider.value) + d))); show(); };
    const controls = el("div", { class: "controls" },
      el("button", { id: "first", onclick: () => { slider.value = "0"; show(); } }, "« first"),
      el("button", { id: "back", onclick: () => step(-1) }, "‹ back"), slider,
      el("button", { id: "next", onclick: () => step(1) }, "next ›"),
      el("button", { id: "last", onclick: () => { slider.value = String(rp.plies); show(); } }, "last »"),
      " ", label, " ", link);
    main.append(controls, el("div", { class: "cols" }, board, side),
      voidForm(rp.game_id, (d) => { head.append(` — voided by ${d.who}: ${d.why}`); }));
    let shown = -1;
    async function show() {
      const n = Number(slider.value);
      if (n === shown) return;
      const url = `/api/replay/${rp.game_id}/at/${n}`;
      const v = await (await fetch(url)).json();
      if (!alive || Number(slider.value) !== n) return;
      shown = n;
      label.textContent = `after ${n} of ${rp.plies} actions`;
      link.href = url;
      board.replaceChildren(r.draw(v, { layout: rp.layout, seats: rp.seats, me: null }));
      board.dataset.ply = String(n);
      side.replaceChildren(valueGraph(rp.values, rp.value_scale, rp.plies, n),
        el("h2", {}, "actions"), logList(rp.actions, r.describe, n - 1));
      const cur = side.querySelector(".log .cur");
      if (cur) cur.parentElement.scrollTop = cur.offsetTop - cur.parentElement.offsetTop - 120;
      if (location.hash !== `#/replay/${rp.game_id}/${n}`) history.replaceState(null, "", `#/replay/${rp.game_id}/${n}`);
    }
    slider.addEventListener("input", show);
    slider.value = String(at === undefined ? 0 : Math.max(0, Math.min(rp.plies, Number(at) || 0)));
    show();
  })();
  return () => { alive = false; };
}
