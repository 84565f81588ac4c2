// The calibration wizard: the live view, the wait for a still table, the automatic corners over the still (dragged
// by hand when wrong), the table, the discipline and the bottom end, saved with the PIN.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const NS = "http://www.w3.org/2000/svg";
  const NAMES = ["BL", "BR", "TR", "TL"];
  const LIVE_MS = 200;  // at most 5 pictures a second; the server encodes no faster whatever the phones ask
  let csrf = null, status = null, result = null, corners = null, size = null, dragging = -1;
  let liveOn = false, liveN = 0, polling = null;

  function say(text, ok) { const m = $("message"); m.textContent = text; m.className = "message " + (ok ? "ok" : "err"); }
  function loggedIn(token) { csrf = token; $("login-form").hidden = !!token; $("to-clear").hidden = !token; }
  function step(name) {
    document.body.dataset.step = name;
    const wantLive = name === "camera" || name === "clear";
    if (wantLive && !liveOn) { liveOn = true; nextLive(); }
    liveOn = wantLive;
  }

  // --- the live view: one picture at a time, the next asked for when the last has arrived --------------------
  function nextLive() { if (liveOn) $("live").src = "/wizard/live.jpg?n=" + (++liveN); }

  async function post(path, body) {
    const headers = { "Content-Type": "application/json" };
    if (csrf) headers["X-CSRF-Token"] = csrf;
    const r = await fetch(path, { method: "POST", credentials: "same-origin", headers, body: JSON.stringify(body) });
    const d = await r.json().catch(() => ({}));
    if (r.status === 401) loggedIn(null);
    return { ok: r.ok, status: r.status, data: d };
  }

  // --- the still wait ------------------------------------------------------------------------------------------
  function showMotion(s) {
    const m = $("motion");
    if (s.camera_error) $("camera-note").textContent = s.camera_error;  // the wait cannot end: say why
    if (s.phase === "waiting" && s.moving) { m.dataset.state = "moving"; m.textContent = "MOVING"; }
    else if (s.phase === "waiting" && s.still_for === 0) { m.dataset.state = "settling"; m.textContent = "WATCHING\u2026"; }
    else if (s.phase === "waiting") { m.dataset.state = "settling"; m.textContent = `STILL ${s.still_for.toFixed(1)} s`; }
    else if (s.phase === "calibrating") { m.dataset.state = "still"; m.textContent = "STILL: finding the table\u2026"; }
    else if (s.phase === "ready") { m.dataset.state = "still"; m.textContent = "STILL"; }
  }

  async function poll() {
    const r = await fetch("/api/wizard").catch(() => null);
    if (!r || !r.ok) return;
    status = await r.json();
    showMotion(status);
    if (status.phase === "ready" && status.result) {
      clearInterval(polling); polling = null;
      showResult(status.result);
    }
  }

  async function beginStill() {
    const r = await post("/api/wizard/still", {});
    if (!r.ok) { say(r.data.error || ("refused (" + r.status + ")"), false); return; }
    say("", true);
    $("hold").textContent = String(r.data.hold);
    showMotion(r.data);
    step("clear");
    if (!polling) polling = setInterval(poll, 250);
  }

  // --- the corners ---------------------------------------------------------------------------------------------
  function showResult(res) {
    result = res;
    size = [res.width, res.height];
    if (res.found) {
      corners = res.corners_px.map((c) => c.slice());
      $("found").textContent = `Found ${res.table} (reprojection ${Number(res.quality.reprojection_px).toFixed(1)} px)`;
    } else {
      const w = size[0], h = size[1];
      corners = [[w * 0.1, h * 0.9], [w * 0.9, h * 0.9], [w * 0.9, h * 0.1], [w * 0.1, h * 0.1]];
      $("found").textContent = "Not found automatically: " + res.error + ". Drag the corners.";
    }
    if (res.found && !status.defaults.table) $("table").value = res.table;
    const img = $("still");
    img.onload = () => { document.body.dataset.ready = "1"; draw(); };
    img.src = "/wizard/still.png?t=" + Date.now();
    step("corners");
  }

  function bottomName() { return (status && status.options.bottom[$("discipline").value]) || "bottom"; }

  function draw() {
    if (!corners) return;
    const svg = $("marks");
    svg.setAttribute("viewBox", `0 0 ${size[0]} ${size[1]}`);
    const r = Math.max(size[0], size[1]) * 0.04;  // a fingertip, on a phone
    const poly = document.createElementNS(NS, "polygon");
    poly.setAttribute("points", corners.map((c) => c.join(",")).join(" "));
    const bottom = document.createElementNS(NS, "line");  // bottom-left to bottom-right: the bottom cushion
    bottom.setAttribute("class", "bottom");
    bottom.setAttribute("x1", corners[0][0]); bottom.setAttribute("y1", corners[0][1]);
    bottom.setAttribute("x2", corners[1][0]); bottom.setAttribute("y2", corners[1][1]);
    // Labels go inside the table, towards its centre, so none falls off the picture's edge.
    const gx = corners.reduce((a, c) => a + c[0], 0) / 4, gy = corners.reduce((a, c) => a + c[1], 0) / 4;
    const inward = (x, y, by) => { const l = Math.hypot(gx - x, gy - y) || 1; return [x + (gx - x) / l * by, y + (gy - y) / l * by]; };
    const label = document.createElementNS(NS, "text");
    label.setAttribute("class", "bottom"); label.setAttribute("font-size", r * 1.1);
    const bx = (corners[0][0] + corners[1][0]) / 2, by = (corners[0][1] + corners[1][1]) / 2;
    const [lx, ly] = inward(bx, by, r * 1.5);
    // Beside a bottom cushion that runs up the picture the words start (or end) at the line, not across it.
    const across = Math.abs(gx - bx) > Math.abs(gy - by);
    label.setAttribute("text-anchor", across ? (gx > bx ? "start" : "end") : "middle");
    label.setAttribute("dominant-baseline", "middle");
    label.setAttribute("x", lx); label.setAttribute("y", ly);
    label.textContent = bottomName();
    const parts = [poly, bottom, label];
    corners.forEach((c, i) => {
      const dot = document.createElementNS(NS, "circle");
      dot.setAttribute("cx", c[0]); dot.setAttribute("cy", c[1]); dot.setAttribute("r", r);
      dot.dataset.corner = String(i);
      const name = document.createElementNS(NS, "text");
      const [nx, ny] = inward(c[0], c[1], r * 2.4);
      name.setAttribute("x", nx); name.setAttribute("y", ny);
      name.setAttribute("text-anchor", "middle"); name.setAttribute("dominant-baseline", "middle");
      name.setAttribute("font-size", r * 1.3); name.textContent = NAMES[i];
      parts.push(dot, name);
    });
    svg.replaceChildren(...parts);
  }

  function toImage(e) {
    const box = $("marks").getBoundingClientRect();
    return [Math.round(((e.clientX - box.left) / box.width) * size[0] * 100) / 100,
            Math.round(((e.clientY - box.top) / box.height) * size[1] * 100) / 100];
  }

  function fillChoices() {
    const opts = status.options;
    const d = $("discipline"), t = $("table");
    d.replaceChildren(...Object.keys(opts.disciplines).map((k) => new Option(k.replace(/_/g, " "), k)));
    t.replaceChildren(...opts.tables.map((k) => new Option(k, k)));
    if (status.defaults.discipline) d.value = status.defaults.discipline;
    t.value = status.defaults.table || opts.disciplines[d.value];
    $("bottom-name").textContent = bottomName();
  }

  function wire() {
    $("live").addEventListener("load", () => setTimeout(nextLive, LIVE_MS));
    $("live").addEventListener("error", () => {
      $("camera-note").textContent = "No picture from the camera yet\u2026";
      setTimeout(nextLive, 1000);
    });
    $("live").addEventListener("load", () => { $("camera-note").textContent = ""; });
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
      img.src = (on ? "/wizard/overlay.png?t=" : "/wizard/still.png?t=") + Date.now();
      $("show-overlay").textContent = on ? "Show the plain still" : "Show fitted overlay";
    });
    $("reset").addEventListener("click", () => {
      if (result && result.corners_px) { corners = result.corners_px.map((c) => c.slice()); draw(); }
    });
    $("retake").addEventListener("click", beginStill);
    $("to-clear").addEventListener("click", beginStill);
    $("to-save").addEventListener("click", () => { step("save"); draw(); });
    $("back").addEventListener("click", () => step("corners"));
    // The bottom end is the corner order: swapping the ends turns it by two (BL<->TR, BR<->TL).
    $("swap").addEventListener("click", () => { corners = [corners[2], corners[3], corners[0], corners[1]]; draw(); });
    $("discipline").addEventListener("change", () => {
      $("table").value = status.options.disciplines[$("discipline").value];
      $("bottom-name").textContent = bottomName(); draw();
    });
    $("login-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const r = await post("/api/login", { pin: $("pin").value });
      $("pin").value = "";
      if (r.ok) { loggedIn(r.data.csrf); say("Logged in", true); } else say(r.data.error || "refused", false);
    });
    $("save").addEventListener("click", async () => {
      const r = await post("/api/wizard/save", { corners, table: $("table").value, discipline: $("discipline").value });
      const d = r.data;
      if (r.ok) {
        say(`Saved ${d.saved}: ${d.table}, camera ${Math.round(d.camera_height_mm)} mm above` +
            (d.live ? ` \u2014 ${d.live}` : ""), true);
        document.body.dataset.saved = "1";
      } else say(d.error || ("refused (" + r.status + ")"), false);
    });
  }

  async function start() {
    wire();
    const s = await (await fetch("/api/session")).json().catch(() => ({}));
    loggedIn(s.logged_in ? s.csrf : null);
    const r = await fetch("/api/wizard");
    status = await r.json().catch(() => ({}));
    if (!r.ok) { $("camera-note").textContent = status.error || "no camera for the wizard"; return; }
    fillChoices();
    step("camera");
    document.body.dataset.started = "1";
  }
  document.addEventListener("DOMContentLoaded", start);
})();
