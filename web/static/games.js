/* The list of recorded games. */
"use strict";

function resultText(result, light, dark) {
  if (result === "light") return `${light} (light) won`;
  if (result === "dark") return `${dark} (dark) won`;
  return { draw: "draw", void: "void", "*": "unfinished" }[result] || result;
}

(async () => {
  const { el, getJson } = Ponte;
  const body = document.querySelector("#games tbody");
  const when = (t) => (typeof t === "number"
    ? new Date(t * 1000).toLocaleString([], { dateStyle: "short", timeStyle: "short" }) : t);
  try {
    const { games } = await getJson("/api/games");
    document.getElementById("games-empty").hidden = games.length > 0;
    body.replaceChildren(...games.map((g) => {
      const tags = g.tags || {};
      const light = tags.Light || g.light || "Light";
      const dark = tags.Dark || g.dark || "Dark";
      const moves = Array.isArray(g.moves) ? g.moves.length : g.moves;
      return el("tr", { "data-game": g.id },
        el("td", { class: "game-id", text: g.id }),
        el("td", { class: "game-players", text: `${light} v ${dark}` }),
        el("td", { class: "game-started", "data-label": "Started", text: when(g.started) || tags.Date || "" }),
        el("td", { class: "game-moves", "data-label": "Moves", text: moves ?? "" }),
        el("td", { class: "game-result", "data-label": "Result",
          text: resultText(g.result || tags.Result || "*", light, dark) }),
        el("td", { class: "game-go" }, el("a", { href: `/games/${g.id}`, class: "button", text: "Replay" })));
    }));
    Ponte.setLink("recorded");
  } catch (e) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 6, text: `Cannot list the games: ${e.message}` })));
    Ponte.setLink("offline");
  }
})();
