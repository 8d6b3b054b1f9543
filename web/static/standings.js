/* The standings over the finished games, on the Games page. */
"use strict";

(async () => {
  const { el, getJson } = Ponte;
  const body = document.querySelector("#standings tbody");
  try {
    const { standings } = await getJson("/api/standings");
    document.getElementById("standings-empty").hidden = standings.length > 0;
    body.replaceChildren(...standings.map((r, k) => el("tr", { "data-player": r.player },
      el("td", { text: k + 1 }), el("td", { text: r.player }), el("td", { text: r.games }),
      el("td", { text: r.wins }), el("td", { text: r.draws }), el("td", { text: r.losses }),
      el("td", { text: r.points }))));
  } catch (e) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 7, text: `Cannot show the standings: ${e.message}` })));
  }
})();
