// The page's router: one view per hash (#/, #/game/ID, #/replay/ID, #/play, #/people, #/bot/NAME, #/host).
import { showLobby } from "./lobby.js";
import { showGame } from "./game.js";
import { showReplay } from "./replay.js";
import { showPlay } from "./play.js";
import { showPeople } from "./people.js";
import { showBot } from "./bot.js";
import { showHost } from "./host.js";
import { setStatus } from "./util.js";

let leave = null;

function route() {
  if (leave) { leave(); leave = null; }
  setStatus("");  // a view with a live connection says so itself
  const main = document.getElementById("main");
  main.replaceChildren();
  const parts = (location.hash || "#/").slice(2).split("/");
  const view = parts[0] || "";
  if (view === "game") leave = showGame(main, parts[1]);
  else if (view === "replay") leave = showReplay(main, parts[1], parts[2]);
  else if (view === "play") leave = showPlay(main, parts[1]);
  else if (view === "people") leave = showPeople(main);
  else if (view === "bot") leave = showBot(main, parts.slice(1).join("/"));
  else if (view === "host") leave = showHost(main);
  else leave = showLobby(main);
}

window.addEventListener("hashchange", route);
route();
