// The lobby: running games, the last finished ones and the standings, pushed by the server
// over /ws/lobby whenever a game starts or ends.
import { el, socket, leave, resultText } from "./util.js";

// A bot's name, linked to its page (#/bot/NAME: versions, games, score history); a hosted
// version NAME@N links to NAME's page.
export function botLink(name) {
  const bot = String(name).replace(/@\d+$/, "");
  return el("a", { class: "bot-link", href: `#/bot/${encodeURIComponent(bot)}` }, name);
}

function fmtElo(x) { return x === null || x === undefined ? "—" : (x > 0 ? "+" : "") + Math.round(x); }

function standingsTable(st) {
  if (!st || !st.standings || st.standings.length === 0) return el("p", { class: "none" }, "no finished games yet");
  return el("table", { id: "standings" },
    el("tr", {}, ["#", "bot", "games", "W-D-L", "score %", "Elo", "95% interval", "forfeits"].map((h) => el("th", {}, h))),
    st.standings.map((r) => el("tr", { "data-bot": r.bot },
      el("td", { class: "num" }, r.rank), el("td", {}, botLink(r.bot)), el("td", { class: "num" }, r.games),
      el("td", { class: "num" }, `${r.wins}-${r.draws}-${r.losses}`),
      el("td", { class: "num" }, r.score_pct === null ? "—" : r.score_pct.toFixed(1)),
      el("td", { class: "num" }, fmtElo(r.elo)),
      el("td", { class: "num" }, `[${fmtElo(r.elo_ci95[0])}, ${fmtElo(r.elo_ci95[1])}]`),
      el("td", { class: "forfeits" }, forfeits(r)))));
}

// A bot's forfeits by verdict (docs/hosting.md), and whether the strike policy took it out.
function forfeits(r) {
  const kinds = Object.entries(r.verdicts || {}).map(([k, n]) => `${k} ${n}`).join(", ");
  return [kinds, r.withdrawn || ""].filter((x) => x).join("; ");
}

export function showLobby(main) {
  const live = el("div", { id: "live" });
  const done = el("div", { id: "finished" });
  const table = el("div", { id: "standings-box" });
  main.append(el("div", { class: "cols" },
    el("div", {}, el("h2", {}, "Live games"), live, el("h2", {}, "Finished games"), done),
    el("div", {}, el("h2", {}, "Standings"), table)));
  const ws = socket("/ws/lobby", (m) => {
    if (m.type !== "lobby") return;
    live.replaceChildren(m.games.length === 0 ? el("p", { class: "none" }, "no game is being played") :
      el("table", { id: "live-games" },
        el("tr", {}, ["game", "seat 1", "seat 2", "turn", ""].map((h) => el("th", {}, h))),
        m.games.map((g) => el("tr", { "data-game": g.game_id },
          el("td", {}, `${g.game} #${g.game_id}`), el("td", { class: "seat1" }, g.seats[0]),
          el("td", { class: "seat2" }, g.seats[1]), el("td", { class: "num" }, g.turn),
          el("td", {}, el("a", { href: `#/game/${g.game_id}` }, "watch"))))));
    done.replaceChildren(m.finished.length === 0 ? el("p", { class: "none" }, "none stored yet") :
      el("table", { id: "finished-games" },
        el("tr", {}, ["game", "seats", "result", "actions", ""].map((h) => el("th", {}, h))),
        m.finished.map((g) => el("tr", { "data-game": g.game_id },
          el("td", {}, `${g.game} #${g.game_id}`), el("td", {}, botLink(g.seats[0]), " – ", botLink(g.seats[1])),
          el("td", {}, resultText(g.status === "aborted" ? { winner: null, reason: "aborted" } : g, g.seats)),
          el("td", { class: "num" }, g.plies ?? ""),
          el("td", {}, el("a", { href: `#/replay/${g.game_id}` }, "replay"))))));
    table.replaceChildren(standingsTable(m.standings));
  });
  return () => leave(ws);
}
