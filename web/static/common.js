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
      error.retryAfter = Number(response.headers.get("Retry-After")) || 1;
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

  return { getJson, postJson, el, setLink, follow, colourName };
})();
