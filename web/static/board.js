/* Draws a board state (referee.view.game_state) as SVG. Shapes as well as colours tell
   things apart: hatching under bridges, a dashed ring for the last move, a cross and a
   warning triangle for flagged cells, rings for placeable cells. */
"use strict";

const PonteBoard = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const C = 40;
  const M = 26;
  const GROUP_COLOURS = ["#1b7f5a", "#8a3ffc", "#d97706", "#0e7490", "#be185d", "#4d7c0f"];

  function svg(tag, attrs, parent) {
    const node = document.createElementNS(NS, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    if (parent) parent.appendChild(node);
    return node;
  }

  function cellXY(name, size) {
    const file = name.charCodeAt(0) - 97;
    const rank = parseInt(name.slice(1), 10) - 1;
    return [M + file * C, M + (size - 1 - rank) * C];
  }

  function centre(name, size) {
    const [x, y] = cellXY(name, size);
    return [x + C / 2, y + C / 2];
  }

  function defs(root) {
    const d = svg("defs", {}, root);
    const hatch = svg("pattern", { id: "pb-hatch", width: 6, height: 6,
      patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, d);
    svg("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#5b7f95", "stroke-width": 2 }, hatch);
    const cross = svg("pattern", { id: "pb-cross", width: 8, height: 8,
      patternUnits: "userSpaceOnUse" }, d);
    svg("path", { d: "M0 0L8 8M8 0L0 8", stroke: "#c81e1e", "stroke-width": 1.5,
      opacity: 0.7 }, cross);
  }

  function title(node, text) { svg("title", {}, node).textContent = text; }

  /* Outline of a set of cells: the cell edges that do not touch another cell of the set. */
  function outline(cells, size) {
    const set = new Set(cells);
    const parts = [];
    for (const name of cells) {
      const [x, y] = cellXY(name, size);
      const file = name.charCodeAt(0) - 97;
      const rank = parseInt(name.slice(1), 10);
      const at = (df, dr) => String.fromCharCode(97 + file + df) + (rank + dr);
      if (!set.has(at(0, 1))) parts.push(`M${x} ${y}h${C}`);
      if (!set.has(at(0, -1))) parts.push(`M${x} ${y + C}h${C}`);
      if (!set.has(at(-1, 0))) parts.push(`M${x} ${y}v${C}`);
      if (!set.has(at(1, 0))) parts.push(`M${x + C} ${y}v${C}`);
    }
    return parts.join("");
  }

  function draw(container, state, options) {
    const opts = options || {};
    const board = state.board;
    const size = board.size;
    const side = 2 * M + size * C;
    const root = svg("svg", { viewBox: `0 0 ${side} ${side}`, class: "board-svg",
      role: "img", "aria-label": "board" });
    defs(root);
    svg("rect", { x: M, y: M, width: size * C, height: size * C, class: "water" }, root);
    for (let k = 0; k < size; k++) {
      const file = String.fromCharCode(97 + k);
      svg("text", { x: M + (k + 0.5) * C, y: M - 8, class: "coord" }, root).textContent = file;
      svg("text", { x: M + (k + 0.5) * C, y: side - M + 17, class: "coord" }, root).textContent = file;
      svg("text", { x: M - 13, y: M + (size - k - 0.5) * C + 4, class: "coord" }, root).textContent = k + 1;
      svg("text", { x: side - M + 13, y: M + (size - k - 0.5) * C + 4, class: "coord" }, root).textContent = k + 1;
    }
    const grid = [];
    for (let k = 1; k < size; k++) {
      grid.push(`M${M + k * C} ${M}v${size * C}M${M} ${M + k * C}h${size * C}`);
    }
    svg("path", { d: grid.join(""), class: "grid" }, root);

    const blocked = svg("g", { class: "blocked" }, root);
    for (const name of board.blocked) {
      const [x, y] = cellXY(name, size);
      const r = svg("rect", { x, y, width: C, height: C, fill: "url(#pb-hatch)",
        "data-blocked": name }, blocked);
      title(r, `${name}: under a bridge`);
    }

    const groups = svg("g", { class: "groups" }, root);
    const groupLabels = [];
    let colourIndex = 0;
    for (const colour of ["light", "dark"]) {
      const score = state.score && state.score[colour];
      for (const group of (score && score.groups) || []) {
        const stroke = GROUP_COLOURS[colourIndex++ % GROUP_COLOURS.length];
        const islandCells = group.islands.flat();
        const bankCells = group.sandbanks.flat();
        for (const island of group.islands) {
          svg("path", { d: outline(island, size), stroke, class: "group-outline",
            "data-group": colour }, groups);
        }
        for (const bank of group.sandbanks) {
          svg("path", { d: outline(bank, size), stroke, class: "group-outline bank" }, groups);
        }
        if (islandCells.length) {
          const first = islandCells.slice().sort((a, b) => {
            const [ax, ay] = cellXY(a, size); const [bx, by] = cellXY(b, size);
            return ay - by || ax - bx;
          })[0];
          groupLabels.push({ cell: first, stroke, points: group.points, colour,
            islands: group.islands.length, banks: bankCells.length });
        }
      }
    }

    if (opts.showPlaceable) {
      const place = svg("g", { class: "placeable" }, root);
      for (const name of state.placeable || []) {
        const [x, y] = centre(name, size);
        svg("circle", { cx: x, cy: y, r: 4.5, "data-placeable": name }, place);
      }
    }

    const flagged = new Map();
    for (const flag of state.flags || []) {
      for (const name of flag.cells || []) flagged.set(name, flag);
    }
    const obstructed = new Set(board.obstructed || []);

    const tiles = svg("g", { class: "tiles" }, root);
    for (const [name, colour] of Object.entries(board.tiles)) {
      const [x, y] = cellXY(name, size);
      const t = svg("rect", { x: x + 3, y: y + 3, width: C - 6, height: C - 6, rx: 5,
        class: `tile ${colour}`, "data-tile": name, "data-colour": colour }, tiles);
      title(t, `${name}: ${colour} tile`);
    }
    for (const flag of state.flags || []) {
      const colour = flag.colour || "unknown";
      for (const name of flag.cells || []) {
        if (board.tiles[name] || !obstructed.has(name)) continue;
        const [x, y] = cellXY(name, size);
        svg("rect", { x: x + 3, y: y + 3, width: C - 6, height: C - 6, rx: 5,
          class: `tile ${colour} ghost`, "data-flagged-tile": name }, tiles);
      }
    }

    const bridges = svg("g", { class: "bridges" }, root);
    const lastBridge = state.last_move && state.last_move.move.includes("-")
      ? state.last_move.move : null;
    for (const bridge of board.bridges) {
      const [x1, y1] = centre(bridge.from, size);
      const [x2, y2] = centre(bridge.to, size);
      const id = `${bridge.from}-${bridge.to}`;
      const g = svg("g", { class: `bridge ${bridge.colour}`, "data-bridge": id }, bridges);
      const dx = x2 - x1; const dy = y2 - y1; const len = Math.hypot(dx, dy);
      const mx = (x1 + x2) / 2 - (dy / len) * 7; const my = (y1 + y2) / 2 + (dx / len) * 7;
      const d = `M${x1} ${y1}Q${mx} ${my} ${x2} ${y2}`;
      svg("path", { d, class: "bridge-shadow" }, g);
      svg("path", { d, class: "bridge-deck" }, g);
      svg("path", { d, class: "bridge-planks" }, g);
      if (lastBridge === id || lastBridge === `${bridge.to}-${bridge.from}`) {
        g.classList.add("last");
      }
      title(g, `${bridge.colour} bridge ${id} over ${bridge.under.join(", ")}`);
    }

    const marks = svg("g", { class: "marks" }, root);
    if (state.last_move && !lastBridge) {
      for (const name of state.last_move.cells) {
        const [x, y] = cellXY(name, size);
        svg("rect", { x: x + 0.5, y: y + 0.5, width: C - 1, height: C - 1, rx: 7,
          class: "last-move", "data-last": name }, marks);
      }
    }
    for (const [name, flag] of flagged) {
      const [x, y] = cellXY(name, size);
      const offenders = flag.move ? flag.move.split(/[,-]/) : flag.cells;
      const g = svg("g", { class: "flag-mark", "data-flag-cell": name }, marks);
      if (!offenders.includes(name)) {
        g.classList.add("involved");
        svg("rect", { x: x + 2, y: y + 2, width: C - 4, height: C - 4, rx: 6,
          class: "flag-involved" }, g);
        title(g, `${name}: involved in "${flag.message}"`);
        continue;
      }
      svg("rect", { x: x + 1, y: y + 1, width: C - 2, height: C - 2, fill: "url(#pb-cross)",
        class: "flag-box" }, g);
      svg("path", { d: `M${x + C - 6} ${y - 1}l8 13h-16z`, class: "flag-triangle" }, g);
      svg("text", { x: x + C - 6, y: y + 10.5, class: "flag-bang" }, g).textContent = "!";
      title(g, `${name}: ${flag.message}`);
    }
    for (const label of groupLabels) {
      const [x, y] = cellXY(label.cell, size);
      const g = svg("g", { class: "group-label" }, marks);
      svg("circle", { cx: x + 4, cy: y + 4, r: 9, fill: label.stroke }, g);
      svg("text", { x: x + 4, y: y + 8 }, g).textContent = label.points;
      title(g, `${label.colour}: ${label.islands} island(s) joined = ${label.points} point(s)`);
    }

    const hits = svg("g", { class: "hits" }, root);
    for (let file = 0; file < size; file++) {
      for (let rank = 1; rank <= size; rank++) {
        const name = String.fromCharCode(97 + file) + rank;
        const [x, y] = cellXY(name, size);
        const r = svg("rect", { x, y, width: C, height: C, "data-cell": name,
          class: "hit" }, hits);
        if (opts.onCell) r.addEventListener("click", () => opts.onCell(name));
      }
    }
    container.replaceChildren(root);
    return root;
  }

  return { draw };
})();
