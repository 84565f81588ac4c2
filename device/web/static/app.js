// The scoreboard page: one EventSource for the state, fetch() with the CSRF token for the referee's controls.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  let csrf = null;
  let lastSeq = -1;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function render(s) {
    document.body.dataset.version = String(s.version);
    $("title").textContent = s.title;
    const centre = $("centre");
    centre.replaceChildren(...s.centre.map(([label, value]) => {
      const d = el("span"); if (label) d.append(el("b", null, label)); d.append(value); return d;
    }));
    const status = $("status");
    status.hidden = !s.status; status.textContent = s.status || "";
    for (const side of s.sides) {
      const box = $("side-" + side.side);
      box.classList.toggle("shooting", !!side.shooting && !s.match_over);
      box.querySelector(".name").textContent = side.name;
      box.querySelector(".score").textContent = String(side.score);
      box.querySelector(".stats").replaceChildren(...side.stats.map(([label, value]) => {
        const d = el("div"); d.append(el("dt", null, label), el("dd", null, value)); return d;
      }));
    }
    $("lines").replaceChildren(...s.lines.map((l) => el("li", l.kind, l.text)));
    $("respot").replaceChildren(...s.respot.map((r) => el("li", null, r)));
    const img = $("diagram");
    if (s.has_diagram && s.seq !== lastSeq) { img.src = "/diagram/last.png?seq=" + s.seq; }
    img.hidden = !s.has_diagram;
    lastSeq = s.seq;
  }

  function connect() {
    const es = new EventSource("/events");
    es.addEventListener("state", (e) => render(JSON.parse(e.data)));
    es.onopen = () => { $("link").className = "link up"; };
    es.onerror = () => { $("link").className = "link down"; };  // EventSource reconnects by itself
  }

  function say(text, ok) {
    const m = $("message"); m.textContent = text; m.className = "message " + (ok ? "ok" : "err");
  }

  function loggedIn(token) {
    csrf = token;
    $("login-form").hidden = !!token;
    $("controls").hidden = !token;
  }

  async function post(path, body, withCsrf) {
    const headers = { "Content-Type": "application/json" };
    if (withCsrf && csrf) headers["X-CSRF-Token"] = csrf;
    const r = await fetch(path, { method: "POST", headers, body: JSON.stringify(body),
                                  credentials: "same-origin" });
    let data = {};
    try { data = await r.json(); } catch (e) { /* an empty or non-JSON answer */ }
    return { ok: r.ok, status: r.status, data };
  }

  async function control(record) {
    const r = await post("/api/control", record, true);
    if (r.ok) { say("Done: " + record.control, true); render(r.data.state); }
    else {
      say(r.data.error || ("refused (" + r.status + ")"), false);
      if (r.status === 401) loggedIn(null);
    }
  }

  async function startMatch(body, what) {
    const r = await post("/api/match", body, true);
    if (r.ok) { say("Started: " + what, true); render(r.data.state); }
    else {
      say(r.data.error || ("refused (" + r.status + ")"), false);
      if (r.status === 401) loggedIn(null);
    }
  }

  // Ending a match is not undone by "undo": the first tap arms the button, a second within 4 s does it.
  function twoTaps(button, action) {
    const label = button.textContent;
    let armed = null;
    return () => {
      if (armed) { clearTimeout(armed); armed = null; button.textContent = label; action(); return; }
      button.textContent = "Tap again: end this match";
      armed = setTimeout(() => { armed = null; button.textContent = label; }, 4000);
    };
  }

  function wire() {
    $("login-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const r = await post("/api/login", { pin: $("pin").value }, false);
      $("pin").value = "";
      if (r.ok) { loggedIn(r.data.csrf); say("Logged in", true); }
      else say(r.data.error || ("refused (" + r.status + ")"), false);
    });
    $("logout").addEventListener("click", async () => { await post("/api/logout", {}, false); loggedIn(null); say("Logged out", true); });
    $("undo").addEventListener("click", () => control({ control: "undo" }));
    $("override-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const rec = { control: "override" };
      const pts = {};
      if ($("ov-a").value !== "") pts.A = parseInt($("ov-a").value, 10);
      if ($("ov-b").value !== "") pts.B = parseInt($("ov-b").value, 10);
      if (Object.keys(pts).length) rec.points = pts;
      if ($("ov-turn").value) rec.turn = $("ov-turn").value;
      const foul = $("ov-foul").value.trim();
      if (foul) rec.foul = foul.toLowerCase() === "none" ? null : { code: foul };
      if ($("ov-reason").value.trim()) rec.reason = $("ov-reason").value.trim();
      control(rec);
    });
    $("other-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const kind = $("other-kind").value, arg = $("other-arg").value.trim();
      const rec = { control: kind };
      if (kind === "concede" || kind === "first_player") { if (arg) rec.side = arg.toUpperCase(); }
      else if (kind === "nominate" || kind === "free_ball") rec.ball = arg;
      else if (kind === "choose_group") {  // "A low" or "B high" (bilhar Art. 4.3)
        const [side, group] = arg.split(/\s+/);
        rec.side = (side || "").toUpperCase(); rec.group = (group || "").toLowerCase();
      } else if (kind === "ball_in_hand") {  // "x,y" in table mm, optionally "ball x,y" (Chapó)
        const m = arg.match(/^(?:(\S+)\s+)?(-?[\d.]+)\s*,\s*(-?[\d.]+)$/);
        if (m) { if (m[1]) rec.ball = m[1]; rec.at = [Number(m[2]), Number(m[3])]; }
      }
      control(rec);
    });
    $("new-game").addEventListener("click", twoTaps($("new-game"),
      () => startMatch({ action: "new_game" }, "new game")));
    const newMatch = twoTaps($("new-match"), () => {
      const d = $("nm-distance").value;
      startMatch({ action: "new_match", players: [$("nm-a").value, $("nm-b").value],
                   distance: d === "" ? null : parseInt(d, 10) }, "new match");
    });
    $("match-form").addEventListener("submit", (e) => { e.preventDefault(); newMatch(); });
  }

  async function start() {
    wire();
    try {
      const r = await fetch("/api/session", { credentials: "same-origin" });
      const s = await r.json();
      loggedIn(s.logged_in ? s.csrf : null);
    } catch (e) { loggedIn(null); }
    try { render(await (await fetch("/api/state")).json()); } catch (e) { /* the stream will bring it */ }
    connect();
  }
  document.addEventListener("DOMContentLoaded", start);
})();
