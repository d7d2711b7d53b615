/* Ingest view: EventSource on GET /ingest/stream, a progress bar per stage, live log, result counts,
   errors in place, and a resumable state when the connection drops before the run finished. */
"use strict";

(function () {
  const { $, el, fillKv, showError, errorText, views, progressBar, setBar, streamToken } = window.NeoRAG;

  const form = $("#ingest-form");
  const startBtn = $("#ingest-start");
  const stopBtn = $("#ingest-stop");
  const stateEl = $("#ingest-state");
  const currentEl = $("#ingest-current");
  const overall = $("#ingest-overall");
  const stagesBody = $("#ingest-stages").tBodies[0];
  const logEl = $("#ingest-log");
  const errorEl = $("#ingest-error");
  const resumeEl = $("#ingest-resume");

  // One run at a time: {source, params, stages: Map, finished, gotEvent, startedAt, lastStage, result}
  let run = null;
  let timer = null;

  function setState(name, text) {
    stateEl.className = "state state-" + name;
    stateEl.textContent = text || name;
  }

  function log(line, cls) {
    const ts = new Date().toLocaleTimeString();
    logEl.append(el("span", { class: cls || "" , text: "[" + ts + "] " + line + "\n" }));
    logEl.scrollTop = logEl.scrollHeight;
  }

  /** The row for a stage (created on first sight, in arrival order). */
  function stageRow(name) {
    let st = run.stages.get(name);
    if (st) return st;
    const bar = progressBar(name, false);
    const counts = el("td", { class: "num counts", text: "" });
    const detail = el("td", { class: "detail", text: "" });
    const row = el("tr", { "data-stage": name }, [el("td", { class: "stage-name", text: name }),
      el("td", {}, [bar]), counts, detail]);
    stagesBody.append(row);
    st = { name, row, bar, counts, detail, counted: false, complete: false };
    run.stages.set(name, st);
    return st;
  }

  /** Mark every stage without its own counts as finished (a later stage has started, or the run ended). */
  function completeUncounted(except) {
    for (const st of run.stages.values()) {
      if (st.name === except || st.complete || st.counted) continue;
      st.complete = true;
      setBar(st.bar, 100);
      if (!st.counts.textContent) st.counts.textContent = "✓";
    }
  }

  function updateOverall() {
    if (run.finished === "done") { setBar(overall, 100, { label: "100% · done" }); return; }
    // Without a known number of stages, the overall bar follows the stage currently reporting counts.
    const last = run.lastStage && run.stages.get(run.lastStage);
    if (last && last.counted) setBar(overall, last.pct, { label: last.name + " " + last.pct + "%" });
    else setBar(overall, 0, { indeterminate: true, label: run.lastStage || "starting…" });
  }

  function onPayload(eventName, data) {
    if (!run || run.finished) return;
    run.gotEvent = true;
    const stage = (data && data.stage) || eventName;
    if (eventName === "start" && !data.stage) { log("stream opened", "ok"); return; }
    if (stage === "error") { fail(data.error || data.message || JSON.stringify(data)); return; }
    if (stage === "result") { showResult(data.result || data); return; }
    if (stage === "done") { finish(); return; }
    if (/(_warn|^file_error)$/.test(stage)) { warnInPlace(stage, data); return; }
    const current = data.current !== undefined ? data.current : data.processed;
    const total = data.total;
    const st = stageRow(stage);
    if (stage !== run.lastStage) completeUncounted(stage);
    run.lastStage = stage;
    currentEl.textContent = stage;
    if (typeof current === "number" && typeof total === "number" && total > 0) {
      st.counted = true;
      st.pct = Math.round((100 * current) / total);
      setBar(st.bar, st.pct);
      st.counts.textContent = current + " / " + total;
    } else if (!st.counted) {
      setBar(st.bar, 0, { indeterminate: true });
    }
    const extra = Object.entries(data).filter(([k]) => !["stage", "current", "total"].includes(k))
      .map(([k, v]) => k === "detail" ? String(v) : k + "=" + (typeof v === "object" ? JSON.stringify(v) : v));
    if (extra.length) st.detail.textContent = extra.join(" · ");
    const warn = /warn|error/.test(stage);
    log(stage + (typeof total === "number" ? " " + current + "/" + total : "") +
      (extra.length ? "  " + extra.join(" ") : ""), warn ? "err" : "");
    updateOverall();
  }

  /** Per-file errors and per-pair warnings: listed in place while the run goes on (no stage row). */
  function warnInPlace(stage, data) {
    const what = data.file || data.pair || "";
    const msg = data.error || data.detail || JSON.stringify(data);
    run.warnings.push(stage + ": " + (what ? what + ": " : "") + msg);
    showError(errorEl, run.warnings.length + " problem(s) so far (the run continues):\n" +
      run.warnings.slice(-8).map((w) => "• " + w).join("\n"));
    log(stage + " " + what + " " + msg, "err");
  }

  function showResult(result) {
    run.result = result;
    const flat = {};
    const errors = [];
    for (const [k, v] of Object.entries(result || {})) {
      if (k === "errors" && Array.isArray(v)) errors.push(...v);
      else flat[k] = v;
    }
    fillKv($("#ingest-counts"), flat);
    $("#ingest-result-card").hidden = false;
    log("result: " + JSON.stringify(result), "ok");
    if (errors.length) {
      showError(errorEl, errors.length + " file(s) could not be ingested:\n" +
        errors.map((e) => "• " + (typeof e === "object" ? Object.values(e).join(": ") : e)).join("\n"));
    }
  }

  function closeSource() {
    if (run && run.source) { run.source.close(); run.source = null; }
    clearInterval(timer);
    startBtn.disabled = false;
    stopBtn.disabled = true;
  }

  function finish() {
    run.finished = "done";
    completeUncounted(null);
    for (const st of run.stages.values()) if (st.counted && st.pct >= 100) st.complete = true;
    updateOverall();
    closeSource();
    setState("done");
    currentEl.textContent = "";
    log("done", "ok");
  }

  /** End the run as ``finished`` (error / disconnected): the overall bar keeps the last counted stage's share. */
  function endRun(finished, word) {
    run.finished = finished;
    closeSource();
    const last = run.lastStage && run.stages.get(run.lastStage);
    setBar(overall, last && last.counted ? last.pct : 0, { label: word + (run.lastStage ? " in " + run.lastStage : "") });
  }

  function fail(message) {
    endRun("error", "failed");
    overall.classList.add("failed");
    setState("error");
    showError(errorEl, message);
    log("error: " + message, "err");
  }

  /** The stream broke before `done`: keep what we know and offer to resume (the checkpoint skips done work). */
  function disconnected(why) {
    endRun("disconnected", "interrupted");
    setState(why === "stopped" ? "stopped" : "disconnected");
    const where = run.lastStage ? " during stage “" + run.lastStage + "”" : "";
    $("#ingest-resume-text").textContent = (why === "stopped" ? "Stopped watching" : "Connection lost") + where +
      ". The server keeps ingesting in the background and keeps what is written. Resume re-runs this path " +
      "incrementally with its checkpoint, so finished files, chunks and relation pairs are skipped " +
      "(it waits while the background run finishes).";
    resumeEl.hidden = false;
    log((why === "stopped" ? "stopped by user" : "connection lost") + where + " (resumable)", "err");
  }

  /** The server refused the stream (bad path, 4xx/5xx JSON): fetch once more to read its error body. */
  async function explainRefusal(url) {
    const ctrl = new AbortController();
    try {
      const resp = await fetch(url, { signal: ctrl.signal,
        headers: window.NeoRAG.authHeaders({ Accept: "application/json" }) });
      const type = resp.headers.get("content-type") || "";
      if (!resp.ok || !type.includes("event-stream")) {
        const text = await resp.text();
        let body = text;
        try { body = JSON.parse(text); } catch (_) { /* plain text */ }
        if (resp.status === 409 && run.resuming && run.tries < MAX_RESUME_TRIES) { waitAndRetry(body); return; }
        fail(errorText(resp.status, body));
        return;
      }
      ctrl.abort(); // the stream would start fine now: the first failure was the connection
      disconnected("lost");
    } catch (e) {
      fail("Cannot reach the NeoRAG server (" + e.message + "). Is `neorag serve` running?");
    }
  }

  const MAX_RESUME_TRIES = 150;
  let retryTimer = null;

  /** Resuming while the interrupted run still finishes on the server (409): try again every 2 s. */
  function waitAndRetry(body) {
    run.finished = "waiting";
    closeSource();
    stopBtn.disabled = false;
    startBtn.disabled = true;
    setState("waiting", "waiting");
    setBar(overall, 0, { indeterminate: true, label: "previous run still finishing on the server…" });
    if (run.tries === 0) log("server: " + ((body && body.message) || "already running") + " — retrying every 2 s");
    const params = run.params;
    const tries = run.tries + 1;
    retryTimer = setTimeout(() => start(params, { resuming: true, tries }), 2000);
  }

  function start(params, opts) {
    if (run && run.source) return;
    clearTimeout(retryTimer);
    showError(errorEl, null);
    resumeEl.hidden = true;
    $("#ingest-result-card").hidden = true;
    stagesBody.replaceChildren();
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) query.set(k, String(v));
    const url = "/ingest/stream?" + query.toString();
    run = { params, stages: new Map(), finished: null, gotEvent: false, startedAt: Date.now(), lastStage: null,
      warnings: [], resuming: Boolean(opts && opts.resuming), tries: (opts && opts.tries) || 0 };
    overall.classList.remove("failed");
    setBar(overall, 0, { indeterminate: true, label: "starting…" });
    setState("running");
    if (!run.tries) log("GET " + url);
    startBtn.disabled = true;
    stopBtn.disabled = false;
    clearInterval(timer);
    timer = setInterval(() => {
      $("#ingest-elapsed").textContent = ((Date.now() - run.startedAt) / 1000).toFixed(1) + " s";
    }, 200);
    const current = run;
    streamToken("Starting an ingest needs a write key.").then((token) => {
      if (run !== current || run.finished) return; // stopped (or restarted) while the token was on its way
      openStream(token ? url + "&sse_token=" + encodeURIComponent(token) : url, url);
    }, (e) => fail(e.message));
  }

  /** Open the EventSource on ``streamUrl`` (it may carry the token; ``url`` is the one shown and replayed). */
  function openStream(streamUrl, url) {
    const source = new EventSource(streamUrl);
    run.source = source;
    const handler = (name) => (ev) => {
      // A *named* SSE event "error" is a MessageEvent with data; a connection error is a plain Event.
      if (name === "error" && !(ev instanceof MessageEvent && ev.data)) return onConnectionError();
      let data = {};
      try { data = ev.data ? JSON.parse(ev.data) : {}; } catch (_) { data = { stage: name, detail: ev.data }; }
      onPayload(name, data);
    };
    source.onmessage = handler("message");
    for (const name of ["start", "progress", "stage", "result", "done", "error", "warning"]) {
      source.addEventListener(name, handler(name));
    }
    function onConnectionError() {
      if (!run || run.finished) return;
      source.close(); // never let EventSource auto-reconnect: that would start the ingest again
      if (!run.gotEvent) explainRefusal(url);
      else disconnected("lost");
    }
  }

  function formParams() {
    return {
      path: $("#ingest-path").value.trim(),
      incremental: $("#ingest-incremental").checked,
      refresh: $("#ingest-refresh").checked,
      checkpoint: true,
    };
  }

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const params = formParams();
    if (!params.path) { showError(errorEl, "Enter a file or folder path."); return; }
    start(params);
  });
  stopBtn.addEventListener("click", () => {
    clearTimeout(retryTimer);
    if (run && (!run.finished || run.finished === "waiting")) { run.finished = null; disconnected("stopped"); }
  });
  $("#ingest-resume-btn").addEventListener("click", () => {
    if (!run) return;
    start(Object.assign({}, run.params, { incremental: true, refresh: false, checkpoint: true }), { resuming: true });
  });
  $("#ingest-log-clear").addEventListener("click", () => logEl.replaceChildren());

  /** The configured roots (shown in the hint) and the paths directly inside them (suggestions). */
  async function loadRoots() {
    let data;
    try { data = await window.NeoRAG.api("GET", "/ui/api/ingest/roots"); } catch (_) { return; }
    const roots = data.roots || [];
    $("#ingest-roots").replaceChildren(...roots.flatMap((r, i) => [i ? ", " : "",
      el("code", { class: r.exists ? "" : "missing", title: r.exists ? "" : "does not exist yet", text: r.path })]));
    if (!roots.length) $("#ingest-roots").textContent = "none configured";
    $("#ingest-paths").replaceChildren(...(data.paths || []).map((p) => el("option", { value: p })));
    const field = $("#ingest-path");
    if (!field.value && (data.paths || []).length) field.placeholder = data.paths[data.paths.length > 1 ? 1 : 0];
  }

  $("#ingest-path").addEventListener("focus", loadRoots);
  views.ingest = { onShow() { loadRoots(); $("#ingest-path").focus(); } };
  window.NeoRAG.ingest = { start, get run() { return run; } };
})();
