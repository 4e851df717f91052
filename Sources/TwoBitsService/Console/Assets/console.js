// TwoBits admin console: one page, hash routes, the admin API only.
// Every value from the API reaches the page through textContent or DOM nodes, never innerHTML.
"use strict";

const KEY = "twobits.adminKey";
// sessionStorage only: the key dies with the tab and is never written to disk by the console.
const keyStore = window.sessionStorage;
const SVG = "http://www.w3.org/2000/svg";

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function say(text, isError) {
  const m = $("message");
  m.textContent = text || "";
  m.className = isError ? "error" : "";
}

class APIFailure extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

async function api(method, path, body, accept) {
  const headers = { Authorization: "Bearer " + (keyStore.getItem(KEY) || "") };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (accept) headers.Accept = accept;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
                                       cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer" });
  if (response.status === 401 || response.status === 403) {
    throw new APIFailure(response.status, "auth", response.status === 401
      ? "The API key was refused (401): check the key."
      : "This key is not an admin key (403): the console needs the admin role.");
  }
  if (!response.ok) {
    let code = "http_" + response.status, message = "The request failed (" + response.status + ").";
    try {
      // The API's envelope: {"error": {"code": "...", "message": "..."}}.
      const problem = (await response.json()).error || {};
      code = problem.code || code;
      message = (problem.message || message) + " (" + response.status + ")";
    } catch (_) { /* not JSON */ }
    throw new APIFailure(response.status, code, message);
  }
  if (accept === "text/csv") return response.blob();
  if (response.status === 204) return null;
  return response.json();
}

function fail(error) {
  say(error.message || String(error), true);
  if (error.code === "auth" && error.status === 401) { keyStore.removeItem(KEY); route(); }
}

// ---- Routing ----

const pages = ["signin", "device", "audit", "overview", "app-attest"];

function route() {
  const signedIn = Boolean(keyStore.getItem(KEY));
  let page = (location.hash.replace(/^#\//, "") || "device").split("?")[0];
  if (!signedIn) page = "signin";
  else if (!pages.includes(page) || page === "signin") page = "device";
  for (const p of pages) $("page-" + p).hidden = p !== page;
  $("nav").hidden = !signedIn;
  document.title = "TwoBits admin: " + page;
  if (page === "audit") loadAudit(true);
  if (page === "overview") loadOverview();
  if (page === "device") loadPending();
}

// ---- Sign-in ----

async function signIn(event) {
  event.preventDefault();
  const key = $("api-key").value.trim();
  if (!key) return;
  keyStore.setItem(KEY, key);
  try {
    // A cheap admin-only read proves the key and its role before the console opens.
    await api("GET", "/v1/admin/bans/pending");
    $("api-key").value = "";
    say("Signed in.");
    if (!location.hash || location.hash === "#/signin") location.hash = "#/device"; else route();
  } catch (error) {
    keyStore.removeItem(KEY);
    say(error.message, true);
  }
}

function signOut() {
  keyStore.removeItem(KEY);
  say("Signed out: the key is forgotten.");
  location.hash = "#/signin";
  route();
}

// ---- Tables ----

function table(columns, rows, onOpen) {
  const head = el("tr", {}, ...columns.map((c) => el("th", { scope: "col" }, c.title)));
  const body = rows.map((row) => {
    const tr = el("tr", {}, ...columns.map((c) => el("td", {}, c.value(row))));
    if (onOpen) {
      tr.className = "clickable";
      tr.tabIndex = 0;
      tr.addEventListener("click", () => onOpen(row));
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onOpen(row); } });
    }
    return tr;
  });
  return el("div", { class: "table-wrap" }, el("table", {}, el("thead", {}, head), el("tbody", {}, ...body)));
}

function definitions(pairs) {
  const dl = el("dl");
  for (const [term, value] of pairs) dl.append(el("dt", {}, term), el("dd", {}, value === null || value === undefined ? "—" : value));
  return dl;
}

const auditColumns = [
  { title: "Time", value: (e) => e.at },
  { title: "Action", value: (e) => e.action },
  { title: "Client", value: (e) => e.client },
  { title: "Subject", value: (e) => e.subject },
  { title: "Result", value: (e) => e.result },
  { title: "Reason", value: (e) => e.reason || "" },
];

function auditDetail(target, event) {
  target.replaceChildren(el("h3", {}, "Event " + event.id),
    definitions(Object.keys(event).sort().map((k) => [k, typeof event[k] === "object" && event[k] !== null ? JSON.stringify(event[k]) : event[k]])));
  target.scrollIntoView({ block: "nearest" });
}

async function openEvent(target, event) {
  try {
    auditDetail(target, await api("GET", "/v1/admin/audit/" + encodeURIComponent(event.id)));
  } catch (error) {
    // Before GET /v1/admin/audit/{id} exists the listed row is already the whole event.
    if (error.status === 404 || error.status === 405) auditDetail(target, event); else fail(error);
  }
}

// ---- Device desk ----

let current = null; // { kind, value, digest }

function lastSix(text) { return String(text || "").slice(-6); }

async function lookUp(event) {
  event.preventDefault();
  const kind = $("lookup-kind").value;
  const value = $("lookup-value").value.trim();
  const out = $("device-result");
  out.replaceChildren();
  $("order-form").hidden = true;
  current = null;
  if (!value) return;
  try {
    let filter;
    if (kind === "device_token") {
      const state = await api("POST", "/v1/admin/devices/state", { device_token: value });
      current = { kind, value, digest: state.token_sha256_prefix };
      filter = "token_prefix=" + encodeURIComponent(state.token_sha256_prefix);
      out.append(stateView(state));
    } else {
      current = { kind, value, digest: value };
      filter = "install_id=" + encodeURIComponent(value);
      out.append(el("p", {}, "Install id " + value + ": orders by install id wait until the install next calls in (see pending bans)."));
    }
    $("order-digest").textContent = current.digest;
    $("order-form").hidden = false;
    const history = el("div", { id: "device-history" }, el("h3", {}, "Audit history"));
    out.append(history);
    const detail = el("div");
    try {
      const page = await api("GET", "/v1/admin/audit?limit=50&" + filter);
      history.append(page.events.length ? table(auditColumns, page.events, (e) => openEvent(detail, e)) : el("p", {}, "No events."));
    } catch (error) {
      history.append(el("p", {}, "History unavailable: " + error.message));
    }
    history.append(detail);
    say("");
  } catch (error) { fail(error); }
}

function stateView(state) {
  const raw = state.raw || {}, meaning = state.meaning || {};
  const promotions = (meaning.promotions || []).map((p) => p.promotion + " (" + p.claimed_month + ")").join(", ");
  const banned = el("span", { class: meaning.banned ? "banned" : "" }, meaning.banned ? "yes" : "no");
  return el("div", {},
    el("h3", {}, "Bits"),
    definitions([
      ["Token digest", state.token_sha256_prefix],
      ["Layout", state.layout],
      ["bit0", raw.never_set ? "never set" : String(raw.bit0)],
      ["bit1", raw.never_set ? "never set" : String(raw.bit1)],
      ["Last update month", raw.last_update_time || "never"],
      ["Stale", raw.stale ? "yes" : "no"],
      ["Banned", banned],
      ["Reinstalls", meaning.reinstalls === undefined ? "—" : String(meaning.reinstalls)],
      ["Promotions claimed", promotions || "none"],
    ]));
}

async function sendOrder(event) {
  event.preventDefault();
  if (!current) return;
  const action = $("order-action").value;
  const reason = $("order-reason").value.trim();
  const typed = $("order-confirm").value.trim();
  if (!reason) { say("A reason is required.", true); return; }
  // Nothing is sent unless the admin typed the last 6 characters of the digest shown.
  if (typed !== lastSix(current.digest)) {
    say("The confirmation does not match the last 6 characters of " + current.digest + ": nothing was sent.", true);
    return;
  }
  const body = { reason, confirm: typed };
  body[current.kind] = current.value;
  try {
    await api("POST", action === "ban" ? "/v1/admin/bans" : "/v1/admin/unbans", body);
    const digest = current.digest;
    $("order-confirm").value = "";
    $("order-reason").value = "";
    // Refresh first: the look-up clears the message line, and the admin must see that the order went out.
    await lookUp(new Event("submit"));
    await loadPending();
    say((action === "ban" ? "Ban" : "Unban") + " sent for " + digest + ".");
  } catch (error) { fail(error); }
}

async function loadPending() {
  const target = $("pending-list");
  try {
    const answer = await api("GET", "/v1/admin/bans/pending");
    const rows = answer.pending || [];
    if (!rows.length) { target.replaceChildren(el("p", {}, "No pending orders.")); return; }
    const columns = [
      { title: "Install id", value: (p) => p.install_id },
      { title: "Action", value: (p) => p.action },
      { title: "Reason", value: (p) => p.reason || "" },
      { title: "Client", value: (p) => p.client },
      { title: "Created", value: (p) => p.created_at },
      { title: "", value: (p) => {
        const b = el("button", { type: "button", "aria-label": "Cancel the pending order for " + p.install_id }, "Cancel");
        b.addEventListener("click", () => cancelPending(p.install_id));
        return b;
      } },
    ];
    target.replaceChildren(table(columns, rows));
  } catch (error) { target.replaceChildren(); fail(error); }
}

async function cancelPending(installID) {
  try {
    await api("DELETE", "/v1/admin/bans/pending/" + encodeURIComponent(installID));
    say("Pending order for " + installID + " cancelled.");
    await loadPending();
  } catch (error) { fail(error); }
}

// ---- Audit trail ----

let auditBefore = null;

function auditFilter() {
  const params = new URLSearchParams();
  const pairs = [["action", "f-action"], ["client", "f-client"], ["result", "f-result"], ["since", "f-since"], ["until", "f-until"], ["install_id", "f-install"]];
  for (const [name, id] of pairs) { const v = $(id).value.trim(); if (v) params.set(name, v); }
  return params;
}

async function loadAudit(fresh) {
  if (fresh) { auditBefore = null; $("audit-table").replaceChildren(); $("audit-detail").replaceChildren(); }
  const params = auditFilter();
  params.set("limit", "25");
  if (auditBefore !== null) params.set("before", auditBefore);
  try {
    const page = await api("GET", "/v1/admin/audit?" + params.toString());
    const events = page.events || [];
    $("audit-table").append(events.length || !fresh ? table(auditColumns, events, (e) => openEvent($("audit-detail"), e)) : el("p", {}, "No events."));
    auditBefore = page.next_before === undefined ? null : page.next_before;
    $("audit-more").hidden = auditBefore === null || auditBefore === undefined || !events.length;
  } catch (error) { fail(error); }
}

async function exportCSV() {
  try {
    const blob = await api("GET", "/v1/admin/audit.csv?" + auditFilter().toString(), undefined, "text/csv");
    const url = URL.createObjectURL(blob);
    const a = el("a", { href: url, download: "twobits-audit.csv" });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
    say("Audit exported as CSV.");
  } catch (error) { fail(error); }
}

// ---- Overview ----

// A grouped bar chart: one group per label, one bar per series. DOM-built SVG, classes only (CSP-clean).
function barChart(title, labels, series) {
  const width = 640, height = 220, left = 40, bottom = 50, top = 20;
  const max = Math.max(1, ...series.flatMap((s) => s.values));
  const chart = svg("svg", { class: "chart", viewBox: "0 0 " + width + " " + height, role: "img", "aria-label": title });
  chart.append(svg("title", {}, title));
  const groupWidth = (width - left - 10) / Math.max(1, labels.length);
  const barWidth = Math.max(2, (groupWidth - 4) / Math.max(1, series.length));
  labels.forEach((label, i) => {
    series.forEach((s, j) => {
      const value = s.values[i] || 0;
      const h = (height - bottom - top) * value / max;
      const rect = svg("rect", { class: s.className, x: left + i * groupWidth + j * barWidth, y: height - bottom - h, width: barWidth - 1, height: h });
      rect.append(svg("title", {}, s.name + " " + label + ": " + value));
      chart.append(rect);
    });
    chart.append(svg("text", { x: left + i * groupWidth, y: height - bottom + 12 }, String(label).slice(-13)));
  });
  chart.append(svg("text", { x: 2, y: top }, String(max)));
  chart.append(svg("text", { x: 2, y: height - bottom }, "0"));
  series.forEach((s, j) => {
    // The key's swatch in the series' own colour (a text glyph would take the text colour).
    chart.append(svg("rect", { x: left + j * 180, y: height - 17, width: 10, height: 10, class: s.className }));
    chart.append(svg("text", { x: left + j * 180 + 14, y: height - 8, class: "legend" }, s.name));
  });
  return el("figure", {}, chart, el("figcaption", {}, title));
}

async function loadOverview() {
  const body = $("overview-body");
  loadSecrets();
  let o;
  try { o = await api("GET", "/v1/admin/overview"); } catch (error) {
    body.replaceChildren(el("p", {}, "The overview is unavailable: " + error.message));
    if (error.code === "auth") fail(error);
    return;
  }
  const parts = [el("p", {}, "Generated at " + o.generated_at + ". Pending bans: " + o.pending_bans + ".")];

  const claims = o.claims_per_day || [];
  parts.push(el("h3", {}, "Claims per promotion per day"));
  const promotions = [...new Set(claims.map((c) => c.promotion))];
  for (const promotion of promotions) {
    const rows = claims.filter((c) => c.promotion === promotion);
    parts.push(barChart("Claims of " + promotion + " per day", rows.map((r) => r.day),
      [{ name: "claimed", className: "bar-a", values: rows.map((r) => r.claimed) },
       { name: "refused", className: "bar-b", values: rows.map((r) => r.refused) }]));
  }
  if (!promotions.length) parts.push(el("p", {}, "No claims yet."));

  const tokens = o.fallback_tokens_per_hour || [];
  parts.push(el("h3", {}, "Fallback tokens per hour"));
  if (tokens.length) {
    const refusedTotal = (t) => Object.values(t.refused || {}).reduce((a, b) => a + b, 0);
    parts.push(barChart("Fallback tokens issued and refused per hour", tokens.map((t) => t.hour),
      [{ name: "issued", className: "bar-a", values: tokens.map((t) => t.issued) },
       { name: "refused", className: "bar-b", values: tokens.map(refusedTotal) }]));
    parts.push(table([{ title: "Hour", value: (t) => t.hour }, { title: "Issued", value: (t) => t.issued },
      { title: "Refused by reason", value: (t) => Object.entries(t.refused || {}).map(([r, n]) => r + ": " + n).join(", ") || "none" }], tokens));
  } else parts.push(el("p", {}, "No fallback tokens yet."));

  // Strong-tier (App Attest) tokens against fallback tokens, and why apps fell back (app_attest_status).
  const adoption = o.app_attest_adoption_per_hour || [];
  parts.push(el("h3", {}, "App Attest adoption per hour"));
  if (adoption.length) {
    const share = (a) => (a.strong_share === undefined || a.strong_share === null ? "–" : (100 * a.strong_share).toFixed(1) + " %");
    parts.push(barChart("App Attest adoption per hour: strong-tier and fallback tokens", adoption.map((a) => a.hour),
      [{ name: "strong tier", className: "bar-a", values: adoption.map((a) => a.strong_tier) },
       { name: "fallback", className: "bar-b", values: adoption.map((a) => a.fallback) }]));
    parts.push(table([{ title: "Hour", value: (a) => a.hour }, { title: "Strong tier", value: (a) => a.strong_tier },
      { title: "Fallback", value: (a) => a.fallback }, { title: "Strong share", value: share },
      { title: "Fallback by reason", value: (a) => Object.entries(a.fallback_by_reason || {}).map(([r, n]) => r + ": " + n)
        .concat(a.fallback_unreported ? ["no reason given: " + a.fallback_unreported] : []).join(", ") || "none" }], adoption));
  } else parts.push(el("p", {}, "No tokens yet."));

  // Request proofs (requests signed by an attested key): valid verdicts, and refusals by reason.
  const proofs = o.request_proofs_per_hour || [];
  parts.push(el("h3", {}, "Request proofs per hour"));
  if (proofs.length) {
    const refusedProofs = (p) => Object.values(p.refused || {}).reduce((a, b) => a + b, 0);
    parts.push(barChart("Request proofs valid and refused per hour", proofs.map((p) => p.hour),
      [{ name: "valid", className: "bar-a", values: proofs.map((p) => p.valid) },
       { name: "refused", className: "bar-b", values: proofs.map(refusedProofs) }]));
    parts.push(table([{ title: "Hour", value: (p) => p.hour }, { title: "Valid", value: (p) => p.valid },
      { title: "Refused by reason", value: (p) => Object.entries(p.refused || {}).map(([r, n]) => r + ": " + n).join(", ") || "none" }], proofs));
  } else parts.push(el("p", {}, "No request proofs yet."));

  parts.push(el("h3", {}, "Apple calls (last 24 h)"));
  parts.push(table([{ title: "Endpoint", value: (a) => a.endpoint }, { title: "Outcome", value: (a) => a.outcome },
    { title: "Count", value: (a) => a.count }, { title: "p50 ms", value: (a) => a.p50_ms }, { title: "p99 ms", value: (a) => a.p99_ms }],
  o.apple_calls || []));

  parts.push(el("h3", {}, "Signing keys"));
  parts.push(table([{ title: "Key id", value: (k) => k.kid }, { title: "Active", value: (k) => (k.active ? "yes" : "no") },
    { title: "Activated", value: (k) => k.activated_at }, { title: "Age", value: (k) => age(k.age_seconds) }], o.signing_keys || []));
  body.replaceChildren(...parts);
}

function age(seconds) {
  const s = Number(seconds) || 0;
  if (s >= 86400) return Math.floor(s / 86400) + " d";
  if (s >= 3600) return Math.floor(s / 3600) + " h";
  return Math.floor(s / 60) + " min";
}

async function loadSecrets() {
  const target = $("secret-list");
  try {
    const answer = await api("GET", "/v1/admin/debug-secrets");
    const rows = answer.debug_secrets || [];
    target.replaceChildren(rows.length ? table([
      { title: "Name", value: (s) => s.name },
      { title: "Created", value: (s) => s.created_at },
      { title: "", value: (s) => {
        const b = el("button", { type: "button", "aria-label": "Revoke debug secret " + s.name }, "Revoke");
        b.addEventListener("click", () => revokeSecret(s.name));
        return b;
      } },
    ], rows) : el("p", {}, "No debug secrets."));
  } catch (error) { target.replaceChildren(el("p", {}, "Debug secrets unavailable: " + error.message)); }
}

async function createSecret(event) {
  event.preventDefault();
  const name = $("secret-name").value.trim();
  if (!name) return;
  try {
    const answer = await api("POST", "/v1/admin/debug-secrets", { name });
    const once = $("secret-once");
    once.textContent = "Debug secret " + answer.name + " (shown once, copy it now): " + answer.debug_secret;
    once.hidden = false;
    $("secret-name").value = "";
    say("Debug secret " + answer.name + " created.");
    await loadSecrets();
  } catch (error) { fail(error); }
}

async function revokeSecret(name) {
  try {
    await api("DELETE", "/v1/admin/debug-secrets/" + encodeURIComponent(name));
    $("secret-once").hidden = true;
    say("Debug secret " + name + " revoked.");
    await loadSecrets();
  } catch (error) { fail(error); }
}

// ---- App Attest keys ----

// The API takes an artifact or a key id in base64url; a pasted standard base64 id (with + / =) is converted.
function keyPath(text) {
  return "/v1/admin/app-attest/keys/" + encodeURIComponent(text.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""));
}

// A small line of the metric over time, oldest left; one dot per renewal. DOM-built SVG, classes only.
function sparkline(history) {
  const points = history.slice().reverse();
  const width = 160, height = 36, pad = 4;
  const max = Math.max(1, ...points.map((p) => Number(p.metric) || 0));
  const x = (i) => pad + (points.length > 1 ? i * (width - 2 * pad) / (points.length - 1) : (width - 2 * pad) / 2);
  const y = (m) => height - pad - (height - 2 * pad) * (Number(m) || 0) / max;
  const label = "Risk metric over the last " + points.length + " renewals, oldest first: " + points.map((p) => p.metric).join(", ");
  const chart = svg("svg", { class: "sparkline", viewBox: "0 0 " + width + " " + height, role: "img", "aria-label": label });
  chart.append(svg("title", {}, label));
  if (points.length > 1) chart.append(svg("polyline", { points: points.map((p, i) => x(i) + "," + y(p.metric)).join(" ") }));
  points.forEach((p, i) => {
    const dot = svg("circle", { cx: x(i), cy: y(p.metric), r: 2.5 });
    dot.append(svg("title", {}, p.at + ": " + p.metric));
    chart.append(dot);
  });
  return chart;
}

function keyView(key) {
  const revoked = el("span", { class: key.revoked ? "banned" : "" }, key.revoked ? "yes" : "no");
  const metric = key.risk_metric === undefined || key.risk_metric === null ? "unknown (no renewed receipt yet)" : String(key.risk_metric);
  const history = key.risk_history || [];
  return el("div", { id: "key-detail" },
    el("h3", {}, "Key " + key.artifact),
    definitions([
      ["Artifact", key.artifact],
      ["Key id", key.key_id],
      ["App", key.app_id],
      ["Environment", key.environment],
      ["Counter", String(key.counter)],
      ["Validation category", key.validation_category],
      ["First seen", key.first_seen],
      ["Risk metric", metric],
      ["Metric at", key.risk_metric_at],
      ["Receipt not before", key.receipt_not_before],
      ["Receipt expires", key.receipt_expires_at],
      ["Receipt stopped", key.receipt_stopped_at ? key.receipt_stopped_at + " (Apple has no data: not refreshed any more)" : null],
      ["Receipt bytes", String(key.receipt_bytes)],
      ["Revoked", revoked],
      ["Revoked at", key.revoked_at],
      ["Revoked reason", key.revoked_reason],
    ]),
    el("h4", {}, "Risk metric history (last 10, newest first)"),
    history.length
      ? el("div", { id: "key-history" }, sparkline(history), table([{ title: "Time", value: (h) => h.at }, { title: "Metric", value: (h) => h.metric }], history))
      : el("p", { id: "key-history" }, "No metric yet."));
}

async function openKey(text) {
  const out = $("key-result");
  out.replaceChildren();
  if (!text) return;
  try {
    out.append(keyView(await api("GET", keyPath(text))));
    out.scrollIntoView({ block: "nearest" });
    say("");
  } catch (error) {
    if (error.status === 404) say("No attested key " + text + ".", true); else fail(error);
  }
}

let riskAfter = null;
// The filter of the listed pages: "More keys" continues it even if the inputs were edited since.
let riskFilter = null;

async function loadRisk(fresh) {
  if (fresh || riskFilter === null) {
    riskAfter = null;
    riskFilter = { min_risk_metric: $("risk-min").value.trim(), limit: $("risk-limit").value.trim() };
  }
  const params = new URLSearchParams(riskFilter);
  if (riskAfter !== null) params.set("after", riskAfter);
  try {
    const page = await api("GET", "/v1/admin/app-attest/keys?" + params.toString());
    const keys = page.keys || [];
    const columns = [
      { title: "Artifact", value: (k) => k.artifact },
      { title: "App", value: (k) => k.app_id },
      { title: "Environment", value: (k) => k.environment },
      { title: "Risk metric", value: (k) => k.risk_metric },
      { title: "Metric at", value: (k) => k.risk_metric_at || "" },
      { title: "Revoked", value: (k) => (k.revoked ? "yes" : "no") },
    ];
    if (fresh) $("risk-list").replaceChildren();
    $("risk-list").append(keys.length || !fresh ? table(columns, keys, (k) => openKey(k.artifact))
      : el("p", {}, "No key with a risk metric of at least " + params.get("min_risk_metric") + "."));
    riskAfter = page.next_after === undefined || page.next_after === null ? null : page.next_after;
    $("risk-more").hidden = riskAfter === null || !keys.length;
    say("");
  } catch (error) { fail(error); }
}

// ---- Start ----

document.addEventListener("DOMContentLoaded", () => {
  $("signin-form").addEventListener("submit", signIn);
  $("sign-out").addEventListener("click", signOut);
  $("lookup-form").addEventListener("submit", lookUp);
  $("order-form").addEventListener("submit", sendOrder);
  $("audit-form").addEventListener("submit", (e) => { e.preventDefault(); loadAudit(true); });
  $("audit-more").addEventListener("click", () => loadAudit(false));
  $("audit-csv").addEventListener("click", exportCSV);
  $("secret-form").addEventListener("submit", createSecret);
  $("key-form").addEventListener("submit", (e) => { e.preventDefault(); openKey($("key-value").value.trim()); });
  $("risk-form").addEventListener("submit", (e) => { e.preventDefault(); loadRisk(true); });
  $("risk-more").addEventListener("click", () => loadRisk(false));
  window.addEventListener("hashchange", route);
  route();
});
