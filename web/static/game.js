/* The Game page: draws the live state, follows the event stream, sends the controls. */
"use strict";

(() => {
  const { el, getJson, postJson, colourName, cap, plural } = Ponte;
  const boardBox = document.getElementById("board");
  const placeToggle = document.getElementById("show-placeable");
  let state = null;
  let refreshing = null;
  let pendingEventId = null;

  function render(next, eventId) {
    state = next;
    PonteBoard.draw(boardBox, state, { showPlaceable: placeToggle.checked, onCell: pickCell });
    renderTurn();
    renderFlags();
    renderScore();
    renderSupply();
    renderBanner();
    renderButtons();
    renderOverrides();
    renderCamera(state.camera);
    if (state.game && state.game.id !== seededGame) seedLog();
    const drawn = { eventId: eventId === undefined ? pendingEventId : eventId,
      wall: Date.now(), moves: (state.moves || []).length, painted: 0 };
    window.ponteDrawn = drawn;
    requestAnimationFrame(() => { drawn.painted = performance.timeOrigin + performance.now(); });
    document.body.dataset.moves = String((state.moves || []).length);
  }

  function renderTurn() {
    const turn = document.getElementById("turn");
    const note = document.getElementById("notice");
    document.getElementById("placeable-who").textContent =
      state.turn ? colourName(state.turn, state) : "the player to move";
    if (state.over) {
      const o = state.outcome || {};
      const who = o.termination === "void" ? " (void)" : o.winner
        ? ` — ${colourName(o.winner, state)} wins` : " — a draw";
      turn.replaceChildren(el("span", { text: `Game over${who}` }));
      turn.dataset.turn = "over";
    } else if (state.turn) {
      turn.replaceChildren(el("span", { class: `chip ${state.turn}` }),
        `${colourName(state.turn, state)} to move`);
      turn.dataset.turn = state.turn;
    } else {
      turn.textContent = "Waiting for the first move";
    }
    const notes = [];
    if (state.swap_allowed) notes.push("The second player may swap colours (pie rule) or play dark.");
    if (state.turn && !state.over && !state.can_place_two && state.turns_completed > 0) {
      notes.push(`${colourName(state.turn, state)} cannot place two tiles: build a bridge or pass.`);
    }
    if (state.light_passed && !state.over) notes.push("Light has passed: dark's last turn.");
    note.textContent = notes.join(" ");
  }

  function renderFlags() {
    const card = document.getElementById("flags-card");
    const list = document.getElementById("flags");
    const flags = state.flags || [];
    card.hidden = flags.length === 0;
    list.replaceChildren(...flags.map((flag) => {
      const left = flag.rounds_left;
      const rounds = left <= 0 ? "the game is void if it stays"
        : `${left} round${left === 1 ? "" : "s"} left to correct it before the game is void`;
      return el("li", { class: "flag", "data-flag": flag.id },
        el("span", { class: "flag-icon", "aria-hidden": "true", text: "⚠" }),
        el("strong", { text: flag.message }),
        el("div", { class: "muted" },
          flag.move ? `${cap(flag.colour || "")} played ${flag.move}; ` : "",
          `cells involved: ${flag.cells.join(", ")} — `,
          el("span", { class: "rounds-left", text: rounds })));
    }));
  }

  function renderScore() {
    const table = document.getElementById("score");
    const score = state.score || {};
    const leader = state.outcome ? state.outcome.winner : null;
    table.replaceChildren(
      el("tr", {}, el("th"), el("th", { text: "points" }), el("th", { text: "islands" }),
        el("th", { text: "bridges" })),
      ...["light", "dark"].map((colour) => {
        const s = score[colour] || {};
        return el("tr", { class: leader === colour ? "winner" : "" },
          el("th", {}, el("span", { class: `chip ${colour}` }), colourName(colour, state)),
          el("td", { class: "points", "data-points": colour, text: s.points ?? 0 }),
          el("td", { text: s.islands ?? 0 }), el("td", { text: s.bridges ?? 0 }));
      }));
    const groups = document.getElementById("groups");
    const items = [];
    for (const colour of ["light", "dark"]) {
      for (const g of (score[colour] && score[colour].groups) || []) {
        const banks = g.sandbanks.length ? `, ${plural(g.sandbanks.length, "sandbank")}` : "";
        const bridges = g.bridges.length ? ` via ${g.bridges.join(", ")}` : "";
        items.push(el("li", {}, el("span", { class: `chip ${colour}` }),
          `${cap(colour)}: ${plural(g.islands.length, "island")}${banks}${bridges} = ${plural(g.points, "point")}`));
      }
    }
    groups.replaceChildren(...(items.length ? items : [el("li", { class: "muted", text: "No islands yet." })]));
    if (state.over) document.getElementById("groups-box").open = true;
  }

  function renderSupply() {
    const s = state.supply || {};
    const show = (v) => (v === null || v === undefined ? "∞" : v);
    document.getElementById("supply").replaceChildren(
      el("tr", {}, el("th", {}, el("span", { class: "chip light" }), "Light tiles"),
        el("td", { "data-supply": "light", text: show(s.light) })),
      el("tr", {}, el("th", {}, el("span", { class: "chip dark" }), "Dark tiles"),
        el("td", { "data-supply": "dark", text: show(s.dark) })),
      el("tr", {}, el("th", { text: "Bridges (shared)" }),
        el("td", { "data-supply": "bridges", text: show(s.bridges) })));
  }

  function renderBanner() {
    const banner = document.getElementById("banner");
    const outcome = state.outcome;
    if (!outcome) { banner.hidden = true; return; }
    banner.hidden = false;
    banner.dataset.kind = outcome.termination === "void" ? "void" : outcome.winner ? "win" : "draw";
    banner.textContent = Ponte.outcomeText(outcome, state.score, state)
      + (outcome.termination === "void" ? " Start again." : "");
  }

  function renderButtons() {
    const set = (id, on) => { const b = document.getElementById(id); if (b) b.disabled = !on; };
    set("btn-swap", state.swap_allowed);
    set("btn-pass", !state.over && state.pass_allowed);
    set("btn-confirm", !state.over);
    set("btn-undo", state.undo_allowed ?? (state.moves || []).length > 0);
    set("btn-end", !state.over);
    placeToggle.disabled = Boolean(state.over);
    if (state.over) placeToggle.checked = false;
  }

  function renderOverrides() {
    const overrides = Object.entries(state.overrides || {});
    document.getElementById("overrides-card").hidden = overrides.length === 0;
    const mayControl = document.body.dataset.mayControl === "yes";
    const said = { light: "a light tile", dark: "a dark tile", empty: "empty",
      present: "there", absent: "not there" };
    document.getElementById("overrides").replaceChildren(...overrides.map(([key, value]) =>
      el("li", { "data-override": key },
        el("span", { text: `${Ponte.where(key)} is ${said[value] || value}` }),
        mayControl ? el("button", { type: "button", class: "small", "data-drop": key,
          title: "let the camera's reading count here again",
          onclick: () => send("drop_override", { key }) }, "Drop") : null)));
  }

  function renderCamera(cam) {
    const line = document.getElementById("camera-line");
    line.textContent = `Camera: ${Ponte.cameraText(cam)}`;
    line.dataset.status = (cam && cam.status) || "unknown";
  }

  function refresh(eventId) {
    pendingEventId = eventId;
    if (refreshing) return refreshing;
    refreshing = getJson("/api/state").then((s) => { render(s, pendingEventId); })
      .catch((e) => { document.getElementById("notice").textContent = `Cannot load the state: ${e.message}`; })
      .finally(() => { refreshing = null; });
    return refreshing;
  }

  /* The Events card: the game's history from its record (moves, flags, corrections,
     overrides), then each event as it comes; the camera has its own status line. */
  const LOG_SIZE = 40;
  let seededGame = null;
  let recorded = new Set();
  let arrived = [];

  function eventKey(type, d) {
    return [type, d.ply, d.t, d.move, d.flag, d.action, d.kind].join("|");
  }

  function logItem(type, d) {
    const text = Ponte.describeEvent(type, d, state);
    return text ? el("li", { class: `ev ev-${type}`, "data-event-id": d.id }, text) : null;
  }

  function logEvent(type, data) {
    if (type === "camera") return;
    arrived.push([type, data]);
    if (arrived.length > LOG_SIZE) arrived.shift();
    if (recorded.has(eventKey(type, data))) return;
    const item = logItem(type, data);
    if (!item) return;
    const list = document.getElementById("events");
    list.prepend(item);
    while (list.children.length > LOG_SIZE) list.lastChild.remove();
  }

  async function seedLog() {
    const id = state.game.id;
    seededGame = id;
    const list = document.getElementById("events");
    let record;
    try { record = await getJson(`/api/games/${id}`); } catch (e) {
      if (!list.children.length) {  // no record to read: the moves at least
        list.replaceChildren(...(state.moves || []).slice(-LOG_SIZE).reverse()
          .map((m) => logItem("move", m)).filter(Boolean));
      }
      return;
    }
    if (seededGame !== id) return;
    const events = (record.events || []).filter((e) => e.type !== "camera");
    recorded = new Set(events.map((e) => eventKey(e.type, e)));
    const items = events.map((e) => logItem(e.type, e)).filter(Boolean);
    const live = arrived.filter(([type, d]) => d.game === id && !recorded.has(eventKey(type, d)))
      .map(([type, d]) => logItem(type, d)).filter(Boolean);
    list.replaceChildren(...items.concat(live).slice(-LOG_SIZE).reverse());
  }

  Ponte.follow((type, data) => {
    if (type === "dropped") { refresh(); return; }
    logEvent(type, data);
    if (type === "state" && data.board) render(data, data.id);
    else refresh(data.id);
  }, () => { seededGame = null; refresh(); });  // (re)connected: the history from the record
  setInterval(() => {  // frames can stop without an event: ask how the camera is
    getJson("/api/state").then((s) => renderCamera(s.camera)).catch(() => {});
  }, 5000);

  placeToggle.addEventListener("change", () => state && render(state));

  function pickCell(name) {
    const form = document.getElementById("override-cell");
    if (form) form.elements.cell.value = name;
    const bridge = document.getElementById("override-bridge");
    if (bridge) {
      if (!bridge.elements.a.value || bridge.elements.b.value) {
        bridge.elements.a.value = name; bridge.elements.b.value = "";
      } else bridge.elements.b.value = name;
    }
  }

  async function send(action, params) {
    const out = document.getElementById("control-result");
    out.textContent = "…";
    out.dataset.kind = "";
    try {
      const next = await postJson(`/api/control/${action}`, params);
      out.textContent = `${action.replace("_", " ")}: done`;
      out.dataset.kind = "ok";
      if (next && next.board) render(next);
    } catch (e) {
      out.textContent = e.message;
      out.dataset.kind = "error";
    }
  }

  for (const button of document.querySelectorAll("button[data-action]")) {
    button.addEventListener("click", () => {
      const action = button.dataset.action;
      if (action === "end_game" && !window.confirm("End the game now and score it?")) return;
      send(action, {});
    });
  }
  const cellForm = document.getElementById("override-cell");
  if (cellForm) cellForm.addEventListener("submit", (e) => {
    e.preventDefault();
    send("override", { cell: cellForm.elements.cell.value.trim(), value: cellForm.elements.value.value });
  });
  const bridgeForm = document.getElementById("override-bridge");
  if (bridgeForm) bridgeForm.addEventListener("submit", (e) => {
    e.preventDefault();
    send("override", { bridge: [bridgeForm.elements.a.value.trim(), bridgeForm.elements.b.value.trim()],
      present: bridgeForm.elements.present.value === "true" });
  });
  const newForm = document.getElementById("new-game");
  if (newForm) newForm.addEventListener("submit", (e) => {
    e.preventDefault();
    send("new_game", { light: newForm.elements.light.value, dark: newForm.elements.dark.value,
      board: Number(newForm.elements.board.value), supply: newForm.elements.supply.value });
  });
})();
