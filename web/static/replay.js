/* One recorded game, move by move: the board, the snapshot photo and the events. */
"use strict";

(() => {
  const { el, getJson, colourName } = Ponte;
  const root = document.getElementById("replay");
  const gameId = root.dataset.gameId;
  const slider = document.getElementById("ply");
  let states = [];
  let info = {};
  let names = {};

  function eventsAt(ply) {
    return (info.events || []).filter((e) => e.ply === ply);
  }

  function show(ply) {
    ply = Math.max(0, Math.min(states.length - 1, ply));
    slider.value = ply;
    const state = Object.assign({}, states[ply], { game: names });
    PonteBoard.draw(document.getElementById("board"), state, {});
    const label = document.getElementById("ply-label");
    const m = state.last_move;
    label.textContent = ply === 0 ? "Start: empty board"
      : `Move ${ply} of ${states.length - 1}: ${m ? `${colourName(m.colour, state) || "swap"} ${m.move}` : ""}`;
    label.dataset.ply = String(ply);
    const l = state.score.light; const d = state.score.dark;
    document.getElementById("score").replaceChildren(
      el("tr", {}, el("th"), el("th", { text: "points" }), el("th", { text: "islands" }), el("th", { text: "bridges" })),
      el("tr", {}, el("th", {}, el("span", { class: "chip light" }), colourName("light", state)),
        el("td", { text: l.points }), el("td", { text: l.islands }), el("td", { text: l.bridges })),
      el("tr", {}, el("th", {}, el("span", { class: "chip dark" }), colourName("dark", state)),
        el("td", { text: d.points }), el("td", { text: d.islands }), el("td", { text: d.bridges })));
    const result = document.getElementById("result");
    const o = state.outcome;
    result.textContent = o ? (o.termination === "void" ? "Void game"
      : o.winner ? `${colourName(o.winner, state)} wins` : "Draw") : "";
    const flags = state.flags || [];
    document.getElementById("flags-card").hidden = flags.length === 0;
    document.getElementById("flags").replaceChildren(...flags.map((f) => el("li", { class: "flag" },
      el("span", { class: "flag-icon", text: "⚠" }), el("strong", { text: f.message }),
      el("div", { class: "muted", text: `cells ${f.cells.join(", ")}; ${f.rounds_left} round(s) left` }))));
    const photo = document.getElementById("snapshot");
    const none = document.getElementById("no-snapshot");
    if (ply === 0) { photo.hidden = true; none.hidden = false; } else {
      photo.onload = () => { photo.hidden = false; none.hidden = true; };
      photo.onerror = () => { photo.hidden = true; none.hidden = false; };
      photo.src = `/games/${gameId}/snapshot/${ply}.jpg`;
    }
    for (const item of document.querySelectorAll("#moves li")) {
      item.classList.toggle("current", Number(item.dataset.ply) === ply);
    }
    const current = document.querySelector("#moves li.current");
    const list = document.getElementById("moves");
    if (current) list.scrollTop = current.offsetTop - list.offsetTop - list.clientHeight / 2;
  }

  function listMoves() {
    const last = states[states.length - 1];
    const items = [];
    for (const m of last.moves) {
      const extra = eventsAt(m.ply).filter((e) => e.type !== "move")
        .map((e) => el("div", { class: "muted ev", text: `${e.type}: ${e.message || e.reason || ""}` }));
      items.push(el("li", { "data-ply": m.ply, onclick: () => show(m.ply) },
        el("span", { class: `chip ${m.colour || "none"}` }),
        `${m.ply}. ${m.move}${m.flag ? " ⚠" : ""}`, ...extra));
    }
    document.getElementById("moves").replaceChildren(...items);
  }

  async function load() {
    try {
      const [replay, game] = await Promise.all([
        getJson(`/api/games/${gameId}/replay`), getJson(`/api/games/${gameId}`)]);
      states = replay.states;
      info = game || {};
      const tags = replay.tags || {};
      names = { light: tags.Light || "", dark: tags.Dark || "" };
      document.getElementById("replay-title").textContent =
        `Game ${gameId}: ${tags.Light || "Light"} v ${tags.Dark || "Dark"}${tags.Date ? ` · ${tags.Date}` : ""}`;
      slider.max = states.length - 1;
      listMoves();
      show(states.length - 1);
      Ponte.setLink("recorded");
    } catch (e) {
      document.getElementById("ply-label").textContent = `Cannot replay this game: ${e.message}`;
      Ponte.setLink("offline");
    }
  }

  slider.addEventListener("input", () => show(Number(slider.value)));
  document.getElementById("first").addEventListener("click", () => show(0));
  document.getElementById("prev").addEventListener("click", () => show(Number(slider.value) - 1));
  document.getElementById("next").addEventListener("click", () => show(Number(slider.value) + 1));
  document.getElementById("last").addEventListener("click", () => show(states.length - 1));
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement) return;
    if (e.key === "ArrowLeft") show(Number(slider.value) - 1);
    if (e.key === "ArrowRight") show(Number(slider.value) + 1);
  });
  load();
})();
