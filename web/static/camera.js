/* The Camera page: the MJPEG stream is an <img>; the status comes from the state. */
"use strict";

(() => {
  const status = document.getElementById("camera-status");
  async function update() {
    try {
      const state = await Ponte.getJson("/api/state");
      const cam = state.camera || {};
      const parts = [cam.status || "unknown"];
      if (cam.fps) parts.push(`${Number(cam.fps).toFixed(1)} fps`);
      if (cam.message) parts.push(cam.message);
      status.textContent = parts.join(", ");
      status.dataset.status = cam.status || "unknown";
    } catch (e) {
      if (e.status === 429) { setTimeout(update, e.retryAfter * 1000); return; }
      status.textContent = `unknown (${e.message})`;
    }
  }
  Ponte.follow((type) => { if (type === "camera") update(); }, update);
})();
