// The calibration wizard: the automatic corners over the still, dragged by hand, saved with the PIN.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const NS = "http://www.w3.org/2000/svg";
  const NAMES = ["BL", "BR", "TR", "TL"];
  let csrf = null, auto = null, corners = null, size = null, dragging = -1;

  function say(text, ok) { const m = $("message"); m.textContent = text; m.className = "message " + (ok ? "ok" : "err"); }
  function loggedIn(token) { csrf = token; $("login-form").hidden = !!token; $("save").hidden = !token; }

  function draw() {
    const svg = $("marks");
    svg.setAttribute("viewBox", `0 0 ${size[0]} ${size[1]}`);
    const r = Math.max(size[0], size[1]) * 0.04;  // a fingertip, on a phone
    const poly = document.createElementNS(NS, "polygon");
    poly.setAttribute("points", corners.map((c) => c.join(",")).join(" "));
    const parts = [poly];
    corners.forEach((c, i) => {
      const dot = document.createElementNS(NS, "circle");
      dot.setAttribute("cx", c[0]); dot.setAttribute("cy", c[1]); dot.setAttribute("r", r);
      dot.dataset.corner = String(i);
      const label = document.createElementNS(NS, "text");
      label.setAttribute("x", c[0] + r * 1.2); label.setAttribute("y", c[1] - r * 0.6);
      label.setAttribute("font-size", r * 1.4); label.textContent = NAMES[i];
      parts.push(dot, label);
    });
    svg.replaceChildren(...parts);
  }

  function toImage(e) {
    const box = $("marks").getBoundingClientRect();
    return [Math.round(((e.clientX - box.left) / box.width) * size[0] * 100) / 100,
            Math.round(((e.clientY - box.top) / box.height) * size[1] * 100) / 100];
  }

  function wire() {
    const svg = $("marks");
    svg.addEventListener("pointerdown", (e) => {
      if (e.target.dataset.corner === undefined) return;
      dragging = parseInt(e.target.dataset.corner, 10); svg.setPointerCapture(e.pointerId); e.preventDefault();
    });
    svg.addEventListener("pointermove", (e) => { if (dragging >= 0) { corners[dragging] = toImage(e); draw(); } });
    const stop = () => { dragging = -1; };
    svg.addEventListener("pointerup", stop); svg.addEventListener("pointercancel", stop);
    $("show-overlay").addEventListener("click", () => {
      const img = $("still"), on = img.src.indexOf("overlay") < 0;
      img.src = on ? "/wizard/overlay.png?t=" + Date.now() : "/wizard/still.png";
      $("show-overlay").textContent = on ? "Show the plain still" : "Show fitted overlay";
    });
    $("reset").addEventListener("click", () => { if (auto && auto.corners_px) { corners = auto.corners_px.map((c) => c.slice()); draw(); } });
    $("login-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const r = await fetch("/api/login", { method: "POST", headers: { "Content-Type": "application/json" },
                                            body: JSON.stringify({ pin: $("pin").value }) });
      $("pin").value = "";
      const d = await r.json().catch(() => ({}));
      if (r.ok) { loggedIn(d.csrf); say("Logged in", true); } else say(d.error || "refused", false);
    });
    $("save").addEventListener("click", async () => {
      const r = await fetch("/api/wizard/save", { method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf }, body: JSON.stringify({ corners }) });
      const d = await r.json().catch(() => ({}));
      if (r.ok) say(`Saved ${d.saved}: ${d.table}, camera ${Math.round(d.camera_height_mm)} mm above`, true);
      else { say(d.error || ("refused (" + r.status + ")"), false); if (r.status === 401) loggedIn(null); }
    });
  }

  async function start() {
    wire();
    const s = await (await fetch("/api/session")).json().catch(() => ({}));
    loggedIn(s.logged_in ? s.csrf : null);
    const r = await fetch("/api/wizard");
    auto = await r.json().catch(() => ({}));
    if (!r.ok) { $("found").textContent = auto.error || "no calibration source"; return; }
    size = [auto.width, auto.height];
    if (auto.found) {
      corners = auto.corners_px.map((c) => c.slice());
      $("found").textContent = `Found ${auto.table} (reprojection ${auto.quality.reprojection_px} px)`;
    } else {
      const w = size[0], h = size[1];
      corners = [[w * 0.1, h * 0.9], [w * 0.9, h * 0.9], [w * 0.9, h * 0.1], [w * 0.1, h * 0.1]];
      $("found").textContent = "Not found automatically: " + auto.error;
    }
    document.body.dataset.ready = "1";
    draw();
  }
  document.addEventListener("DOMContentLoaded", start);
})();
