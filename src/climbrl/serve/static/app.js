// climbrl serve: the page. Plain JavaScript; every rule is checked by the server, which answers
// each refused move with the reason (shown in #message) and leaves the game unchanged.
"use strict";
const $ = (id) => document.getElementById(id);
let catalog = null;
let view = null;          // the server's view of the current game
let selected = new Set(); // card tokens the person selected
let replay = null, replayPos = 0;

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  let data = null;
  try { data = await r.json(); } catch (e) { data = { error: `the server answered ${r.status}` }; }
  if (!r.ok) { const err = new Error(data.error || `error ${r.status}`); err.status = r.status; err.data = data; throw err; }
  return data;
}

function show(section) {
  for (const s of ["setup", "play", "replays"]) $(s).hidden = s !== section;
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function cardEl(t, clickable) {
  const red = t.suit === "D" || t.suit === "H" || t.rank === "R";
  const e = el("div", { class: "card" + (red ? " red" : ""), "data-id": t.id, title: t.id }, t.label);
  if (clickable) e.addEventListener("click", () => toggle(t.id));
  return e;
}

function cardsEl(tokens, cls = "cards") {
  const box = el("div", { class: cls });
  for (const t of tokens) box.append(cardEl(t, false));
  return box;
}

// --- setup -------------------------------------------------------------------------------------
function fillSetup() {
  const game = $("game").value;
  const info = catalog[game];
  $("preset").replaceChildren(...info.presets.map((p) => el("option", { value: p }, p)));
  $("seat").replaceChildren(...Array.from({ length: info.seats }, (_, s) => el("option", { value: s }, `seat ${s}`)));
  $("agents").replaceChildren(...info.agents.map((a) => el("option", { value: a.spec }, a.label)));
  const box = $("opponents");
  box.querySelectorAll("input").forEach((i) => i.remove());
  for (let j = 0; j < info.seats - 1; j++) {
    box.append(el("input", { id: `opp${j}`, list: "agents", value: "heuristic", "aria-label": `opponent ${j + 1}` }));
  }
}

async function start(ev) {
  ev.preventDefault();
  const game = $("game").value;
  const opponents = Array.from($("opponents").querySelectorAll("input")).map((i) => i.value.trim());
  const body = { game, preset: $("preset").value, opponents, seat: Number($("seat").value),
                 seed: Number($("seed").value || 0), open_hands: $("open-hands").checked,
                 advisor: $("advisor").value.trim() || null };
  $("message").textContent = "";
  $("setup-message").textContent = "";
  try {
    view = await api("POST", "/api/games", body);
    history.replaceState(null, "", `?game=${encodeURIComponent(view.id)}`);
    selected.clear();
    show("play");
    render();
    $("reasoning").replaceChildren(el("p", { class: "hint" }, "Click \"why?\" beside an agent's move, or ask the advisor."));
  } catch (e) {
    show("setup");
    $("setup-message").textContent = e.message;
  }
}

// --- the game ----------------------------------------------------------------------------------
function toggle(id) {
  if (!view || !view.your_turn) return;
  if (selected.has(id)) selected.delete(id); else selected.add(id);
  renderHand();
}

function renderHand() {
  const hand = $("hand");
  hand.replaceChildren(...view.hand.map((t) => {
    const c = cardEl(t, true);
    if (selected.has(t.id)) c.classList.add("selected");
    return c;
  }));
}

function seatName(s) { return s === view.seat ? "you" : `${view.names[s]} (seat ${s})`; }

function render() {
  const v = view;
  const n = v.names.length;
  const bidding = v.phase === "bid";
  let status;
  if (v.over) status = v.result.you_won ? "Game over: you won!" : "Game over: you lost.";
  else if (v.your_turn) status = bidding ? "Your turn: bid or pass." : "Your turn: select cards and play, or pass.";
  else status = `Waiting for ${seatName(v.current_player)}.`;
  $("status").textContent = `${v.game === "big2" ? "Big 2" : "Dou Dizhu"} (${v.preset}), deal ${v.seed}. ${status}`;
  // seats
  const lastBySeat = {};
  for (const t of v.trick || []) lastBySeat[t.seat] = t;
  $("seats").replaceChildren(...Array.from({ length: n }, (_, s) => {
    const box = el("div", { class: "seat" + (s === v.current_player ? " current" : ""), "data-seat": s },
      el("span", { class: "name" }, seatName(s)),
      el("span", { class: "role" }, v.roles[s] === "player" ? "" : v.roles[s]),
      el("span", { class: "left" }, `${v.cards_left[s]} cards`));
    const last = lastBySeat[s];
    if (last) box.append(el("div", { class: "trick" }, last.pass ? "pass" : cardsEl(last.cards, "cards small")));
    if (v.hands && s !== v.seat) box.append(cardsEl(v.hands[s], "cards small hidden-hand"));
    return box;
  }));
  // centre
  if (v.to_beat) {
    $("to-beat-caption").textContent = `to beat: ${seatName(v.to_beat.seat)}`;
    $("to-beat").replaceChildren(...v.to_beat.cards.map((t) => cardEl(t, false)));
  } else {
    $("to-beat-caption").textContent = v.over ? "" : bidding ? "the auction" : "a new trick: the leader plays anything";
    $("to-beat").replaceChildren();
  }
  $("kitty-box").hidden = !(v.kitty && v.kitty.length);
  if (v.kitty) $("kitty").replaceChildren(...v.kitty.map((t) => cardEl(t, false)));
  $("scoreline").textContent = v.game === "doudizhu" && v.landlord >= 0
    ? `stake ${v.stake} x ${v.multiplier} (bombs: ${v.bombs})` : "";
  // hand and actions
  const handIds = new Set(v.hand.map((t) => t.id));
  for (const id of [...selected]) if (!handIds.has(id)) selected.delete(id);
  renderHand();
  const legal = v.legal || [];
  $("play-btn").disabled = !v.your_turn || bidding;
  $("pass-btn").disabled = !v.your_turn || bidding || !legal.some((m) => m.pass);
  $("hint-btn").disabled = !v.your_turn;
  $("advice-btn").disabled = !v.your_turn || !v.advisor;
  $("bids").replaceChildren(...(v.your_turn && bidding ? legal.map((m) =>
    el("button", { type: "button", class: "bid", "data-index": m.index, onclick: () => send({ index: m.index }) }, m.label)) : []));
  $("options").replaceChildren();
  $("hints").hidden = true;
  // history
  $("history").replaceChildren(...v.events.map((e) => {
    if (e.phase === "note") {
      return el("li", { class: "note" }, e.note, e.cards.length ? cardsEl(e.cards, "cards small") : null);
    }
    const li = el("li", { "data-n": e.n }, `${e.seat === v.seat ? "you" : e.who + " (" + e.seat + ")"}: ${e.label}`);
    if (e.note) li.append(` (${e.note})`);
    if (e.reasoning) li.append(el("button", { type: "button", class: "why", onclick: () => showReasoning(e.reasoning, e) }, "why?"));
    return li;
  }));
  $("history").scrollTop = $("history").scrollHeight;
  // result
  const res = $("result");
  res.hidden = !v.over;
  if (v.over) {
    const parts = [el("strong", {}, v.result.you_won ? "You won. " : "You lost. "),
      `Returns: ${v.result.returns.map((r, s) => `${seatName(s)} ${r >= 0 ? "+" : ""}${Number(r.toFixed(3))}`).join(", ")}.`];
    if (v.result.score) parts.push(` Stake ${v.result.score.stake}, bombs ${v.result.score.bombs}` +
      `${v.result.score.spring ? ", spring" : ""}: ${v.result.score.pay} per peasant.`);
    res.replaceChildren(...parts, el("div", {},
      el("a", { id: "download", href: `/api/games/${v.id}/record`, download: "" }, "Download the record (JSON)"), " ",
      el("button", { type: "button", id: "replay-this", onclick: () => openReplay(`/api/games/${v.id}/replay`) }, "Replay this game"), " ",
      el("button", { type: "button", id: "again", onclick: () => { $("seed").value = v.seed + 1; show("setup"); } }, "New deal")));
  }
}

async function send(move) {
  $("message").textContent = "";
  try {
    view = await api("POST", `/api/games/${view.id}/move`, { turn: view.turn, ...move });
    selected.clear();
    render();
  } catch (e) {
    $("message").textContent = e.message;
    if (e.data && e.data.options) {
      $("options").replaceChildren(...e.data.options.map((o) =>
        el("button", { type: "button", class: "option", onclick: () => send({ index: o.index }) }, o.label)));
    }
    if (e.status === 409) { try { view = await api("GET", `/api/games/${view.id}`); render(); $("message").textContent = e.message; } catch (_) {} }
  }
}

function showHints() {
  const box = $("hints");
  box.hidden = !box.hidden;
  box.replaceChildren(el("div", { class: "hint" }, `${view.legal.length} legal moves (click one to select its cards):`),
    ...view.legal.map((m) => el("button", { type: "button", class: "legal", onclick: () => {
      selected = new Set(m.cards.map((c) => c.id)); renderHand(); } }, m.label)));
}

function showReasoning(r, e) {
  const head = e ? `${e.seat === view.seat ? "you" : e.who} played ${e.label}` : `advisor ${r.agent}`;
  // a search shows its second measure beside the win share: Big 2's mean cards left, Dou Dizhu's mean points
  const extra = r.kind !== "search" ? null : r.rows.length && "points" in r.rows[0] ? "points" : "cards";
  const table = el("table", { class: "reasons" },
    el("tr", {}, el("th", {}, "move"), el("th", {}, r.kind === "search" ? "win share" : r.kind === "q" ? "Q-value" : "probability"),
       ...(extra ? [el("th", {}, extra === "points" ? "mean points" : "cards left"), el("th", {}, "visits")] : [])));
  for (const row of r.rows) {
    const val = row.value === null ? "-" : r.kind === "q" ? row.value.toFixed(3) : `${(100 * row.value).toFixed(1)}%`;
    const bar = row.value !== null && r.kind !== "q" ? el("span", { class: "bar", style: `width:${Math.round(60 * row.value)}px` }) : null;
    table.append(el("tr", { class: row.chosen ? "chosen" : "" }, el("td", {}, row.move), el("td", {}, bar, " ", val),
      ...(extra ? [el("td", {}, extra === "points" ? row.points.toFixed(2) : row.cards.toFixed(1)),
                   el("td", {}, String(row.visits))] : [])));
  }
  $("reasoning").replaceChildren(el("p", {}, el("strong", {}, head), ` (${r.agent}; ${r.n_legal} legal moves): ${r.what}`), table);
}

async function askAdvisor() {
  try { showReasoning(await api("GET", `/api/games/${view.id}/advice?turn=${view.turn}`), null); }
  catch (e) { $("message").textContent = e.message; }
}

// --- replays -----------------------------------------------------------------------------------
async function listRecords() {
  show("replays");
  const matches = await api("GET", "/api/matches");
  $("match-form").hidden = !matches.length;
  $("match-file").replaceChildren(...matches.map((m) => el("option", { value: m.file },
    `${m.agent} vs ${m.opponent} (${m.rules}, ${m.deals} deals): ${m.file}`)));
  const recs = await api("GET", "/api/records");
  $("records").replaceChildren(...(recs.length ? recs.map((r) => el("li", {},
    el("a", { href: "#", class: "record", onclick: (ev) => { ev.preventDefault(); openReplay(`/api/records/${encodeURIComponent(r.name)}`); } }, r.name)))
    : [el("li", { class: "hint" }, "no games finished here yet")]));
}

async function openReplay(path, body) {
  try {
    replay = body === undefined ? await api("GET", path) : await api("POST", path, body);
  } catch (e) { show("replays"); $("replay-message").textContent = e.message; return; }
  replayPos = 0;
  show("replays");
  $("replay-message").textContent = "";
  $("replay-view").hidden = false;
  renderReplay();
}

function renderReplay() {
  const f = replay.frames[replayPos];
  $("replay-title").textContent = replay.title || "";
  $("replay-check").textContent = replay.check ? `Check: ${replay.check.text}.` : "";
  $("replay-check").className = replay.check && !replay.check.same ? "error" : "";
  const last = replay.frames.length - 1;
  $("replay-pos").textContent = `move ${replayPos} of ${last}`;
  const who = (s) => (replay.names ? `${replay.names[s]} (seat ${s})` : `seat ${s}`);
  let text = replayPos === 0 ? "The deal." : `${who(f.seat)}: ${f.move.label}`;
  if (replayPos === last && replay.result) text += ` Game over; winners: ${replay.result.winners.map(who).join(", ") || "nobody"}.`;
  $("replay-move").textContent = text;
  $("replay-hands").replaceChildren(...f.hands.map((h, s) => el("div", { class: "replay-seat", "data-seat": s },
    el("strong", {}, `${who(s)}${f.landlord === s ? " (landlord)" : ""}: `), cardsEl(h), ` ${f.cards_left[s]} cards`)));
  $("replay-first").disabled = $("replay-prev").disabled = replayPos === 0;
  $("replay-next").disabled = $("replay-last").disabled = replayPos === last;
}

function step(to) { replayPos = Math.max(0, Math.min(replay.frames.length - 1, to)); renderReplay(); }

// --- start ---------------------------------------------------------------------------------------
async function boot() {
  catalog = await api("GET", "/api/catalog");
  $("game").replaceChildren(...Object.keys(catalog).map((g) => el("option", { value: g }, g === "big2" ? "Big 2" : "Dou Dizhu")));
  $("game").addEventListener("change", fillSetup);
  fillSetup();
  $("setup-form").addEventListener("submit", start);
  $("play-btn").addEventListener("click", () => send({ cards: [...selected] }));
  $("pass-btn").addEventListener("click", () => send({ cards: [] }));
  $("clear-btn").addEventListener("click", () => { selected.clear(); renderHand(); });
  $("hint-btn").addEventListener("click", showHints);
  $("advice-btn").addEventListener("click", askAdvisor);
  $("nav-new").addEventListener("click", () => show("setup"));
  $("nav-replays").addEventListener("click", listRecords);
  $("replay-first").addEventListener("click", () => step(0));
  $("replay-prev").addEventListener("click", () => step(replayPos - 1));
  $("replay-next").addEventListener("click", () => step(replayPos + 1));
  $("replay-last").addEventListener("click", () => step(replay.frames.length - 1));
  $("match-replay").addEventListener("click", () => {
    $("replay-move").textContent = "replaying the match's games (a search agent takes a while)...";
    openReplay("/api/matches/replay", { file: $("match-file").value, deal: Number($("match-deal").value),
                                        seat: Number($("match-seat").value) });
  });
  $("record-file").addEventListener("change", async (ev) => {
    const f = ev.target.files[0];
    if (f) openReplay("/api/replay", await f.text());
  });
  const id = new URLSearchParams(location.search).get("game");
  if (id) {
    try { view = await api("GET", `/api/games/${encodeURIComponent(id)}`); show("play"); render(); return; }
    catch (e) { $("message").textContent = e.message; }
  }
  show("setup");
}
boot().catch((e) => { document.body.prepend(el("p", { id: "fatal" }, `The page could not start: ${e.message}`)); });
