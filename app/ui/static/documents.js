/* Documents view: upload files (drag and drop or the file picker) with one progress bar per file (the
   upload's bytes, then its ingest's SSE stages from GET /ingest/stream), the stored documents from
   GET /documents with their details (chunks with page / line locations, top entities) and a two-step
   delete (DELETE /documents/{id}). The view builds its own DOM inside #view-documents. */
"use strict";

(function () {
  const { $, el, fmtNum, api, errorText, showError, views, authHeaders, askForKey, progressBar, setBar, streamToken } =
    window.NeoRAG;

  const root = $("#view-documents");
  const PAGE = 25;
  let limits = { max_bytes: null, max_files: null, extensions: [".txt", ".md", ".pdf", ".json", ".jsonl"] };
  let offset = 0;
  let ingestQueue = Promise.resolve(); // ingests run one after another (they share entities)
  let uploadNo = 0;

  // ------------------------------------------------------------------ layout
  const fileInput = el("input", { type: "file", id: "docs-file", multiple: true, class: "visually-hidden",
    accept: limits.extensions.join(",") });
  const drop = el("div", { class: "card dropzone", id: "docs-drop", tabindex: "0", role: "button",
    "aria-label": "Drop files here or choose files" }, [
    el("div", { class: "dz-title", text: "Drop files here" }),
    el("div", { class: "muted" }, ["or ", el("label", { class: "linklike", for: "docs-file", text: "choose files" }),
      " · ", el("span", { id: "docs-limits", text: "…" })]),
    fileInput,
  ]);
  const uploadsBody = el("tbody");
  const uploadsCard = el("div", { class: "card", id: "docs-uploads-card", hidden: true }, [
    el("div", { class: "row between" }, [el("h2", { text: "Uploads" }),
      el("button", { type: "button", class: "small", id: "docs-uploads-clear", text: "Clear finished",
        onclick: clearFinished })]),
    el("table", { class: "data uploads", id: "docs-uploads" }, [
      el("thead", {}, [el("tr", {}, [el("th", { text: "File" }), el("th", { class: "num", text: "Size" }),
        el("th", { class: "barcol", text: "Progress" }), el("th", { text: "State" })])]), uploadsBody]),
  ]);
  const errorBox = el("div", { class: "alert error", id: "docs-error", hidden: true });
  const noticeBox = el("div", { class: "alert ok", id: "docs-notice", hidden: true });
  const listBody = el("tbody");
  const countEl = el("span", { class: "count", id: "docs-count" });
  const prevBtn = el("button", { type: "button", class: "small", id: "docs-prev", text: "‹ Newer",
    onclick: () => { offset = Math.max(0, offset - PAGE); loadList(); } });
  const nextBtn = el("button", { type: "button", class: "small", id: "docs-next", text: "Older ›",
    onclick: () => { offset += PAGE; loadList(); } });
  const listCard = el("div", { class: "card" }, [
    el("div", { class: "row between" }, [el("h2", {}, ["Stored documents ", countEl]),
      el("div", { class: "actions" }, [prevBtn, nextBtn,
        el("button", { type: "button", class: "small", id: "docs-refresh", text: "Refresh", onclick: loadList })])]),
    el("div", { class: "table-wrap" }, [el("table", { class: "data", id: "docs-table" }, [
      el("thead", {}, [el("tr", {}, ["Name", "Chunks", "Entities", "Ingested", "Content hash", ""].map((h, i) =>
        el("th", { class: i === 1 || i === 2 ? "num" : "", text: h })))]), listBody])]),
  ]);
  const detailCard = el("div", { class: "card", id: "docs-detail", hidden: true });
  root.append(el("h1", { text: "Documents" }),
    el("p", { class: "hint" }, ["Upload files to ", el("code", { text: "POST /documents" }),
      " (streamed to the server's uploads folder, then ingested with progress from ",
      el("code", { text: "GET /ingest/stream" }), "); list, inspect and delete what is stored."]),
    drop, uploadsCard, errorBox, noticeBox, listCard, detailCard);

  // ------------------------------------------------------------------ helpers
  function fmtBytes(n) {
    if (typeof n !== "number") return "—";
    if (n < 1024) return n + " B";
    if (n < 1024 * 1024) return (n / 1024).toFixed(1) + " KiB";
    return (n / 1024 / 1024).toFixed(1) + " MiB";
  }

  function ago(iso) {
    if (!iso) return "—";
    const d = new Date(iso);
    return isNaN(d) ? iso : d.toLocaleString();
  }

  // Share of the file's bar per ingest stage (the upload takes the first 20%).
  const STAGE_PCT = { scan_input: 22, hash_computed: 26, schema_index: 28, existing_scan: 30,
    cooccurrence: 86, relates_to: 90, relation_start: 91, relation_extraction_done: 98 };

  function stagePct(data) {
    const { stage, current, total } = data;
    const frac = typeof current === "number" && typeof total === "number" && total > 0 ? current / total : null;
    if (stage === "embedding_progress" && frac !== null) return 30 + 45 * frac;
    if (stage === "entity_extraction" && frac !== null) return 75 + 10 * frac;
    if (stage === "relation_extraction" && frac !== null) return 91 + 7 * frac;
    return STAGE_PCT[stage];
  }

  // ------------------------------------------------------------------ uploads
  function addRow(file) {
    const id = "up-" + (++uploadNo);
    const progress = progressBar(file.name, true);
    const state = el("td", { class: "state-cell", text: "queued" });
    const row = el("tr", { id, "data-name": file.name, "data-state": "queued" }, [
      el("td", { class: "fname", text: file.name }), el("td", { class: "num", text: fmtBytes(file.size) }),
      el("td", {}, [progress]), state]);
    uploadsBody.append(row);
    uploadsCard.hidden = false;
    return { row, progress, state, pct: 0 };
  }

  function setRow(item, pct, label, stateName, text) {
    if (pct !== undefined && pct !== null) item.pct = Math.max(item.pct, pct);
    setBar(item.progress, item.pct, { label, complete: stateName === "done", failed: stateName === "error" });
    item.row.dataset.state = stateName;
    item.state.textContent = text || stateName;
    item.state.className = "state-cell " + stateName;
  }

  function clearFinished() {
    for (const tr of Array.from(uploadsBody.children)) {
      if (tr.dataset.state === "done" || tr.dataset.state === "error") tr.remove();
    }
    uploadsCard.hidden = !uploadsBody.children.length;
  }

  function refuse(file) {
    const dot = file.name.lastIndexOf(".");
    const ext = dot >= 0 ? file.name.slice(dot).toLowerCase() : "";
    if (!limits.extensions.includes(ext)) return "unsupported type " + (ext || "(none)") + "; supported: " +
      limits.extensions.join(", ");
    if (limits.max_bytes && file.size > limits.max_bytes) return "larger than the upload limit of " +
      fmtBytes(limits.max_bytes);
    if (!file.size) return "empty file";
    return null;
  }

  /** POST one file (with the API key, when one is set); on 401, or a read key, ask for a key once and
      retry; resolves with the stored document. */
  async function upload(file, item) {
    let out = await send(file, item);
    const body = out.body || {};
    const reason = out.status === 401 ? "This server needs an API key (NEORAG_API_KEYS)." :
      out.status === 403 && body.error === "insufficient_scope" ? "Uploading needs a write key: " + body.message :
        null;
    if (reason && await askForKey(reason)) out = await send(file, item);
    const docs = out.body && out.body.documents;
    if (out.status === 201 && docs && docs[0]) return docs[0];
    throw new Error(errorText(out.status, out.body));
  }

  /** POST one file with XMLHttpRequest (for upload progress); resolves with {status, body}. */
  function send(file, item) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", "/documents?ingest=false");
      for (const [name, value] of Object.entries(authHeaders({}))) xhr.setRequestHeader(name, value);
      xhr.upload.onprogress = (ev) => {
        if (ev.lengthComputable) setRow(item, 20 * ev.loaded / ev.total, "uploading " +
          Math.round(100 * ev.loaded / ev.total) + "%", "uploading");
      };
      xhr.onload = () => {
        let body = null;
        try { body = JSON.parse(xhr.responseText); } catch (_) { body = xhr.responseText; }
        resolve({ status: xhr.status, body });
      };
      xhr.onerror = () => reject(new Error("the upload failed: the server cannot be reached"));
      const form = new FormData();
      form.append("file", file, file.name);
      xhr.send(form);
    });
  }

  /** The stream URL with a short-lived token when the server has API keys (EventSource sends no headers). */
  async function withStreamToken(url) {
    const token = await streamToken("Ingesting needs a write key.");
    return token ? url + "&sse_token=" + encodeURIComponent(token) : url;
  }

  /** Follow the ingest of one stored upload over SSE; resolves with the result counts. */
  async function ingest(doc, item) {
    setRow(item, 20, "ingest starting…", "ingesting");
    const url = await withStreamToken(doc.stream);
    return new Promise((resolve, reject) => {
      const source = new EventSource(url);
      let result = null;
      let finished = false;
      const handle = (ev) => {
        let data = {};
        try { data = JSON.parse(ev.data || "{}"); } catch (_) { return; }
        if (data.stage === "result") { result = data.result; return; }
        if (data.stage === "done") { finished = true; source.close(); resolve(result || {}); return; }
        if (data.stage === "error") { finished = true; source.close(); reject(new Error(data.error)); return; }
        if (!data.stage) return;
        const pct = stagePct(data);
        const counts = typeof data.current === "number" && typeof data.total === "number" ?
          " " + data.current + "/" + data.total : "";
        setRow(item, pct, data.stage + counts, "ingesting");
      };
      source.onmessage = handle;
      source.addEventListener("result", handle);
      source.onerror = () => {
        if (finished) return;
        source.close(); // never let EventSource reconnect: that would start a second ingest
        reject(new Error("the ingest stream was refused or interrupted (GET " + doc.stream + ")"));
      };
    });
  }

  async function handleFiles(files) {
    showError(errorBox, null);
    const list = Array.from(files || []);
    if (limits.max_files && list.length > limits.max_files) {
      showError(errorBox, "At most " + limits.max_files + " files at a time; the first " + limits.max_files +
        " are uploaded.");
      list.length = limits.max_files;
    }
    await Promise.all(list.map(async (file) => {
      const item = addRow(file);
      const why = refuse(file);
      if (why) { setRow(item, 100, "refused", "error", why); return; }
      let doc;
      try {
        setRow(item, 0, "uploading 0%", "uploading");
        doc = await upload(file, item);
      } catch (e) { setRow(item, 100, "upload failed", "error", e.message); return; }
      item.row.dataset.id = doc.id;
      setRow(item, 20, "queued for ingest", "queued", doc.duplicate ? "already uploaded; queued" : "queued");
      ingestQueue = ingestQueue.then(async () => {
        try {
          const result = await ingest(doc, item);
          setRow(item, 100, "done", "done", "done · " + fmtNum(result.chunks_total || 0) + " chunks" +
            (result.chunks_new !== undefined ? " (" + fmtNum(result.chunks_new) + " new)" : ""));
        } catch (e) {
          setRow(item, 100, "ingest failed", "error", e.message);
        }
        await loadList();
      });
      await ingestQueue;
    }));
    fileInput.value = "";
  }

  fileInput.addEventListener("change", () => handleFiles(fileInput.files));
  drop.addEventListener("click", (ev) => { if (ev.target === drop || ev.target.closest(".dz-title")) fileInput.click(); });
  drop.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); fileInput.click(); } });
  for (const name of ["dragenter", "dragover"]) {
    drop.addEventListener(name, (ev) => { ev.preventDefault(); drop.classList.add("over"); });
  }
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (ev) => {
    ev.preventDefault();
    drop.classList.remove("over");
    if (ev.dataTransfer && ev.dataTransfer.files) handleFiles(ev.dataTransfer.files);
  });

  // ------------------------------------------------------------------ list, details, delete
  function deleteButton(doc) {
    const btn = el("button", { type: "button", class: "small danger", text: "Delete", "data-action": "delete" });
    btn.addEventListener("click", async () => {
      if (btn.dataset.armed !== "1") { // first click arms it; a second click within 4 s deletes
        btn.dataset.armed = "1";
        btn.textContent = "Confirm delete";
        setTimeout(() => { if (btn.isConnected && btn.dataset.armed === "1") { btn.dataset.armed = ""; btn.textContent = "Delete"; } }, 4000);
        return;
      }
      btn.disabled = true;
      btn.textContent = "Deleting…";
      try {
        const out = await api("DELETE", "/documents/" + encodeURIComponent(doc.id));
        showError(noticeBox, "Deleted " + (out.name || doc.id) + ": " + out.chunks_deleted + " chunk(s), " +
          out.entities_removed + " entit" + (out.entities_removed === 1 ? "y" : "ies") + " no longer mentioned" +
          (out.file_removed ? ", uploaded file removed" : "") + ".");
        if (detailCard.dataset.id === doc.id) { detailCard.hidden = true; detailCard.dataset.id = ""; }
      } catch (e) {
        showError(errorBox, "Delete failed: " + e.message);
      }
      await loadList();
    });
    return btn;
  }

  function listRow(doc) {
    const name = el("a", { href: "#documents", class: "doc-name", text: doc.name || doc.id,
      onclick: (ev) => { ev.preventDefault(); loadDetail(doc.id); } });
    return el("tr", { "data-id": doc.id, "data-name": doc.name || "" }, [
      el("td", {}, [name, doc.uploaded ? el("span", { class: "badge", text: "uploaded" }) : null,
        doc.title && !(doc.name || "").startsWith(doc.title) ?
          el("div", { class: "muted small-text", text: doc.title }) : null]),
      el("td", { class: "num", text: fmtNum(doc.chunks) }), el("td", { class: "num", text: fmtNum(doc.entities) }),
      el("td", { class: "nowrap", text: ago(doc.ingested_at) }),
      el("td", { class: "id", title: doc.content_hash || "", text: (doc.content_hash || "").slice(0, 12) }),
      el("td", { class: "num" }, [deleteButton(doc)]),
    ]);
  }

  async function loadList() {
    let data;
    try {
      data = await api("GET", "/documents?limit=" + PAGE + "&offset=" + offset);
    } catch (e) {
      showError(errorBox, "GET /documents failed: " + e.message);
      return;
    }
    if (data.limits) {
      limits = data.limits;
      fileInput.setAttribute("accept", limits.extensions.join(","));
      $("#docs-limits").textContent = limits.extensions.join(" ") + " · up to " + fmtBytes(limits.max_bytes) +
        " each, " + limits.max_files + " at a time";
    }
    if (!data.documents.length && offset > 0) { offset = Math.max(0, offset - PAGE); return loadList(); }
    listBody.replaceChildren(...data.documents.map(listRow));
    if (!data.documents.length) {
      listBody.append(el("tr", { class: "empty" }, [el("td", { colspan: "6", class: "muted",
        text: "Nothing stored yet: drop a file above." })]));
    }
    countEl.textContent = data.total ? "(" + (offset + 1) + "–" + (offset + data.documents.length) + " of " +
      data.total + ")" : "(0)";
    prevBtn.disabled = offset === 0;
    nextBtn.disabled = offset + data.documents.length >= data.total;
  }

  async function loadDetail(id) {
    let d;
    try {
      d = await api("GET", "/documents/" + encodeURIComponent(id) + "?chunk_limit=200");
    } catch (e) {
      showError(errorBox, "GET /documents/" + id + " failed: " + e.message);
      return;
    }
    detailCard.dataset.id = id;
    const chunks = d.chunk_items.map((c) => el("li", { class: "chunk", "data-id": c.id }, [
      el("div", { class: "head" }, [
        el("span", { class: "loc", text: c.location_label || "—" }),
        c.section ? el("span", { class: "section", text: c.section }) : null,
        el("span", { class: "muted small-text", text: c.entities + " entit" + (c.entities === 1 ? "y" : "ies") }),
      ]),
      el("div", { class: "preview", text: c.preview }),
    ]));
    detailCard.replaceChildren(
      el("div", { class: "row between" }, [el("h2", {}, [d.name || d.id, " ",
        el("span", { class: "muted small-text", text: d.title || "" })]),
        el("button", { type: "button", class: "small", text: "Close", onclick: () => { detailCard.hidden = true; } })]),
      el("table", { class: "kv", id: "docs-detail-kv" }, [el("tbody", {}, [
        ["id", d.id], ["source", d.source], ["content hash", d.content_hash], ["size", fmtBytes(d.bytes)],
        ["chunks", fmtNum(d.chunks)], ["documents", fmtNum(d.documents)], ["entities", fmtNum(d.entities)],
        ["ingested at", ago(d.ingested_at)],
      ].map(([k, v]) => el("tr", {}, [el("th", { text: k }), el("td", { text: v === undefined || v === null ? "—" : String(v) })])))]),
      el("h3", { text: "Top entities" }),
      el("ul", { class: "chips", id: "docs-entities" }, d.top_entities.map((e) =>
        el("li", {}, [el("span", { class: "chip", title: e.mentions + " mention(s)", text: e.name + " · " + e.chunks })]))),
      el("h3", { text: "Chunks (" + d.chunk_items.length + (d.chunks > d.chunk_items.length ? " of " + d.chunks : "") + ")" }),
      el("ol", { class: "chunks", id: "docs-chunks" }, chunks),
    );
    detailCard.hidden = false;
    detailCard.scrollIntoView({ block: "nearest" });
  }

  views.documents = { onShow() { showError(noticeBox, null); loadList(); } };
  window.NeoRAG.documents = { handleFiles, loadList, loadDetail };
})();
