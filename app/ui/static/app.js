/* NeoRAG UI core: helpers, view routing, health pill and the Status view.
   Plain browser JavaScript (no build step). Feature views live in ingest.js, ask.js, ranking.js, kg.js
   and register themselves on window.NeoRAG.views. */
"use strict";

(function () {
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

  /** Create an element: el("td", {class: "num", text: "1"}, [children]). */
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "text") node.textContent = String(v);
      else if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children || []) if (c !== null && c !== undefined) node.append(c);
    return node;
  }

  function escapeHtml(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }

  function fmtNum(v, digits) {
    if (typeof v !== "number" || !isFinite(v)) return v === null || v === undefined ? "—" : String(v);
    if (Number.isInteger(v)) return v.toLocaleString("en-US");
    return v.toFixed(digits === undefined ? 4 : digits);
  }

  function fmtValue(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v === "number") return fmtNum(v, 3);
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (typeof v === "object") return JSON.stringify(v);
    return String(v);
  }

  /** Fill a two-column key/value table from an object (nested objects shown as JSON). */
  function fillKv(table, obj) {
    const tbody = table.tBodies[0];
    tbody.replaceChildren();
    for (const [k, v] of Object.entries(obj || {})) {
      tbody.append(el("tr", { "data-key": k }, [el("th", { text: k }), el("td", { text: fmtValue(v) })]));
    }
  }

  /** Turn an error JSON body (NeoRAG's {error, message, reason, hint} or FastAPI's {detail}) into text. */
  function errorText(status, body) {
    if (body && typeof body === "object") {
      const parts = [];
      const msg = body.message || (typeof body.detail === "string" ? body.detail : null) || body.error;
      parts.push(msg ? String(msg) : JSON.stringify(body));
      if (body.reason) parts.push("because " + body.reason);
      if (body.hint) parts.push("→ " + body.hint);
      return (status ? "HTTP " + status + ": " : "") + parts.join("\n");
    }
    return (status ? "HTTP " + status + ": " : "") + (body || "request failed");
  }

  // ------------------------------------------------------------------ API key (NEORAG_API_KEYS)
  // Asked once, when the server first answers 401 (or 403 for a read key on a write action); kept in this
  // tab's sessionStorage, or in localStorage when "remember" is ticked; sent as X-API-Key on every fetch.
  // EventSource cannot send headers: ingest.js asks POST /auth/stream-token for a short-lived token instead.
  const KEY_STORE = "neorag.apiKey";
  function storedKey() { return sessionStorage.getItem(KEY_STORE) || localStorage.getItem(KEY_STORE) || ""; }
  function authHeaders(extra) {
    const key = storedKey();
    return Object.assign({}, extra || {}, key ? { "X-API-Key": key } : {});
  }
  let keyPrompt = null;
  function askForKey(reason) {
    if (keyPrompt) return keyPrompt;
    const dialog = $("#key-dialog");
    $("#key-reason").textContent = reason || "This server needs an API key.";
    $("#key-input").value = "";
    keyPrompt = new Promise((resolve) => {
      const done = (key) => {
        dialog.close();
        $("#key-form").onsubmit = null; $("#key-cancel").onclick = null; $("#key-forget").onclick = null;
        keyPrompt = null;
        resolve(key);
      };
      $("#key-form").onsubmit = (ev) => {
        ev.preventDefault();
        const key = $("#key-input").value.trim();
        if (!key) return;
        sessionStorage.setItem(KEY_STORE, key);
        if ($("#key-remember").checked) localStorage.setItem(KEY_STORE, key); else localStorage.removeItem(KEY_STORE);
        done(key);
      };
      $("#key-cancel").onclick = () => done(null);
      $("#key-forget").onclick = () => { sessionStorage.removeItem(KEY_STORE); localStorage.removeItem(KEY_STORE); done(null); };
      dialog.showModal();
      $("#key-input").focus();
    });
    return keyPrompt;
  }

  /** Whether a response asks for (another) key: 401, or 403 insufficient_scope. */
  async function wantsKey(resp) {
    if (resp.status === 401) return "This server needs an API key (NEORAG_API_KEYS).";
    if (resp.status !== 403) return null;
    const body = await resp.clone().json().catch(() => ({}));
    return body && body.error === "insufficient_scope" ? "This action needs a write key: " + body.message : null;
  }

  /** fetch with the stored API key; on 401 (or a read key used for a write) ask for a key once, then retry. */
  async function authFetch(path, opts) {
    const options = Object.assign({}, opts || {});
    const extra = options.headers || {};
    let resp = await fetch(path, Object.assign({}, options, { headers: authHeaders(extra) }));
    const reason = await wantsKey(resp);
    if (reason && await askForKey(reason)) {
      resp = await fetch(path, Object.assign({}, options, { headers: authHeaders(extra) }));
    }
    return resp;
  }

  /** fetch + JSON with errors turned into exceptions carrying a readable message. */
  async function api(method, path, body) {
    let resp;
    try {
      resp = await authFetch(path, {
        method,
        headers: body === undefined ? {} : { "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw new Error("Cannot reach the NeoRAG server (" + e.message + "). Is `neorag serve` running?");
    }
    const text = await resp.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (_) { data = text; }
    if (!resp.ok) {
      const err = new Error(errorText(resp.status, data));
      err.status = resp.status; err.body = data;
      throw err;
    }
    return data;
  }

  function showError(node, message) {
    if (!message) { node.hidden = true; node.textContent = ""; return; }
    node.textContent = message;
    node.hidden = false;
  }

  // ------------------------------------------------------------------ routing
  const views = {};
  function showView(name) {
    if (!document.getElementById("view-" + name)) name = "ingest";
    for (const v of $$(".view")) v.hidden = v.id !== "view-" + name;
    for (const a of $$("#tabs a")) a.classList.toggle("active", a.dataset.view === name);
    document.title = "NeoRAG · " + ($("#tab-" + name) ? $("#tab-" + name).textContent : name);
    if (views[name] && views[name].onShow) views[name].onShow();
  }
  function route() { showView((location.hash || "#ingest").slice(1).split("?")[0]); }

  // ------------------------------------------------------------------ health pill
  async function refreshHealth() {
    const pill = $("#health-pill");
    try {
      const resp = await fetch("/health");
      const body = await resp.json().catch(() => ({}));
      const ok = resp.ok && body.status === "ok";
      pill.className = "pill " + (ok ? "pill-ok" : "pill-bad");
      pill.textContent = ok ? "server ok" : "store " + (body.status || "down");
      pill.title = ok ? "GET /health: ok" : errorText(resp.status, body);
      if (body.api_version) $("#api-version").textContent = "api " + body.api_version;
      return body;
    } catch (e) {
      pill.className = "pill pill-bad";
      pill.textContent = "server unreachable";
      pill.title = String(e);
      return null;
    }
  }

  // ------------------------------------------------------------------ Status view
  function stat(key, value, sub, cls) {
    return el("div", { class: "card stat " + (cls || ""), "data-stat": key }, [
      el("div", { class: "k", text: key }), el("div", { class: "v", text: value }),
      sub ? el("div", { class: "sub", text: sub }) : null,
    ]);
  }

  function sum(obj) { return Object.values(obj || {}).reduce((a, b) => a + (typeof b === "number" ? b : 0), 0); }

  async function loadStatus() {
    const cards = $("#status-cards");
    showError($("#status-error"), null);
    const health = await refreshHealth();
    let diag;
    try {
      diag = await api("GET", "/diagnostics");
    } catch (e) {
      showError($("#status-error"), "GET /diagnostics failed: " + e.message);
      cards.replaceChildren(stat("server", health ? health.status : "unreachable", null, "bad"));
      return;
    }
    const store = diag.store || {};
    const vi = diag.vector_index || {};
    const llm = diag.llm || {};
    const emb = diag.embedding || {};
    const counts = diag.counts || {};
    const healthOk = health && health.status === "ok";
    cards.replaceChildren(
      stat("server", healthOk ? "ok" : (health ? health.status : "unreachable"),
        "api " + (diag.api_version || "?"), healthOk ? "good" : "bad"),
      stat("backend", diag.backend || "?",
        (store.reachable ? "reachable" : "unreachable") + (store.version ? " · " + store.version : "") +
        (store.graph ? " · graph " + store.graph : ""), store.reachable ? "good" : "bad"),
      stat("llm", llm.configured ? "configured" : "not configured",
        llm.configured ? (llm.model || "") + (llm.base_url ? " @ " + llm.base_url : "")
          : "set NEORAG_LLM_BASE_URL to enable answers", llm.configured ? "good" : "warn"),
      vi.searched_in === "memory"
        ? stat("vector index", "in process", "exact · dim " + emb.dimension +
            (vi.present ? " · store index " + (vi.name || "") + " kept" : ""), "good")
        : stat("vector index", vi.present ? (vi.state || "present") : "missing",
          vi.present ? (vi.name || "") + " · dim " + vi.dimension + (vi.dimension_mismatch ? " ≠ embedder!" : "")
            : "created on first ingest", vi.present && !vi.dimension_mismatch ? "good" : "warn"),
      stat("embedding", emb.model || "?", "dim " + emb.dimension + " · cache " + fmtNum(emb.cache_size)),
      stat("graph", fmtNum(sum(counts.nodes)) + " nodes", fmtNum(sum(counts.relationships)) + " relationships"),
    );
    if (diag.schema_error) showError($("#status-error"), "Schema: " + diag.schema_error);
    else if (store.detail && !store.reachable) showError($("#status-error"), "Store: " + store.detail);
    fillKv($("#status-nodes"), counts.nodes);
    fillKv($("#status-rels"), counts.relationships);
    fillKv($("#status-flags"), diag.feature_flags);
    const tbody = $("#status-indexes").tBodies[0];
    tbody.replaceChildren(...(diag.indexes || []).map((i) => el("tr", {}, [
      el("td", { text: i.name || "" }), el("td", { text: i.type || "" }), el("td", { text: i.label || "" }),
      el("td", { text: i.property || (i.properties || []).join(", ") }), el("td", { text: i.state || "" }),
      el("td", { class: "num", text: i.dimension === null || i.dimension === undefined ? "" : i.dimension }),
    ])));
    // Sections other features add to /diagnostics (services.extras["diagnostics"]): one small table each.
    const known = new Set(["api_version", "backend", "store", "embedding", "llm", "schema_error", "indexes",
      "vector_index", "counts", "feature_flags"]);
    const extra = Object.entries(diag).filter(([k, v]) => !known.has(k) && v && typeof v === "object");
    $("#status-extra").replaceChildren(...extra.map(([k, v]) => {
      const table = el("table", { class: "kv" }, [el("tbody")]);
      fillKv(table, Array.isArray(v) ? Object.fromEntries(v.map((x, i) => [String(i), x])) : v);
      return el("div", { class: "card grow", "data-section": k }, [el("h2", { text: k }), table]);
    }));
    $("#status-raw").textContent = JSON.stringify(diag, null, 2);
  }

  views.status = { onShow: loadStatus };
  $("#status-refresh").addEventListener("click", loadStatus);

  window.NeoRAG = { $, $$, el, escapeHtml, fmtNum, fmtValue, fillKv, api, errorText, showError, views,
    refreshHealth, authFetch, authHeaders, askForKey, storedKey };
  $("#key-change").addEventListener("click", (ev) => { ev.preventDefault(); askForKey("Enter the API key to use."); });

  window.addEventListener("hashchange", route);
  document.addEventListener("DOMContentLoaded", () => {
    route();
    refreshHealth();
    setInterval(refreshHealth, 15000);
  });
})();
