/* Ask view: POST /query {stream: true} read with fetch + ReadableStream; the answer renders as it
   arrives; the trailing "[SOURCES]" block becomes a sources list that the [S#] markers link to. */
"use strict";

(function () {
  const { $, el, escapeHtml, fmtNum, errorText, api, views } = window.NeoRAG;

  const thread = $("#ask-thread");
  const form = $("#ask-form");
  const question = $("#ask-question");
  const sendBtn = $("#ask-send");
  const history = []; // [{role, content}] of finished turns, sent with the next question
  let turnNo = 0;
  let busy = false;

  const TRAILER = "[SOURCES]";

  /** Split the streamed text into the answer, an inline error, and the raw sources trailer. */
  function splitStream(text) {
    let answer = text;
    let trailer = null;
    const at = text.lastIndexOf(TRAILER);
    if (at >= 0) { answer = text.slice(0, at); trailer = text.slice(at + TRAILER.length); }
    let error = null;
    const m = answer.match(/\n?\[ERROR\]\s*([^\n]*)\n?/);
    if (m) { error = m[1].trim(); answer = answer.slice(0, m.index) + answer.slice(m.index + m[0].length); }
    return { answer: answer.replace(/\s+$/, ""), trailer, error };
  }

  /** Parse "- 1. <id> (rank=1, reason=vector, score=0.84)" lines (indented lines after one = its preview). */
  function parseSources(trailer) {
    const out = [];
    for (const raw of (trailer || "").split("\n")) {
      if (!raw.trim()) continue;
      const m = raw.match(/^\s*-\s*(\d+)\.\s+(.*?)\s*(?:\(([^()]*(?:\([^()]*\)[^()]*)*)\))?\s*$/);
      if (m && !/^\s{2,}/.test(raw)) {
        const src = { n: Number(m[1]), id: m[2], fields: {} };
        for (const part of (m[3] || "").split(/,\s*(?=[A-Za-z_][\w.]*=)/)) {
          const kv = part.match(/^\s*([A-Za-z_][\w.]*)=(.*)$/);
          if (kv) src.fields[kv[1]] = kv[2].trim();
        }
        src.rank = src.fields.rank !== undefined ? Number(src.fields.rank) : src.n;
        out.push(src);
      } else if (out.length) {
        const last = out[out.length - 1];
        last.preview = (last.preview ? last.preview + " " : "") + raw.trim().replace(/^(text|preview):\s*/i, "");
      }
    }
    return out;
  }

  /** Escaped answer HTML with [S#] (also [S1, S2] / [S1][S2]) turned into links to this turn's sources. */
  function renderAnswer(text, turn) {
    return escapeHtml(text).replace(/\[(S\d+(?:\s*[,;]\s*S\d+)*)\]/g, (_, group) =>
      group.split(/\s*[,;]\s*/).map((label) => {
        const n = label.slice(1);
        return '<a class="cite" href="#ask" data-turn="' + turn + '" data-rank="' + n + '">[' + label + "]</a>";
      }).join(""));
  }

  /** "p. 3" / "pp. 3-4" / "lines 12-30" / "record 4" from the trailer's location fields. */
  function locationLabel(f) {
    if (f.page) return "p. " + f.page;
    if (f.pages) return "pp. " + f.pages;
    if (f.lines) return f.lines.split("-")[0] === f.lines.split("-")[1] ? "line " + f.lines.split("-")[0] : "lines " + f.lines;
    if (f.record !== undefined) return "record " + f.record + (f.paragraph !== undefined ? ", paragraph " + f.paragraph : "");
    return "";
  }
  const LOCATION_FIELDS = ["page", "pages", "lines", "record", "paragraph"];

  function sourceItem(src, turn, cited) {
    const f = src.fields;
    const scores = Object.entries(f).filter(([k]) => !["rank", "reason", "text", "preview"].includes(k) &&
      !LOCATION_FIELDS.includes(k)).map(([k, v]) => k + " " + (isNaN(Number(v)) ? v : fmtNum(Number(v), 3)));
    const loc = locationLabel(f);
    const preview = src.preview || f.text || f.preview;
    return el("li", { class: "source" + (cited ? " cited" : ""), id: "src-" + turn + "-" + src.rank,
      "data-rank": src.rank, "data-id": src.id }, [
      el("div", { class: "head" }, [
        el("span", { class: "label", text: "S" + src.rank }),
        f.reason ? el("span", { class: "badge " + f.reason, text: f.reason }) : null,
        el("span", { class: "sid", text: src.id }),
        loc ? el("span", { class: "loc", title: "where this source is in its file", text: loc }) : null,
        scores.length ? el("span", { class: "scores", text: scores.join(" · ") }) : null,
      ]),
      preview ? el("div", { class: "preview", text: preview }) : null,
    ]);
  }

  /** Fill in text previews for stored chunks (the [SOURCES] trailer carries ids and scores only). */
  async function loadPreviews(box, sources) {
    const ids = sources.filter((s) => !s.preview && s.fields.reason !== "external").map((s) => s.id);
    if (!ids.length) return;
    const query = new URLSearchParams();
    for (const id of ids.slice(0, 50)) query.append("ids", id);
    let data;
    try { data = await api("GET", "/ui/api/chunks?" + query.toString()); } catch (_) { return; }
    const byId = new Map((data.chunks || []).map((c) => [c.id, c]));
    for (const li of box.querySelectorAll("li.source")) {
      const c = byId.get(li.dataset.id);
      if (!c || li.querySelector(".preview")) continue;
      const head = li.querySelector(".head");
      if (c.location_label && !head.querySelector(".loc")) {
        head.querySelector(".sid").after(el("span", { class: "loc", text: c.location_label }));
      }
      if (c.title || c.source) {
        head.append(el("span", { class: "origin", text: (c.section || c.title || c.source) }));
      }
      li.append(el("div", { class: "preview", text: c.preview }));
    }
  }

  function addTurn(role, text) {
    const node = el("div", { class: "turn " + role });
    if (role === "user") node.textContent = text;
    thread.append(node);
    node.scrollIntoView({ block: "end" });
    return node;
  }

  async function ask(q) {
    busy = true;
    sendBtn.disabled = true;
    const turn = ++turnNo;
    addTurn("user", q);
    const box = addTurn("assistant");
    box.dataset.turn = String(turn);
    const answerEl = el("div", { class: "answer streaming" });
    const meta = el("div", { class: "meta", text: "waiting for the first tokens…" });
    box.append(answerEl, meta);
    const body = { question: q, stream: true, include_graph: true };
    if ($("#ask-use-history").checked && history.length) body.history = history.slice(-12);
    const t0 = performance.now();
    let text = "";
    let firstAt = null;
    try {
      const resp = await fetch("/query", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body) });
      if (!resp.ok) {
        const raw = await resp.text();
        let data = raw;
        try { data = JSON.parse(raw); } catch (_) { /* text */ }
        throw new Error(errorText(resp.status, data));
      }
      const reader = resp.body.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (firstAt === null) firstAt = performance.now();
        text += decoder.decode(value, { stream: true });
        const parts = splitStream(text);
        answerEl.innerHTML = renderAnswer(parts.answer, turn);
        meta.textContent = "streaming… " + text.length + " chars";
      }
      text += decoder.decode();
      const mode = resp.headers.get("X-NeoRAG-Mode");
      const sources = finishTurn(box, answerEl, meta, text, turn, t0, firstAt, q, mode);
      const graphId = resp.headers.get("X-NeoRAG-Graph-Id");  // "why this answer": the evidence graph
      if (graphId && sources.length && window.NeoRAG.graph) {
        box.append(el("button", { type: "button", class: "small why", text: "Why this answer? (graph)",
          onclick: () => window.NeoRAG.graph.showAnswer(graphId) }));
      }
      await loadPreviews(box, sources);
    } catch (e) {
      answerEl.classList.remove("streaming");
      box.append(el("div", { class: "alert error", text: e.message }));
      meta.textContent = "failed after " + ((performance.now() - t0) / 1000).toFixed(1) + " s";
    } finally {
      busy = false;
      sendBtn.disabled = false;
    }
  }

  function finishTurn(box, answerEl, meta, text, turn, t0, firstAt, q, mode) {
    const parts = splitStream(text);
    answerEl.classList.remove("streaming");
    answerEl.innerHTML = renderAnswer(parts.answer, turn);
    const sources = parseSources(parts.trailer);
    const cited = new Set(Array.from(answerEl.querySelectorAll("a.cite")).map((a) => a.dataset.rank));
    if (parts.error) box.append(el("div", { class: "alert error", text: parts.error }));
    if (sources.length) {
      box.append(el("div", { class: "sources-title", text: "Sources (" + sources.length + ")" }),
        el("ol", { class: "sources" }, sources.map((s) => sourceItem(s, turn, cited.has(String(s.rank))))));
    }
    for (const a of answerEl.querySelectorAll("a.cite")) {
      if (!box.querySelector("#src-" + turn + "-" + a.dataset.rank)) a.classList.add("missing");
    }
    const secs = (performance.now() - t0) / 1000;
    meta.textContent = (mode === "extractive" ? "extractive answer (no LLM) · " : mode ? mode + " answer · " : "") +
      sources.length + " source(s) · " + secs.toFixed(1) + " s" +
      (firstAt ? " · first bytes after " + ((firstAt - t0) / 1000).toFixed(2) + " s" : "");
    if (!parts.error) {
      history.push({ role: "user", content: q }, { role: "assistant", content: parts.answer });
    }
    return sources;
  }

  thread.addEventListener("click", (ev) => {
    const a = ev.target.closest("a.cite");
    if (!a) return;
    ev.preventDefault();
    const target = document.getElementById("src-" + a.dataset.turn + "-" + a.dataset.rank);
    if (!target) return;
    target.scrollIntoView({ behavior: "smooth", block: "center" });
    target.classList.add("flash");
    setTimeout(() => target.classList.remove("flash"), 1400);
  });

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = question.value.trim();
    if (!q || busy) return;
    question.value = "";
    ask(q);
  });
  question.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); form.requestSubmit(); }
  });
  $("#ask-clear").addEventListener("click", () => { history.length = 0; thread.replaceChildren(); });

  views.ask = { onShow() { question.focus(); } };
  window.NeoRAG.ask = { parseSources, splitStream, history };
})();
