/* Shared helpers for every page: JSON requests, small DOM builder, the live event stream. */
"use strict";

const Ponte = (() => {
  async function getJson(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" } });
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    if (!response.ok) {
      const message = body && body.error ? body.error : `${response.status} ${response.statusText}`;
      const error = new Error(message);
      error.status = response.status;
      throw error;
    }
    return body;
  }

  async function postJson(url, payload) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(payload || {}),
      credentials: "same-origin",
    });
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    if (!response.ok) {
      const error = new Error(body && body.error ? body.error : `${response.status}`);
      error.status = response.status;
      throw error;
    }
    return body;
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function setLink(status) {
    const pill = document.getElementById("link-status");
    if (!pill) return;
    const labels = { live: "● live", connecting: "○ connecting…", offline: "✕ offline" };
    pill.textContent = labels[status] || status;
    pill.dataset.status = status;
  }

  const EVENT_TYPES = ["state", "move", "illegal", "corrected", "void", "end", "control",
    "camera", "notice", "dropped"];

  /* Follow the live event stream; `onEvent(type, data)` per event, `onOpen()` on each
     (re)connection (the page should fetch the whole state then). The browser reconnects by
     itself with Last-Event-ID. */
  function follow(onEvent, onOpen) {
    let source = null;
    function connect() {
      setLink("connecting");
      source = new EventSource("/events");
      source.addEventListener("open", () => { setLink("live"); if (onOpen) onOpen(); });
      source.addEventListener("error", () => {
        setLink(source.readyState === EventSource.CLOSED ? "offline" : "connecting");
        if (source.readyState === EventSource.CLOSED) setTimeout(connect, 2000);
      });
      for (const type of EVENT_TYPES) {
        source.addEventListener(type, (message) => {
          let data = {};
          try { data = JSON.parse(message.data); } catch (e) { return; }
          onEvent(type, data);
        });
      }
    }
    connect();
    window.addEventListener("pagehide", () => source && source.close());
  }

  function colourName(colour, state) {
    if (!colour) return "";
    const game = (state && state.game) || {};
    const name = game[colour];
    const label = colour === "light" ? "Light" : "Dark";
    return name && name.toLowerCase() !== colour ? `${label} (${name})` : label;
  }

  function cap(text) { return text ? text[0].toUpperCase() + text.slice(1) : text; }

  function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

  /* The referee's reasons (referee.verdicts.Reason) in words, for records whose events
     carry only the code. */
  const REASONS = {
    off_board: "a cell off the board",
    same_cell: "both tiles on one cell",
    occupied: "a tile on a cell that already holds one",
    blocked: "a tile under a bridge",
    flagged_cell: "a cell that holds a flagged tile",
    group_too_large: "a group of five or more tiles",
    island_too_close: "an island touching another tile of its colour",
    no_tiles_left: "tiles placed with fewer than two left",
    not_a_bridge_shape: "a bridge of no bridge's shape",
    bridge_end_not_own_tile: "a bridge end that is not the builder's tile",
    bridge_end_in_use: "a tile carrying a second bridge",
    bridge_over_tile: "a bridge over a tile",
    bridges_cross: "bridges that cross",
    no_bridges_left: "a bridge with none left in the pool",
    pass_not_allowed: "a pass while two tiles could be placed",
    swap_not_allowed: "a swap after the first turn",
    first_move_not_tiles: "a first move that is not two light tiles",
    game_over: "a move after the end",
    tile_appeared: "a tile that no turn placed",
    tile_vanished: "a missing tile",
    bridge_vanished: "a missing bridge",
    wrong_colour: "tiles of the wrong colour",
    too_many_pieces: "more pieces than one turn places",
  };

  function reasonText(code) { return REASONS[code] || (code ? code.replaceAll("_", " ") : "a placement against the rules"); }

  /* How a finished game came out, the winner's score first: "Dark wins on points: 3 – 2." */
  function outcomeText(outcome, score, state) {
    const ended = outcome.termination === "ended" ? " (ended from the controls)" : "";
    if (outcome.termination === "void") {
      return "The game is void: a placement against the rules was not corrected in time.";
    }
    if (!outcome.winner || !score || !score.light || !score.dark) {
      return outcome.winner ? `${colourName(outcome.winner, state)} wins${ended}.`
        : `A draw: equal points, islands and bridges${ended}.`;
    }
    const w = score[outcome.winner];
    const l = score[outcome.winner === "light" ? "dark" : "light"];
    let how = "on points";
    if (w.points === l.points) {
      how = w.islands !== l.islands ? "on islands (points equal)" : "on bridges (points and islands equal)";
    }
    return `${colourName(outcome.winner, state)} wins ${how}: ${w.points}\u00a0–\u00a0${l.points}${ended}.`;
  }

  function where(key) {
    const [kind, place] = key.split(":");
    return kind === "bridge" ? `the bridge ${place}` : place;
  }

  /* One event of the record or the live stream in words (null: not worth a line). */
  function describeEvent(type, d, state) {
    const who = (colour) => colourName(colour, state);
    const by = d.by === "override" ? " (entered by override)" : "";
    switch (type) {
      case "move":
        if (d.move === "pass") return `${d.ply}. ${who(d.colour)} passes${by}`;
        if (d.move === "swap") return `${d.ply}. Swap: the players exchange colours`;
        return `${d.ply ? `${d.ply}. ` : ""}${who(d.colour)} ${d.move || ""}${by}`.trim();
      case "illegal": {
        const what = d.message || reasonText(d.reason);
        const cells = d.cells && d.cells.length && !d.message ? ` (${d.cells.join(", ")})` : "";
        return d.move ? `⚠ ${d.ply}. ${who(d.colour)} ${d.move}, flagged${by}: ${what}${cells}`
          : `⚠ ${cap(what)}${cells}${by}`;
      }
      case "corrected": {
        const why = reasonText(d.reason);
        if (d.move && d.undone) return `✓ Corrected: ${d.move} taken back (${why}); the same player plays again`;
        if (d.move) return `✓ Corrected: ${d.move} taken back (${why}); that turn stays in the record with no effect`;
        const cells = d.cells && d.cells.length ? ` on ${d.cells.join(", ")}` : "";
        return `✓ Put right: ${why}${cells}`;
      }
      case "void": return "✕ The game is void: a placement against the rules was not corrected in time";
      case "end": return `Game over. ${outcomeText(d, d.score, state)}`;
      case "state": return d.undone ? `↶ Undo: ${d.undone} taken back` : null;
      case "control": {
        const p = d.params || {};
        if (d.action === "override") {
          if (p.bridge) return `Override: the bridge ${p.bridge.join("-")} is ${p.present ? "there" : "not there"} (the camera was wrong)`;
          return `Override: ${p.cell} is ${p.value === "empty" ? "empty" : `a ${p.value} tile`} (the camera was wrong)`;
        }
        if (d.action === "drop_override") return `Override on ${where(p.key || "")} dropped: the camera's reading counts again`;
        if (d.action === "confirm") return "Confirm: the board as it stands was judged";
        if (d.action === "calibrate") return "The calibration was changed";
        if (d.action === "new_game") return "A new game was started";
        return null;  // swap, pass, undo, end_game: their own events say what happened
      }
      case "notice": return d.message ? cap(d.message) : null;
      default: return null;
    }
  }

  const CAMERA_WORDS = {
    ok: "ok", waiting: "waiting for the first picture", settling: "settling (a piece was just put down)",
    occluded: "something covers the board", "no-signal": "no signal", unavailable: "not available",
    bumped: "the board or camera moved", ended: "the video has ended", "no-frames": "no frames coming",
  };

  /* The camera's state in one line: "ok, 10.0 fps", "the video has ended (…; no frames for 4 min)". */
  function cameraText(cam) {
    if (!cam || !cam.status) return "unknown";
    const parts = [CAMERA_WORDS[cam.status] || cam.status];
    if (cam.fps && ["ok", "settling", "occluded", "bumped"].includes(cam.status)) {
      parts[0] += `, ${Number(cam.fps).toFixed(1)} fps`;
    }
    if (cam.message) parts.push(`(${cam.message})`);
    return parts.join(" ");
  }

  return { getJson, postJson, el, setLink, follow, colourName, cap, plural, reasonText,
    outcomeText, describeEvent, cameraText, where };
})();
