/* The Camera page: the MJPEG stream is an <img>; the status comes from the state. */
"use strict";

(() => {
  const status = document.getElementById("camera-status");
  async function update() {
    try {
      const state = await Ponte.getJson("/api/state");
      const cam = state.camera || {};
      status.textContent = Ponte.cameraText(cam);
      status.dataset.status = cam.status || "unknown";
    } catch (e) {
      status.textContent = `unknown (${e.message})`;
    }
  }
  Ponte.follow((type) => { if (type === "camera") update(); }, update);
  setInterval(update, 5000);  // frames can stop without an event
})();
