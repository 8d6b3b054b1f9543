/* The Calibration page: the camera picture with the detected corners; drag a corner,
   choose the a1 corner, check the colour readings, save (POST /api/calibration). */
"use strict";

(() => {
  const { el, getJson, postJson } = Ponte;
  const message = document.getElementById("calib-message");
  const stage = document.getElementById("calib-stage");
  const image = document.getElementById("calib-image");
  const overlay = document.getElementById("calib-overlay");
  const form = document.getElementById("calib-form");
  const a1 = document.getElementById("calib-a1");
  const NS = "http://www.w3.org/2000/svg";
  let corners = [];
  let width = 640; let height = 480;

  function drawOverlay() {
    overlay.setAttribute("viewBox", `0 0 ${width} ${height}`);
    overlay.replaceChildren();
    const poly = document.createElementNS(NS, "polygon");
    poly.setAttribute("points", corners.map((p) => p.join(",")).join(" "));
    poly.setAttribute("class", "calib-outline");
    overlay.appendChild(poly);
    corners.forEach((p, k) => {
      const g = document.createElementNS(NS, "g");
      g.setAttribute("class", `calib-corner${Number(a1.value) === k ? " a1" : ""}`);
      g.dataset.corner = String(k);
      const r = Math.max(8, width / 60);
      const c = document.createElementNS(NS, "circle");
      c.setAttribute("cx", p[0]); c.setAttribute("cy", p[1]); c.setAttribute("r", r);
      const t = document.createElementNS(NS, "text");
      t.setAttribute("x", p[0]); t.setAttribute("y", p[1] + r / 3);
      t.setAttribute("font-size", r);
      t.textContent = Number(a1.value) === k ? "a1" : String(k + 1);
      g.append(c, t);
      g.addEventListener("pointerdown", (e) => startDrag(e, k));
      overlay.appendChild(g);
    });
  }

  function startDrag(event, k) {
    event.preventDefault();
    const move = (e) => {
      const box = overlay.getBoundingClientRect();
      corners[k] = [Math.round(((e.clientX - box.left) / box.width) * width),
        Math.round(((e.clientY - box.top) / box.height) * height)];
      drawOverlay();
    };
    const up = () => { window.removeEventListener("pointermove", move); window.removeEventListener("pointerup", up); };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
  }

  /* The readings as a small board (top rank first): a letter and a colour per cell, and a
     dashed outline where the reading is unsure. */
  function showReadings(readings) {
    const table = document.getElementById("readings");
    document.getElementById("readings-title").hidden = !readings.length;
    const byCell = new Map(readings.map((r) => [r.cell, r]));
    let size = 0;
    for (const r of readings) size = Math.max(size, parseInt(r.cell.slice(1), 10));
    const letters = { light: "L", dark: "D", empty: "·" };
    const rows = [];
    for (let rank = size; rank >= 1; rank--) {
      const cells = [el("th", { text: rank })];
      for (let file = 0; file < size; file++) {
        const name = String.fromCharCode(97 + file) + rank;
        const r = byCell.get(name);
        if (!r) { cells.push(el("td")); continue; }
        const unsure = r.confidence !== undefined && r.confidence < 0.6;
        const pct = r.confidence === undefined ? "" : ` (${Math.round(r.confidence * 100)}%)`;
        cells.push(el("td", { class: `reading ${r.value}${unsure ? " unsure" : ""}`,
          "data-reading": name, "data-value": r.value, title: `${name}: ${r.value}${pct}`,
          text: letters[r.value] || "?" }));
      }
      rows.push(el("tr", {}, ...cells));
    }
    const files = [el("th")];
    for (let file = 0; file < size; file++) files.push(el("th", { text: String.fromCharCode(97 + file) }));
    rows.push(el("tr", {}, ...files));
    table.replaceChildren(...rows);
    const unsure = readings.filter((r) => r.confidence !== undefined && r.confidence < 0.6).length;
    document.getElementById("readings-note").textContent = readings.length
      ? `L light, D dark, · empty; hover a cell for its confidence. ${unsure} unsure reading(s) (dashed).`
      : "";
  }

  async function load() {
    try {
      const cal = await getJson("/api/calibration");
      [width, height] = cal.image_size || [640, 480];
      corners = (cal.corners || []).map((p) => [p[0], p[1]]);
      if (corners.length !== 4) {
        corners = [[width * 0.2, height * 0.2], [width * 0.8, height * 0.2],
          [width * 0.8, height * 0.8], [width * 0.2, height * 0.8]];
        message.textContent = "No board found in the picture: drag the four corners onto the board's corners.";
      } else {
        message.textContent = "Detected corners are shown; drag any that are wrong.";
      }
      a1.value = String(cal.a1 || 0);
      image.src = `/camera.jpg?t=${Date.now()}`;
      stage.hidden = false; form.hidden = false;
      document.getElementById("calib-help").hidden = false;
      drawOverlay();
      showReadings(cal.readings || []);
    } catch (e) {
      message.textContent = e.message;
      message.dataset.kind = "error";
    }
    Ponte.setLink(message.dataset.kind === "error" ? "not available" : "live");
  }

  a1.addEventListener("change", drawOverlay);
  document.getElementById("calib-reload").addEventListener("click", load);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const saved = await postJson("/api/calibration", { corners, a1: Number(a1.value) });
      message.textContent = "Calibration saved.";
      message.dataset.kind = "ok";
      if (saved && saved.readings) showReadings(saved.readings);
    } catch (err) {
      message.textContent = err.message;
      message.dataset.kind = "error";
    }
  });
  load();
})();
