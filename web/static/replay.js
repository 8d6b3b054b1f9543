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
    result.textContent = o ? Ponte.outcomeText(o, state.score, state) : "";
    const flags = state.flags || [];
    document.getElementById("flags-card").hidden = flags.length === 0;
    document.getElementById("flags").replaceChildren(...flags.map((f) => el("li", { class: "flag" },
      el("span", { class: "flag-icon", text: "⚠" }), el("strong", { text: f.message }),
      el("div", { class: "muted", text: `cells ${f.cells.join(", ")}; ${Ponte.plural(f.rounds_left, "round")} left` }))));
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

  /* The game's story from its record's events, in the order things happened: each move
     (a flagged attempt too, and one taken back) with what followed it under it. Returns
     null when the events do not end on the recorded moves (then the moves alone). */
  function story(events, moves) {
    const head = { ply: 0, text: "Before the first move", lines: [] };
    const entries = [head];
    const standing = [];
    const byFlag = {};
    const latest = () => entries[entries.length - 1];  // what happened next goes under it
    const top = () => standing[standing.length - 1];
    for (const e of events) {
      if (e.type === "move" || (e.type === "illegal" && e.move)) {
        const entry = { ply: e.ply, colour: e.colour, move: e.move, by: e.by,
          flagged: e.type === "illegal", lines: [] };
        if (entry.flagged) {
          entry.lines.push(["illegal", `Flagged: ${e.message || Ponte.reasonText(e.reason)}`]);
          byFlag[e.flag] = entry;
        }
        entries.push(entry);
        standing.push(entry);
      } else if (e.type === "state" && e.undone) {
        const gone = standing.pop();
        if (gone) { gone.gone = true; gone.lines.push(["undo", "Taken back with Undo"]); }
      } else if (e.type === "corrected") {
        const target = byFlag[e.flag] || latest();
        target.lines.push(["corrected", Ponte.describeEvent("corrected", e, { game: names })]);
        if (e.undone && standing.length && top() === target) standing.pop().gone = true;
      } else {
        const text = Ponte.describeEvent(e.type, e, { game: names });
        if (e.type === "illegal") byFlag[e.flag] = latest();
        if (text && !(e.type === "control" && e.action === "confirm")) latest().lines.push([e.type, text]);
      }
    }
    const agrees = standing.length === moves.length
      && standing.every((entry, k) => entry.move === moves[k].move);
    return agrees ? entries : null;
  }

  function entryItem(entry) {
    const moved = entry.ply > 0;
    const ply = entry.gone ? entry.ply - 1 : entry.ply;
    const mark = entry.flagged ? " ⚠" : "";
    const by = entry.by === "override" ? " (entered by override)" : "";
    const who = entry.move === "swap" ? "Swap" : colourName(entry.colour, { game: names });
    const text = moved ? `${entry.ply}. ${entry.move === "swap" ? "" : `${who} `}${entry.move}${mark}${by}` : entry.text;
    const attrs = { class: [entry.gone ? "gone" : "", moved ? "" : "start"].join(" ").trim() || null,
      onclick: () => show(ply) };
    if (entry.gone) attrs["data-before"] = String(ply); else attrs["data-ply"] = String(ply);
    return el("li", attrs,
      el("span", { class: `chip ${entry.colour || "none"}` }), el("span", { class: "move", text }),
      ...entry.lines.map(([type, line]) => el("div", { class: `muted ev ev-${type}`, text: line })));
  }

  function listMoves() {
    const last = states[states.length - 1];
    const events = (info.events || []).filter((e) => e.type !== "camera");
    let entries = story(events, last.moves);
    if (!entries) {  // a record without its events: the moves, and the ending
      entries = last.moves.map((m) => ({ ply: m.ply, colour: m.colour, move: m.move,
        flagged: Boolean(m.flag), lines: [] }));
    }
    entries = entries.filter((entry) => entry.ply > 0 || entry.lines.length);
    const o = last.outcome;
    const final = entries[entries.length - 1];
    if (o && final && !final.lines.some(([type]) => type === "end")) {
      final.lines.push(["end", `Game over. ${Ponte.outcomeText(o, last.score, { game: names })}`]);
    }
    document.getElementById("moves").replaceChildren(...entries.map(entryItem));
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
