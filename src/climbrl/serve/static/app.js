// climbrl serve: the page. Plain JavaScript; every rule is checked by the server, which answers
// each refused move with the reason (shown in #message) and leaves the game unchanged.
//
// The agents move one request at a time (POST /api/games/{id}/step): the seat to move shows
// "thinking..." while its agent decides, and each play is shown as it comes, a short pause apart
// (the setup's "pause", kept in this browser; ?pause=MS in the address sets it too).
// The session's score (per seat, over the deals played with the same seats and agents) is kept
// in this browser's localStorage, so it survives a reload.
"use strict";
const $ = (id) => document.getElementById(id);
let catalog = null;
let view = null;          // the server's view of the current game
let selected = new Set(); // card tokens the person selected
let replay = null, replayPos = 0;
let busy = false;         // a request of the person's is on its way: further clicks wait for it
let agentRun = 0;         // the agents' loop of the current game (a newer one stops an older one)
let thinking = null;      // the seat whose agent is deciding
let shownTurn = null;     // the game and turn the page shows (messages are cleared when it changes)
let hintShown = null;     // the hint of this turn: {turn, choice, all}
const renderLog = [];     // each table drawn: {turn, moves, at} (the browser tests read it)
window.climbrlRenders = renderLog;

const SUIT_SYMBOL = { D: "\u2666", C: "\u2663", H: "\u2665", S: "\u2660" };
const SUIT_NAME = { D: "diamonds", C: "clubs", H: "hearts", S: "spades" };
const RANK_NAME = { J: "jack", Q: "queen", K: "king", A: "ace", T: "10" };
const SESSIONS = "climbrl.sessions.v1";
const PAUSE = "climbrl.pause";

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

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

function show(section) {
  for (const s of ["setup", "play", "replays"]) $(s).hidden = s !== section;
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const signed = (x) => `${x > 0 ? "+" : x < 0 ? "\u2212" : ""}${Number(Math.abs(x).toFixed(2))}`;
const gameTitle = (g) => (g === "big2" ? "Big 2" : g === "doudizhu" ? "Dou Dizhu" : g);

// A spec's short name: a checkpoint by its folder, a search as "search", else the agent's name.
function shortName(spec) {
  if (!spec) return "?";
  const m = spec.match(/checkpoint:([^,#]+)/);
  if (m) {
    const parts = m[1].trim().split("/");
    const file = parts.pop();
    const base = file === "policy.pt" && parts.length ? parts.pop() : file.replace(/\.pt$/, "");
    return spec.startsWith("search") ? `search (${base})` : base;
  }
  const head = spec.split(":")[0].trim();
  return head.length > 16 ? `${head.slice(0, 15)}\u2026` : head;
}

// --- cards: drawn here (CSS and a small inline SVG for the jokers) ------------------------------
function cardName(t) {
  if (t.rank === "B") return "black joker";
  if (t.rank === "R") return "red joker";
  const r = RANK_NAME[t.rank] || t.rank;
  return t.suit ? `${r} of ${SUIT_NAME[t.suit]}` : r;
}

// a jester's cap with three bells (parsed by the HTML parser, which puts it in the SVG namespace)
const JESTER = '<svg viewBox="0 0 40 40" aria-hidden="true">' +
  '<path d="M6 30 Q4 14 2 8 Q12 14 14 20 Q18 8 20 3 Q22 8 26 20 Q28 14 38 8 Q36 14 34 30 Z" fill="currentColor"/>' +
  '<circle cx="2.6" cy="8" r="2.6" fill="#d4a017"/><circle cx="20" cy="3" r="2.6" fill="#d4a017"/>' +
  '<circle cx="37.4" cy="8" r="2.6" fill="#d4a017"/><rect x="5" y="30" width="30" height="6" rx="2" fill="#d4a017"/></svg>';
function jester() {
  const holder = document.createElement("span");
  holder.innerHTML = JESTER;
  return holder.firstChild;
}

function cardEl(t, opts = {}) {
  const joker = t.rank === "B" || t.rank === "R";
  const red = t.suit === "D" || t.suit === "H" || t.rank === "R";
  const label = cardName(t);
  const attrs = { class: `card${red ? " red" : ""}${joker ? " joker" : ""}`, "data-id": t.id, "data-rank": t.rank,
                  title: joker ? label : t.label };
  if (opts.hand) Object.assign(attrs, { role: "checkbox", tabindex: "0", "aria-checked": String(!!opts.selected), "aria-label": label });
  else Object.assign(attrs, { role: "img", "aria-label": label });
  if (opts.selected) attrs.class += " selected";
  const face = el("span", { class: "face" });
  if (joker) {
    face.append(el("span", { class: "corner tl" }, ..."JOKER".split("").map((c) => el("span", {}, c))), jester(),
                el("span", { class: "corner br" }, ..."JOKER".split("").map((c) => el("span", {}, c))));
  } else {
    const rank = t.rank === "T" ? "10" : t.rank;
    const sym = t.suit ? SUIT_SYMBOL[t.suit] : "";
    const corner = (where) => el("span", { class: `corner ${where}` }, el("span", { class: `r${rank === "10" ? " ten" : ""}` }, rank),
                                 sym ? el("span", { class: "s" }, sym) : null);
    const court = "JQK".includes(rank);
    face.append(corner("tl"), el("span", { class: `pip${sym ? "" : " rank"}${court && sym ? " court" : ""}` },
                                 sym ? (court ? rank + sym : sym) : rank), corner("br"));
  }
  const c = el("div", attrs, face);
  if (opts.hand) c.addEventListener("click", () => toggle(t.id));
  return c;
}

function backEl() {
  return el("div", { class: "card back", role: "img", "aria-label": "a card face down" }, el("span", { class: "face" }));
}

function cardsEl(tokens, cls = "cards small wrap", label = null) {
  const box = el("div", { class: cls, role: "group", "aria-label": label });
  for (const t of tokens) box.append(cardEl(t));
  return box;
}

// --- the table: seats around it (yours at the bottom), the trick in the middle -----------------
function position(s, me, n) {
  const rel = (s - me + n) % n;
  if (rel === 0) return "bottom";
  if (n === 3) return rel === 1 ? "right" : "left";
  return ["bottom", "right", "top", "left"][rel];
}

// model: {n, me, prefix, seats: [{name, full, count, role, bid, last, hand, current, thinking, winner}],
//         toBeat, caption, kitty, kittyDown, scoreline}
function renderTable(felt, model) {
  felt.className = `felt n${model.n}`;
  const parts = model.seats.map((st, s) => {
    const pos = position(s, model.me, model.n);
    const cls = `seat pos-${pos}${st.current ? " current" : ""}${st.thinking ? " thinking" : ""}${st.winner ? " winner" : ""}`;
    const box = el("div", { class: cls, "data-seat": s, title: st.full, role: "group",
                            "aria-label": `${st.name}${s === model.me ? "" : ` (seat ${s})`}: ${plural(st.count, "card")} left` });
    box.append(el("div", { class: "seat-head" }, el("span", { class: "name" }, st.name),
                  el("span", { class: "seatno" }, `seat ${s}`)));
    const info = el("div", { class: "seat-info" },
      el("span", { class: `tag count${st.count <= 2 && st.count > 0 ? " low" : ""}` }, plural(st.count, "card")));
    if (st.role === "landlord") info.append(el("span", { class: "tag landlord" }, "\u265B landlord"));
    else if (st.role === "peasant") info.append(el("span", { class: "tag peasant" }, "peasant"));
    if (st.bid) info.append(el("span", { class: "tag bid", "data-bid": st.bid }, st.bid));
    info.append(el("span", { class: "thinking-mark", "aria-hidden": st.thinking ? null : "true" }, "thinking",
                   el("i", {}, "."), el("i", {}, "."), el("i", {}, ".")));
    box.append(info);
    if (st.last) {
      box.append(st.last.pass ? el("div", { class: "last last-pass" }, "pass")
        : cardsEl(st.last.cards, "cards small wrap last", `last play: ${st.last.label}`));
    }
    if (st.hand) box.append(cardsEl(st.hand, "cards tiny wrap open-hand", "hand"));
    return box;
  });
  const p = model.prefix || "";
  const center = el("div", { class: "center" });
  if (model.kitty && model.kitty.length) {
    const kitty = model.kittyDown ? el("div", { id: `${p}kitty`, class: "cards small wrap" }, ...model.kitty.map(backEl))
      : cardsEl(model.kitty, "cards small wrap", "kitty");
    kitty.id = `${p}kitty`;
    center.append(el("div", { class: "kitty-box" }, el("span", { class: "caption" }, "kitty"), kitty));
  }
  center.append(el("div", { class: "caption", id: `${p}to-beat-caption` }, model.caption || ""));
  const trick = el("div", { id: `${p}to-beat`, class: "cards fit trick center-row", role: "group", "aria-label": "the play to beat" });
  if (model.toBeat) for (const t of model.toBeat.cards) trick.append(cardEl(t));
  center.append(trick);
  if (model.scoreline) center.append(el("div", { class: "scoreline" }, model.scoreline));
  felt.replaceChildren(...parts, center);
}

function lastBySeat(trick) {
  const out = {};
  for (const t of trick || []) out[t.seat] = t;
  return out;
}

function bidsBySeat(bids) {
  const out = {};
  for (const b of bids || []) out[b.seat] = b.label;
  return out;
}

function roleOf(roles, s) { return roles ? (roles[s] === "landlord" ? "landlord" : roles[s] === "peasant" ? "peasant" : "") : ""; }

// --- setup -------------------------------------------------------------------------------------
function games() { return Object.keys(catalog).filter((g) => catalog[g] && catalog[g].presets); }

function strengthText(m) {
  const h = m.headline || {};
  const games_ = (x) => (x.games ? ` of ${Number(x.games).toLocaleString("en")} games` : "");
  const parts = [];
  if (h.heuristic) {
    const x = h.heuristic;
    const ci = x.win_rate_low !== undefined ? ` (95%: ${pct(x.win_rate_low)}\u2013${pct(x.win_rate_high)})` : "";
    const roles = x.landlord_win_rate !== undefined ? `; as landlord ${pct(x.landlord_win_rate)}, as peasants ${pct(x.peasants_win_rate)}` : "";
    const fair = m.game === "big2" ? " against three heuristic agents (an even share is 25%)" : " against the heuristic";
    parts.push(`wins ${pct(x.win_rate)}${games_(x)}${fair}${ci}${roles}`);
  }
  for (const [opp, x] of Object.entries(h)) if (opp !== "heuristic") parts.push(`${pct(x.win_rate)} against ${opp}`);
  return parts.join("; ");
}

function modelText(m) {
  if (!m || !m.headline || !Object.keys(m.headline).length) return "";
  return `${m.name} (${(m.algo || "").toUpperCase()}, trained under the ${m.rules} rules): ${strengthText(m)}.`;
}

function fillSetup() {
  const game = $("game").value;
  const info = catalog[game];
  $("preset").replaceChildren(...info.presets.map((p) => el("option", { value: p }, p)));
  $("seat").replaceChildren(...Array.from({ length: info.seats }, (_, s) => el("option", { value: s }, `seat ${s}`)));
  $("agents").replaceChildren(...info.agents.map((a) => el("option", { value: a.spec }, a.label)));
  const box = $("opponents");
  box.querySelectorAll("input").forEach((i) => i.remove());
  const def = info.default_opponent || { spec: "heuristic" };
  for (let j = 0; j < info.seats - 1; j++) {
    box.append(el("input", { id: `opp${j}`, list: "agents", value: def.spec, "aria-label": `opponent ${j + 1}` }));
  }
  const text = modelText(def);
  $("default-opponent").textContent = text ? `Default opponent, the strongest model shipped for ${gameTitle(game)}: ${text}` : "";
}

function settingsOf(v) {
  const n = v.names.length;
  return { game: v.game, preset: v.preset, seat: v.seat, open_hands: v.open_hands, advisor: v.advisor || null,
           opponents: Array.from({ length: n - 1 }, (_, j) => v.names[(v.seat + 1 + j) % n]) };
}

async function newGame(body) {
  $("setup-message").textContent = "";
  agentRun++;
  busy = true;
  try {
    const v = await api("POST", "/api/games", { ...body, step: true });
    view = v;
    history.replaceState(null, "", `?game=${encodeURIComponent(view.id)}`);
    selected.clear();
    hintShown = null;
    show("play");
    $("reasoning").replaceChildren(el("p", { class: "hint" }, "Click \"why?\" beside an agent's move, or ask the advisor."));
    busy = false;
    render();
    runAgents();
  } catch (e) {
    busy = false;
    show("setup");
    $("setup-message").textContent = e.message;
  }
}

function start(ev) {
  ev.preventDefault();
  const game = $("game").value;
  const opponents = Array.from($("opponents").querySelectorAll("input")).map((i) => i.value.trim());
  setPause(Number($("pause").value));
  newGame({ game, preset: $("preset").value, opponents, seat: Number($("seat").value),
            seed: Number($("seed").value || 0), open_hands: $("open-hands").checked,
            advisor: $("advisor").value.trim() || null });
}

// New deal: the same seats and agents, the next deal.
function nextDeal() {
  newGame({ ...settingsOf(view), seed: view.seed + 1 });
}

// --- pacing: the agents' moves, one request and one play at a time ---------------------------------
let pauseMs = 600;
function setPause(ms) {
  if (!Number.isFinite(ms) || ms < 0) return;
  pauseMs = Math.min(ms, 10000);
  try { localStorage.setItem(PAUSE, String(pauseMs)); } catch (e) { /* storage off: this page only */ }
  const sel = $("pause");
  if (![...sel.options].some((o) => Number(o.value) === pauseMs)) sel.append(el("option", { value: pauseMs }, `${pauseMs} ms`));
  sel.value = String(pauseMs);
}

async function runAgents() {
  const run = ++agentRun;
  while (view && view.stepwise && !view.over && !view.your_turn && run === agentRun) {
    const gid = view.id, turn = view.turn, started = performance.now();
    thinking = view.current_player;
    render();
    let next;
    try {
      next = await api("POST", `/api/games/${gid}/step`, { turn });
    } catch (e) {
      if (run !== agentRun) return;
      thinking = null;
      if (e.status === 409) {  // another tab moved this game on: show it as it is, and go on
        try { next = await api("GET", `/api/games/${gid}`); } catch (e2) { say(e2.message); render(); return; }
      } else {
        render();
        say(e.message);
        $("options").replaceChildren(el("button", { type: "button", id: "retry", onclick: () => { say(""); runAgents(); } },
                                        "Try again"));
        return;
      }
    }
    const wait = pauseMs - (performance.now() - started);
    if (wait > 0) await sleep(wait);
    if (run !== agentRun || !view || view.id !== gid) return;
    thinking = null;
    view = next;
    render();
  }
  if (run === agentRun && thinking !== null) { thinking = null; render(); }
}

// --- the session: the score over the deals played with the same seats and agents ---------------
function sessionKey(v) { return JSON.stringify(settingsOf(v)); }

function loadSessions() {
  try {
    const all = JSON.parse(localStorage.getItem(SESSIONS) || "{}");
    return all && typeof all === "object" && !Array.isArray(all) ? all : {};
  } catch (e) { return {}; }
}

function sessionOf(all, key) {
  const s = all[key];
  const ok = s && Array.isArray(s.deals) && s.deals.every((d) => d && Array.isArray(d.returns));
  return ok ? s : { deals: [] };
}

function saveSessions(all) {
  try { localStorage.setItem(SESSIONS, JSON.stringify(all)); } catch (e) { /* storage off */ }
}

function session(v) {
  return sessionOf(loadSessions(), sessionKey(v));
}

function recordDeal(v) {
  const all = loadSessions();
  const key = sessionKey(v);
  const s = sessionOf(all, key);
  if (s.deals.some((d) => d.id === v.id)) return;
  s.deals.push({ id: v.id, seed: v.seed, returns: v.result.returns, won: v.result.you_won });
  s.deals = s.deals.slice(-500);
  all[key] = s;
  saveSessions(all);
}

function resetSession() {
  const all = loadSessions();
  delete all[sessionKey(view)];
  saveSessions(all);
  renderSession();
}

function renderSession() {
  const v = view;
  const s = session(v);
  const n = v.names.length;
  const points = Array(n).fill(0);
  for (const d of s.deals) d.returns.forEach((r, i) => { points[i] += r; });
  const won = s.deals.filter((d) => d.won).length;
  const order = Array.from({ length: n }, (_, j) => (v.seat + j) % n);
  const rows = order.map((seat) => el("tr", { "data-seat": seat, "data-points": String(points[seat]) },
    el("td", { title: v.names[seat] }, seat === v.seat ? "you" : shortName(v.names[seat])),
    el("td", { class: "hint" }, `seat ${seat}`), el("td", { class: "num" }, signed(points[seat]))));
  $("session").replaceChildren(
    el("p", { id: "session-summary", "data-deals": String(s.deals.length), "data-won": String(won) },
       s.deals.length ? `${plural(s.deals.length, "deal")} played, you won ${won} (${pct(won / s.deals.length)})`
         : "No deal finished yet with these seats and agents."),
    el("table", { class: "score" }, el("tr", {}, el("th", {}, "seat"), el("th", {}, ""), el("th", { class: "num" }, "points")), ...rows),
    el("button", { type: "button", id: "session-reset", class: "hint", onclick: resetSession }, "Start a new session"));
}

// --- the game ----------------------------------------------------------------------------------
function say(text, info = false) {
  $("message").textContent = text;
  $("message").className = info ? "info" : "";
}

function toggle(id) {
  if (!view || !view.your_turn || view.phase === "bid" || busy) return;
  if (selected.has(id)) selected.delete(id); else selected.add(id);
  say("");
  $("options").replaceChildren();
  renderHand();
}

function renderHand() {
  const hand = $("hand");
  const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest("#hand .card");
  const keep = focused ? focused.dataset.id : null;
  const suggested = hintShown && hintShown.turn === view.turn && hintShown.choice ? new Set(hintShown.choice.cards.map((c) => c.id)) : new Set();
  hand.classList.toggle("idle", !view.your_turn);
  hand.hidden = view.over && !view.hand.length;
  hand.replaceChildren(...view.hand.map((t) => {
    const c = cardEl(t, { hand: true, selected: selected.has(t.id) });
    if (suggested.has(t.id)) c.classList.add("suggested");
    return c;
  }));
  if (keep) { const again = hand.querySelector(`.card[data-id="${CSS.escape(keep)}"]`); if (again) again.focus(); }
  $("play-btn").disabled = !view.your_turn || view.phase === "bid" || busy;
}

function seatName(s) { return s === view.seat ? "you" : `${shortName(view.names[s])} (seat ${s})`; }

function render() {
  const v = view;
  const n = v.names.length;
  const bidding = v.phase === "bid";
  const here = `${v.id}:${v.turn}`;
  if (here !== shownTurn) {  // the state changed: yesterday's messages, options and hints go
    if (shownTurn !== null) { say(""); $("options").replaceChildren(); }
    $("hints").hidden = true;
    shownTurn = here;
  }
  const moves = v.events.filter((e) => e.phase !== "note").length;
  renderLog.push({ id: v.id, turn: v.turn, moves, at: performance.now(), thinking });
  if (renderLog.length > 5000) renderLog.splice(0, 1000);
  document.body.classList.toggle("is-ddz", v.game === "doudizhu");
  let status;
  if (v.over) status = v.result.you_won ? "Game over: you won!" : "Game over: you lost.";
  else if (v.your_turn) status = bidding ? "Your turn: bid or pass." : "Your turn: select cards and play, or pass.";
  else status = `${seatName(v.current_player)} ${thinking === v.current_player ? "is thinking\u2026" : "moves next."}`;
  $("status").textContent = `${gameTitle(v.game)} (${v.preset}), deal ${v.seed}. ${status}`;
  // the table
  const last = lastBySeat(v.trick);
  const bids = bidsBySeat(v.bids);
  const winners = v.over ? new Set(v.result.winners) : new Set();
  renderTable($("felt"), {
    n, me: v.seat, prefix: "",
    seats: Array.from({ length: n }, (_, s) => ({
      name: s === v.seat ? "you" : shortName(v.names[s]), full: s === v.seat ? "you" : v.names[s],
      count: v.cards_left[s], role: roleOf(v.roles, s), bid: bids[s],
      last: last[s], hand: v.hands && s !== v.seat ? v.hands[s] : null, current: !v.over && s === v.current_player,
      thinking: thinking === s, winner: winners.has(s) })),
    toBeat: v.to_beat,
    caption: v.over ? "game over" : v.to_beat ? `to beat: ${v.to_beat.label}, played by ${seatName(v.to_beat.seat)}`
      : bidding ? "the auction" : `a new trick: ${seatName(v.current_player)} ${v.current_player === v.seat ? "lead" : "leads"}`,
    kitty: v.game === "doudizhu" ? (v.kitty && v.kitty.length ? v.kitty : [{}, {}, {}]) : null,
    kittyDown: v.game === "doudizhu" && !(v.kitty && v.kitty.length),
    scoreline: v.game === "doudizhu" && v.landlord >= 0 ? `stake ${v.stake} \u00d7 ${v.multiplier} (${plural(v.bombs, "bomb")})` : "",
  });
  // the hand and the actions
  const handIds = new Set(v.hand.map((t) => t.id));
  for (const id of [...selected]) if (!handIds.has(id)) selected.delete(id);
  renderHand();
  const legal = v.legal || [];
  $("pass-btn").disabled = !v.your_turn || bidding || !legal.some((m) => m.pass) || busy;
  $("clear-btn").disabled = !v.your_turn || bidding;
  $("hint-btn").disabled = !v.your_turn || busy;
  $("advice-btn").disabled = !v.your_turn || !v.advisor || busy;
  $("advice-btn").hidden = !v.advisor;
  $("bids").replaceChildren(...(v.your_turn && bidding ? legal.map((m) =>
    el("button", { type: "button", class: "bid", "data-index": m.index, disabled: busy,
                   onclick: () => send({ index: m.index }) }, m.label)) : []));
  // history
  $("history").replaceChildren(...v.events.map((e) => {
    if (e.phase === "note") {
      return el("li", { class: "note" }, e.note, e.cards.length ? cardsEl(e.cards, "cards tiny wrap") : null);
    }
    const li = el("li", { "data-n": e.n }, `${e.seat === v.seat ? "you" : `${shortName(e.who)} (${e.seat})`}: ${e.label}`);
    if (e.note) li.append(` (${e.note})`);
    if (e.reasoning) li.append(el("button", { type: "button", class: "why", onclick: () => showReasoning($("reasoning"), e.reasoning, e) }, "why?"));
    return li;
  }));
  $("history").scrollTop = $("history").scrollHeight;
  renderOpponents();
  // the result, and the session
  const res = $("result");
  res.hidden = !v.over;
  if (v.over) {
    recordDeal(v);
    const parts = [el("strong", {}, v.result.you_won ? "You won. " : "You lost. "),
      `Points: ${v.result.returns.map((r, s) => `${seatName(s)} ${signed(r)}`).join(", ")}.`];
    if (v.result.score) parts.push(` Stake ${v.result.score.stake}, ${plural(v.result.score.bombs, "bomb")}` +
      `${v.result.score.spring ? ", spring" : ""}: ${v.result.score.pay} per peasant.`);
    res.replaceChildren(...parts, el("div", { class: "actions" },
      el("button", { type: "button", id: "again", class: "primary", onclick: nextDeal }, "New deal"),
      el("button", { type: "button", id: "replay-this", onclick: () => openReplay(`/api/games/${v.id}/replay`) }, "Replay this game"),
      el("a", { id: "download", href: `/api/games/${v.id}/record`, download: "" }, "Download the record (JSON)"),
      el("button", { type: "button", id: "change-seats", onclick: () => { $("seed").value = v.seed + 1; show("setup"); } }, "Other seats or agents")));
  }
  renderSession();
}

function renderOpponents() {
  const v = view;
  const info = catalog && catalog[v.game];
  const model = info && info.default_opponent;
  const specs = [...new Set(v.names.filter((nm, s) => s !== v.seat))];
  const lines = specs.map((spec) => {
    const seats = v.names.map((nm, s) => (nm === spec && s !== v.seat ? s : null)).filter((s) => s !== null);
    const text = model && model.spec === spec ? modelText(model) : "";
    const strong = text ? ` \u2014 ${text}` : "";
    return el("p", { class: "opp-line", title: spec }, el("strong", {}, shortName(spec)),
              ` (${seats.length > 1 ? "seats" : "seat"} ${seats.join(", ")}): ${spec}${strong}`);
  });
  if (v.open_hands) lines.push(el("p", { class: "opp-line hint" }, "Open cards: every hand is shown, and each agent's reasoning as it plays."));
  $("opponent-info").replaceChildren(...lines);
}

async function send(move) {
  if (busy || !view || !view.your_turn) return;
  if (move.cards !== undefined && !move.cards.length && move.pass !== true) {
    say("Select the cards to play first (click them, or type their ranks), or press Pass.");
    return;
  }
  delete move.pass;
  say("");
  busy = true;
  render();
  let refused = null;
  try {
    view = await api("POST", `/api/games/${view.id}/move`, { turn: view.turn, ...move });
    selected.clear();
  } catch (e) {
    refused = e;
  }
  busy = false;
  render();
  if (refused) {
    const e = refused;
    if (e.status === 409) {  // another tab moved the game: show it as it is now
      try { view = await api("GET", `/api/games/${view.id}`); selected.clear(); render(); } catch (_) { /* the message says it */ }
      say("The game had moved on in another tab or window: this is where it stands now.", true);
    } else {
      say(e.message);
    }
    if (e.data && e.data.options) {
      $("options").replaceChildren(el("span", { class: "hint" }, "These cards make several moves: "), ...e.data.options.map((o) =>
        el("button", { type: "button", class: "option", onclick: () => send({ index: o.index }) }, o.label)));
    }
  }
  runAgents();
}

function playSelected() { send({ cards: [...selected] }); }
function pass() { send({ cards: [], pass: true }); }
function clearSelection() { selected.clear(); say(""); $("options").replaceChildren(); if (view) renderHand(); }

function selectMove(m) {
  if (!m) return;
  selected = new Set(m.cards.map((c) => c.id));
  say("");
  renderHand();
}

// Hint: the advisor's best move (the heuristic's when the game has no advisor), selected; a second
// click shows every legal move.
async function hint() {
  if (!view || !view.your_turn || busy) return;
  if (hintShown && hintShown.turn === view.turn && hintShown.choice) { showAllMoves(); return; }
  const turn = view.turn, gid = view.id;
  let h;
  try { h = await api("GET", `/api/games/${gid}/hint?turn=${turn}`); } catch (e) { say(e.message); return; }
  if (!view || view.id !== gid || view.turn !== turn) return;
  hintShown = { turn, choice: h.choice, reasoning: h };
  const box = $("hints");
  box.hidden = false;
  const m = h.choice;
  if (view.phase === "bid") {
    for (const b of $("bids").querySelectorAll("button")) b.classList.toggle("suggested", Number(b.dataset.index) === m.index);
  } else if (!m.pass) {
    selectMove(m);
  } else {
    selected.clear(); renderHand();
  }
  box.replaceChildren(el("div", { id: "hint-text" }, el("strong", {}, "Hint "), `(${h.agent}): `,
    el("span", { id: "hint-move" }, m.pass ? "pass" : m.label), m.pass || view.phase === "bid" ? " " : " \u2014 selected; Enter plays it. ",
    el("button", { type: "button", id: "all-moves-btn", onclick: showAllMoves }, `All ${plural(view.legal.length, "legal move")}`)));
  renderHand();
}

function showAllMoves() {
  const box = $("hints");
  box.hidden = false;
  if (box.querySelector(".list")) return;
  box.append(el("div", { class: "list" }, el("div", { class: "hint" }, "Click one to select its cards:"),
    ...view.legal.map((m) => el("button", { type: "button", class: `legal${hintShown && hintShown.choice && hintShown.choice.index === m.index ? " suggested" : ""}`,
      onclick: () => (view.phase === "bid" ? send({ index: m.index }) : selectMove(m)) }, m.label))));
}

function showReasoning(target, r, e, pick) {
  const head = e ? `${e.seat === (view && view.seat) ? "you" : shortName(e.who)} played ${e.label}` : `advisor ${r.agent}`;
  // a search shows its second measure beside the win share: Big 2's mean cards left, Dou Dizhu's mean points
  const extra = r.kind !== "search" ? null : r.rows.length && "points" in r.rows[0] ? "points" : "cards";
  const table = el("table", { class: "reasons" },
    el("tr", {}, el("th", {}, "move"), el("th", {}, r.kind === "search" ? "win share" : r.kind === "q" ? "Q-value" : "probability"),
       ...(extra ? [el("th", {}, extra === "points" ? "mean points" : "cards left"), el("th", {}, "visits")] : [])));
  for (const row of r.rows) {
    const val = row.value === null ? "-" : r.kind === "q" ? row.value.toFixed(3) : pct(row.value);
    const bar = row.value !== null && r.kind !== "q" ? el("span", { class: "bar", style: `width:${Math.round(60 * row.value)}px` }) : null;
    const clickable = pick && row.index !== undefined;
    const tr = el("tr", { class: `${row.chosen ? "chosen" : ""}${clickable ? " pick" : ""}`, tabindex: clickable ? "0" : null,
                          title: clickable ? "select this move" : null },
      el("td", {}, row.move), el("td", {}, bar, " ", val),
      ...(extra ? [el("td", {}, extra === "points" ? row.points.toFixed(2) : row.cards.toFixed(1)),
                   el("td", {}, String(row.visits))] : []));
    if (clickable) {
      const choose = () => pick(row.index);
      tr.addEventListener("click", choose);
      tr.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); ev.stopPropagation(); choose(); } });
    }
    table.append(tr);
  }
  target.replaceChildren(el("p", {}, el("strong", {}, head), ` (${r.agent}; ${plural(r.n_legal, "legal move")}): ${r.what}`,
    pick ? el("span", { class: "hint" }, " Click a row to select its move.") : null), el("div", { class: "reasons-wrap" }, table));
}

async function askAdvisor() {
  if (!view || !view.your_turn) return;
  const turn = view.turn, gid = view.id;
  try {
    const r = await api("GET", `/api/games/${gid}/advice?turn=${turn}`);
    if (!view || view.id !== gid || view.turn !== turn) return;
    showReasoning($("reasoning"), r, null, (index) => {
      if (!view || view.turn !== turn) return;
      const m = (view.legal || []).find((x) => x.index === index);
      if (view.phase === "bid") send({ index }); else if (m) selectMove(m);
    });
  } catch (e) { say(e.message); }
}

// --- the keyboard: ranks select, Enter plays, P or Space passes, Esc clears ---------------------
const KEY_RANK = { t: "10", 0: "10", 1: "10", j: "J", q: "Q", k: "K", a: "A", 2: "2", b: "B", r: "R" };
function rankOfKey(key) {
  const k = key.toLowerCase();
  let r = KEY_RANK[k] || ("3456789".includes(k) && k.length === 1 ? k : null);
  if (!r) return null;
  if (view.game === "doudizhu" && r === "10") r = "T";
  if (view.game === "big2" && (r === "B" || r === "R")) return null;
  return r;
}

function selectRank(rank) {
  const cards = view.hand.filter((t) => t.rank === rank);
  if (!cards.length) { say(`You hold no ${rank === "T" ? "10" : rank}.`); return; }
  const next = cards.find((t) => !selected.has(t.id));
  if (next) selected.add(next.id); else for (const t of cards) selected.delete(t.id);
  say("");
  renderHand();
}

function onKey(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const target = ev.target;
  const tag = target && target.tagName;
  if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
  if (!$("replays").hidden && replay && !$("replay-view").hidden) {
    if (ev.key === "ArrowRight") { ev.preventDefault(); step(replayPos + 1); }
    else if (ev.key === "ArrowLeft") { ev.preventDefault(); step(replayPos - 1); }
    return;
  }
  if ($("play").hidden || !view) return;
  const onCard = target && target.classList && target.classList.contains("card");
  const onButton = tag === "BUTTON" || tag === "A" || (target && target.getAttribute && target.getAttribute("tabindex") === "0" && !onCard);
  if (ev.key === "Escape") { ev.preventDefault(); clearSelection(); $("hints").hidden = true; return; }
  if (!view.your_turn) return;
  if (view.phase === "bid") {
    const legal = view.legal || [];
    const want = ev.key.toLowerCase() === "p" ? "pass" : /^[123]$/.test(ev.key) ? `bid ${ev.key}` : null;
    const m = want && legal.find((x) => x.label === want);
    if (m) { ev.preventDefault(); send({ index: m.index }); }
    return;
  }
  if (ev.key === "Enter") {
    if (onButton) return;  // the focused button's own action
    ev.preventDefault(); playSelected(); return;
  }
  if (ev.key === " ") {
    if (onCard) { ev.preventDefault(); toggle(target.dataset.id); return; }
    if (onButton) return;
    ev.preventDefault(); pass(); return;
  }
  if (ev.key.toLowerCase() === "p") { ev.preventDefault(); pass(); return; }
  const rank = rankOfKey(ev.key);
  if (rank) { ev.preventDefault(); selectRank(rank); }
}

// --- replays -----------------------------------------------------------------------------------
function resultText(r, names, seat) {
  if (!r || !r.winners) return "";
  if (seat !== undefined && seat !== null) return r.winners.includes(seat) ? "you won" : "you lost";
  return `won: ${r.winners.map((s) => (names ? shortName(names[s]) : `seat ${s}`)).join(", ")}`;
}

async function listRecords() {
  show("replays");
  $("replay-view").hidden = true;
  await loadLists();
}

async function loadLists() {
  let matches = [], recs = [];
  try { [matches, recs] = await Promise.all([api("GET", "/api/matches"), api("GET", "/api/records")]); }
  catch (e) { $("replay-message").textContent = e.message; }
  $("match-form").hidden = !matches.length;
  $("match-file").replaceChildren(...matches.map((m) => el("option", { value: m.file },
    `${m.agent} vs ${m.opponent} (${m.rules}, ${m.deals} deals): ${m.file}`)));
  $("records").replaceChildren(...(recs.length ? recs.map((r) => {
    const date = (r.date || "").replace("T", " ").slice(0, 16);
    const game = r.game ? `${gameTitle(r.game)} (${r.preset})` : r.name.split("-")[0];
    const seats = r.names ? r.names.map((nm, s) => (s === r.seat ? "you" : shortName(nm))).join(", ") : "";
    const open = el("a", { href: "#", class: "record", title: r.name,
      onclick: (ev) => { ev.preventDefault(); openReplay(`/api/records/${encodeURIComponent(r.name)}`); } }, date || r.name);
    return el("tr", {}, el("td", {}, open), el("td", {}, game), el("td", {}, seats), el("td", {}, resultText(r.result, r.names, r.seat)));
  }) : [el("tr", {}, el("td", { class: "hint", colspan: "4" }, "no games finished here yet"))]));
}

async function openReplay(path, body) {
  let data;
  $("replay-message").textContent = "";
  try {
    data = body === undefined ? await api("GET", path) : await api("POST", path, body);
  } catch (e) { show("replays"); $("replay-message").textContent = e.message; return; }
  showReplay(data);
}

// A match's game is replayed as a job on the server (it may take minutes): its progress is shown
// until it is done, and Cancel stops it.
async function replayMatch() {
  const body = { file: $("match-file").value, deal: Number($("match-deal").value), seat: Number($("match-seat").value) };
  $("replay-message").textContent = "";
  let job;
  try { job = await api("POST", "/api/matches/replay", body); }
  catch (e) { $("replay-message").textContent = e.message; return; }
  $("match-replay").disabled = true;
  $("match-cancel").hidden = false;
  $("match-cancel").onclick = () => api("DELETE", `/api/jobs/${job.job}`).catch(() => {});
  try {
    while (job.state === "running") {
      $("match-progress").textContent = `replaying the match's games: ${Math.round(job.seconds)} s ` +
        `(stopped at ${job.limit} s; a search agent takes a while)`;
      await sleep(500);
      job = await api("GET", `/api/jobs/${job.job}`);
    }
    $("match-progress").textContent = "";
    showReplay(job.result);
  } catch (e) { $("match-progress").textContent = ""; $("replay-message").textContent = e.message; }
  finally {
    $("match-progress").textContent = "";
    $("match-cancel").hidden = true;
    $("match-replay").disabled = false;
  }
}

function replayWho(s) {
  if (replay.you === s) return "you";
  return replay.names ? `${shortName(replay.names[s])} (seat ${s})` : `seat ${s}`;
}

function showReplay(data) {
  replay = data;
  replayPos = 0;
  show("replays");
  $("replay-message").textContent = "";
  $("replay-view").hidden = false;
  loadLists();
  $("replay-title").textContent = replay.title || `${gameTitle(replay.game)} (${replay.preset})`;
  $("replay-check").textContent = replay.check ? `Check: ${replay.check.text}.` : "";
  $("replay-check").className = replay.check && !replay.check.same ? "error" : "";
  $("replay-moves").replaceChildren(...replay.frames.map((f, i) => el("li", { "data-step": i, value: String(i) },
    el("button", { type: "button", onclick: () => step(i) }, i === 0 ? "the deal" : `${replayWho(f.seat)}: ${f.move.label}`))));
  renderReplay();
  $("replay-view").scrollIntoView({ block: "start" });
}

function renderReplay() {
  const f = replay.frames[replayPos];
  const n = replay.seats || f.hands.length;
  const last = replay.frames.length - 1;
  $("replay-pos").textContent = `move ${replayPos} of ${last}`;
  let text = replayPos === 0 ? "The deal." : `${replayWho(f.seat)}: ${f.move.label}`;
  if (replayPos === last && replay.result) text += ` Game over; winners: ${replay.result.winners.map(replayWho).join(", ") || "nobody"}.`;
  $("replay-move").textContent = text;
  const lastPlay = lastBySeat(f.trick);
  const bids = bidsBySeat(f.bids);
  const over = replayPos === last && replay.result;
  const winners = over ? new Set(replay.result.winners) : new Set();
  const landlord = f.landlord !== undefined ? f.landlord : -1;
  renderTable($("replay-felt"), {
    n, me: replay.you !== undefined ? replay.you : 0, prefix: "replay-",
    seats: Array.from({ length: n }, (_, s) => ({
      name: replay.you === s ? "you" : replay.names ? shortName(replay.names[s]) : `seat ${s}`,
      full: replay.names ? replay.names[s] : `seat ${s}`, count: f.cards_left[s],
      role: landlord >= 0 ? (s === landlord ? "landlord" : "peasant") : "",
      bid: f.phase === "bid" || s === landlord ? bids[s] : null, last: lastPlay[s], hand: f.hands[s],
      current: !over && s === f.current_player, thinking: false, winner: winners.has(s) })),
    toBeat: f.to_beat,
    caption: over ? "game over" : f.to_beat ? `to beat: ${f.to_beat.label}, played by ${replayWho(f.to_beat.seat)}` : f.phase === "bid" ? "the auction" : "a new trick",
    kitty: f.kitty && f.kitty.length ? f.kitty : null, kittyDown: false,
    scoreline: landlord >= 0 ? `stake ${f.stake}, ${plural(f.bombs || 0, "bomb")}` : "",
  });
  for (const li of $("replay-moves").children) {
    const now = Number(li.dataset.step) === replayPos;
    li.classList.toggle("now", now);
    if (now) { li.setAttribute("aria-current", "step"); li.scrollIntoView({ block: "nearest" }); } else li.removeAttribute("aria-current");
  }
  if (f.reasoning) showReasoning($("replay-reasoning"), f.reasoning, { seat: f.seat, who: replay.names ? replay.names[f.seat] : `seat ${f.seat}`, label: f.move.label });
  else $("replay-reasoning").replaceChildren(el("p", { class: "hint" }, replayPos === 0 ? "The deal: every hand is shown."
    : f.reasoning === null || replay.you === f.seat ? "No reasoning: the person's move, or one not recorded." : "No reasoning recorded for this game."));
  $("replay-first").disabled = $("replay-prev").disabled = replayPos === 0;
  $("replay-next").disabled = $("replay-last").disabled = replayPos === last;
}

function step(to) { replayPos = Math.max(0, Math.min(replay.frames.length - 1, to)); renderReplay(); }

// --- start ---------------------------------------------------------------------------------------
async function boot() {
  catalog = await api("GET", "/api/catalog");
  $("game").replaceChildren(...games().map((g) => el("option", { value: g }, gameTitle(g))));
  $("game").addEventListener("change", fillSetup);
  fillSetup();
  let stored = null;
  try { stored = localStorage.getItem(PAUSE); } catch (e) { /* storage off */ }
  const params = new URLSearchParams(location.search);
  setPause(params.has("pause") ? Number(params.get("pause")) : stored !== null ? Number(stored) : catalog.pause_ms);
  $("pause").addEventListener("change", () => setPause(Number($("pause").value)));
  $("setup-form").addEventListener("submit", start);
  $("play-btn").addEventListener("click", playSelected);
  $("pass-btn").addEventListener("click", pass);
  $("clear-btn").addEventListener("click", clearSelection);
  $("hint-btn").addEventListener("click", hint);
  $("advice-btn").addEventListener("click", askAdvisor);
  $("nav-new").addEventListener("click", () => show("setup"));
  $("nav-replays").addEventListener("click", listRecords);
  $("replay-first").addEventListener("click", () => step(0));
  $("replay-prev").addEventListener("click", () => step(replayPos - 1));
  $("replay-next").addEventListener("click", () => step(replayPos + 1));
  $("replay-last").addEventListener("click", () => step(replay.frames.length - 1));
  $("match-replay").addEventListener("click", replayMatch);
  $("record-file").addEventListener("change", async (ev) => {
    const f = ev.target.files[0];
    if (f) openReplay("/api/replay", await f.text());
  });
  document.addEventListener("keydown", onKey);
  const id = params.get("game");
  if (id) {
    try {
      view = await api("GET", `/api/games/${encodeURIComponent(id)}`);
      show("play"); render(); runAgents(); return;
    } catch (e) { show("setup"); $("setup-message").textContent = e.message; return; }
  }
  show("setup");
}
boot().catch((e) => { document.body.prepend(el("p", { id: "fatal" }, `The page could not start: ${e.message}`)); });
