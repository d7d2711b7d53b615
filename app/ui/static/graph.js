/* Graph view: draws GET /graph answers with Cytoscape.js (vendor/cytoscape.min.js, no CDN). Entry points:
   an entity (search box with suggestions from GET /entities/search), a document, a KG sample, and an
   answer's evidence graph ("why this answer", from the Ask view). Click a node for its properties and
   chunk texts (GET /graph/node); double-click (or "Expand") merges its neighbours (GET /graph?node=…):
   node ids are stable across requests, so expansions merge. Deep links: #graph?entity=York,
   #graph?document=<id>, #graph?dataset=webqsp&sample=WebQTrn-0, #graph?answer=<id>. */
"use strict";

(function () {
  const { $, el, api, fillKv, showError, views, sampleSuggester } = window.NeoRAG;

  const COLORS = { Entity: "#3b5bdb", Chunk: "#2f9e44", Document: "#e8590c", KGEntity: "#7048e8",
    KGSample: "#c2255c", Question: "#e03131" };
  const MAX_FIT_ZOOM = 1.6;
  const SHAPES = { Entity: "ellipse", Chunk: "round-rectangle", Document: "diamond", KGEntity: "ellipse",
    KGSample: "hexagon", Question: "star" };

  const view = $("#view-graph");
  view.append(
    el("h1", { text: "Graph" }),
    el("p", { class: "hint" }),
    el("form", { id: "graph-form", class: "card graph-form", autocomplete: "off" }, [
      el("label", {}, ["Draw", el("select", { id: "graph-entry" }, [
        el("option", { value: "entity", text: "Entity" }), el("option", { value: "document", text: "Document" }),
        el("option", { value: "sample", text: "KG sample" })])]),
      el("label", { class: "entry", "data-entry": "entity" }, ["Entity",
        el("input", { type: "text", id: "graph-entity", list: "graph-entity-list", placeholder: "type a name…" }),
        el("datalist", { id: "graph-entity-list" })]),
      el("label", { class: "entry", "data-entry": "document", hidden: true }, ["Document id",
        el("input", { type: "text", id: "graph-document", placeholder: "doc-…" })]),
      el("label", { class: "entry", "data-entry": "sample", hidden: true }, ["Dataset",
        el("input", { type: "text", id: "graph-dataset", value: "webqsp" })]),
      el("label", { class: "entry", "data-entry": "sample", hidden: true }, ["Sample id",
        el("input", { type: "text", id: "graph-sample", list: "graph-samples", placeholder: "WebQTrn-0" }),
        el("datalist", { id: "graph-samples" })]),
      el("label", {}, ["Depth", el("select", { id: "graph-depth" }, [el("option", { value: "1", text: "1" }),
        el("option", { value: "2", text: "2" })])]),
      el("label", {}, ["Limit", el("input", { type: "number", id: "graph-limit", value: "150", min: "1", max: "1000" })]),
      el("div", { class: "actions" }, [
        el("button", { type: "submit", id: "graph-go", class: "primary", text: "Draw" }),
        el("button", { type: "button", id: "graph-fit", text: "Fit" }),
        el("button", { type: "button", id: "graph-clear", text: "Clear" })]),
    ]),
    el("div", { class: "alert error", id: "graph-error", hidden: true }),
    el("div", { class: "graph-layout" }, [
      el("div", { class: "card graph-card" }, [
        el("div", { class: "row between graph-status" }, [el("span", { id: "graph-meta", class: "muted" }),
          el("span", { id: "graph-legend", class: "legend" })]),
        el("div", { id: "graph-canvas", class: "graph-canvas", "aria-label": "graph" }),
        el("div", { class: "muted small-text", text: "Drag the background to pan, scroll to zoom, drag nodes. " +
          "Click a node for its details, double-click to expand its neighbours." })]),
      el("aside", { class: "card graph-panel", id: "graph-panel" }, [
        el("div", { class: "muted", text: "Click a node to see its properties and text." })]),
    ]),
  );
  view.querySelector("p.hint").innerHTML = "Bounded subgraphs from <code>GET /graph</code>, coloured by label. " +
    "Ask a question and press <b>Why this answer?</b> to see the entities and paths behind its sources.";

  let cy = null;
  let shownHash = "";

  function style() {
    const s = [
      { selector: "node", style: { label: "data(short)", "font-size": 9, "text-valign": "bottom", "text-margin-y": 3,
        color: "#1d2330", "text-outline-color": "#fff", "text-outline-width": 2, width: 20, height: 20,
        "border-width": 1, "border-color": "#fff" } },
      { selector: "edge", style: { width: 1.2, "line-color": "#adb5bd", "target-arrow-color": "#adb5bd",
        "target-arrow-shape": "triangle", "arrow-scale": 0.7, "curve-style": "bezier", label: "data(elabel)",
        "font-size": 7, color: "#667085", "text-rotation": "autorotate", "text-outline-color": "#fff",
        "text-outline-width": 2 } },
      { selector: "edge[type = 'MENTIONS']", style: { "line-style": "dashed", width: 0.8, label: "" } },
      { selector: "edge[type = 'CO_OCCURS']", style: { label: "", "target-arrow-shape": "none" } },
      { selector: "edge.lit", style: { label: "data(elabel)", "line-color": "#e03131", "target-arrow-color": "#e03131",
        width: 2, "z-index": 10 } },
      { selector: "node[?center]", style: { "border-width": 4, "border-color": "#fab005", width: 30, height: 30 } },
      { selector: "node[?answer_source]", style: { "border-width": 4, "border-color": "#fab005" } },
      { selector: "node[?answer]", style: { "border-width": 4, "border-color": "#2f9e44" } },
      { selector: "node:selected", style: { "border-width": 5, "border-color": "#e03131" } },
    ];
    for (const [label, color] of Object.entries(COLORS)) {
      s.push({ selector: `node[label = '${label}']`, style: { "background-color": color, shape: SHAPES[label] } });
    }
    return s;
  }

  function ensureCy() {
    if (cy) return cy;
    if (typeof window.cytoscape !== "function") throw new Error("vendor/cytoscape.min.js did not load");
    cy = window.cytoscape({ container: $("#graph-canvas"), style: style(), wheelSensitivity: 0.3,
      minZoom: 0.1, maxZoom: 4 });
    cy.on("tap", "node", (ev) => showNode(ev.target.id()));
    cy.on("tap", (ev) => { if (ev.target === cy) cy.edges().removeClass("lit"); });
    cy.on("dbltap", "node", (ev) => expand(ev.target.id()));
    return cy;
  }

  const short = (s) => (s.length > 28 ? s.slice(0, 27) + "…" : s);

  function elements(graph) {
    const nodes = graph.nodes.map((n) => ({ group: "nodes",
      data: Object.assign({}, n, { short: short(String(n.name || n.id)) }) }));
    const edges = graph.edges.map((e) => ({ group: "edges",
      data: Object.assign({}, e, { elabel: e.relation || e.rel_type || e.type }) }));
    return nodes.concat(edges);
  }

  /** Add what is new (by id), enrich what is known; returns the added collection. */
  function merge(graph, near) {
    const c = ensureCy();
    const fresh = elements(graph).filter((x) => {
      const known = c.getElementById(x.data.id);
      if (known.nonempty()) {
        for (const [k, v] of Object.entries(x.data)) if (v !== null && v !== undefined && !known.data(k)) known.data(k, v);
        return false;
      }
      return true;
    });
    if (near) {
      const p = near.position();
      for (const x of fresh) if (x.group === "nodes") x.position = { x: p.x + (Math.random() - 0.5) * 80, y: p.y + (Math.random() - 0.5) * 80 };
    }
    return c.add(fresh);
  }

  /** Rings by hop distance from the centre node (the entity, document, sample or question); without a
      centre, a force layout. */
  function layout() {
    const c = ensureCy();
    const center = c.nodes("[?center]");
    let opts;
    if (center.nonempty()) {
      const depth = {};
      c.elements().breadthFirstSearch({ root: center[0], directed: false,
        visit: (v, e, u, i, d) => { depth[v.id()] = d; } });
      const far = Math.max(0, ...Object.values(depth)) + 1;
      opts = { name: "concentric", animate: false, fit: true, padding: 30, minNodeSpacing: 40, spacingFactor: 1.05,
        concentric: (n) => far - (depth[n.id()] === undefined ? far : depth[n.id()]), levelWidth: () => 1 };
    } else {
      opts = { name: "cose", animate: false, nodeRepulsion: () => 40000, idealEdgeLength: () => 90, numIter: 1000,
        fit: true, padding: 40 };
    }
    c.layout(opts).run();
    if (c.zoom() > MAX_FIT_ZOOM) { c.zoom(MAX_FIT_ZOOM); c.center(); }  // a small graph: labels stay readable
  }

  function legend() {
    const counts = {};
    for (const n of cy.nodes()) counts[n.data("label")] = (counts[n.data("label")] || 0) + 1;
    $("#graph-legend").replaceChildren(...Object.entries(counts).map(([label, n]) => el("span", { class: "key" }, [
      el("i", { style: `background:${COLORS[label] || "#999"}` }), label + " " + n])));
  }

  function meta(text, truncated) {
    $("#graph-meta").textContent = `${cy.nodes().length} nodes · ${cy.edges().length} edges` +
      (text ? " · " + text : "") + (truncated ? " · truncated by the limits" : "");
  }

  function params() {
    const p = new URLSearchParams({ depth: $("#graph-depth").value, limit: $("#graph-limit").value || "150" });
    const entry = $("#graph-entry").value;
    if (entry === "entity") p.set("entity", $("#graph-entity").value.trim());
    if (entry === "document") p.set("document", $("#graph-document").value.trim());
    if (entry === "sample") { p.set("dataset", $("#graph-dataset").value.trim()); p.set("sample", $("#graph-sample").value.trim()); }
    return p;
  }

  /** Draw a fresh graph for one entry point (URLSearchParams of GET /graph). */
  async function load(p, what) {
    showError($("#graph-error"), null);
    $("#graph-go").disabled = true;
    try {
      const graph = await api("GET", "/graph?" + p.toString());
      const c = ensureCy();
      c.elements().remove();
      merge(graph);
      layout();
      legend();
      meta(what || describe(graph.entry), graph.truncated);
      const center = c.nodes("[?center]");
      if (center.nonempty()) showNode(center[0].id());
      return graph;
    } catch (e) {
      showError($("#graph-error"), e.message);
      return null;
    } finally {
      $("#graph-go").disabled = false;
    }
  }

  function describe(entry) {
    if (!entry) return "";
    if (entry.entity) return "entity " + entry.entity + (entry.merged_from ? ` (merged into ${entry.id})` : "");
    if (entry.document) return "document " + entry.document;
    if (entry.sample) return `KG sample ${entry.dataset}/${entry.sample}`;
    if (entry.answer) return "evidence of an answer";
    return "";
  }

  /** Merge a node's one-hop neighbourhood into the drawing. */
  async function expand(id) {
    showError($("#graph-error"), null);
    const c = ensureCy();
    const node = c.getElementById(id);
    try {
      const graph = await api("GET", "/graph?" + new URLSearchParams({ node: id, limit: $("#graph-limit").value || "150" }));
      const added = merge(graph, node.nonempty() ? node : null);
      if (added.nodes().length) layout();
      legend();
      meta("expanded " + (node.data("name") || id), graph.truncated);
      return added.nodes().length;
    } catch (e) {
      showError($("#graph-error"), e.message);
      return 0;
    }
  }

  /** The side panel: properties and chunk texts of one node. */
  async function showNode(id) {
    const panel = $("#graph-panel");
    const c = ensureCy();
    c.nodes().unselect();
    c.edges().removeClass("lit");
    c.getElementById(id).select().connectedEdges().addClass("lit");
    const data = c.getElementById(id).data() || {};
    panel.replaceChildren(el("div", { class: "muted", text: "loading " + id + " …" }));
    if (data.label === "Question") {
      panel.replaceChildren(el("span", { class: "badge", text: "Question" }), el("h2", { text: data.name }),
        el("p", { class: "muted", text: "The answer's sources are ringed in gold; click one to light up the edges (entities, seed chunks) that scored it." }));
      return;
    }
    let info;
    try { info = await api("GET", "/graph/node?" + new URLSearchParams({ id, chunks: "5" })); } catch (e) {
      panel.replaceChildren(el("div", { class: "alert error", text: e.message }));
      return;
    }
    const table = el("table", { class: "kv", id: "graph-props" }, [el("tbody")]);
    const props = Object.assign({}, info.properties);
    for (const k of ["rank", "reason", "score"]) if (data[k] !== undefined) props[k] = data[k];
    fillKv(table, props);
    const actions = el("div", { class: "actions wrap" }, [
      el("button", { type: "button", class: "small primary", id: "graph-expand", text: "Expand neighbours",
        onclick: () => expand(id) })]);
    if (info.label === "Entity") {
      actions.append(el("button", { type: "button", class: "small", text: "Centre on it",
        onclick: () => go({ entity: info.properties.id }) }));
    }
    if (info.label === "Chunk" && info.properties.doc_id) {
      actions.append(el("button", { type: "button", class: "small", text: "Its document",
        onclick: () => go({ document: info.properties.doc_id }) }));
    }
    const chunks = (info.chunks || []).map((ch) => el("li", { class: "chunk" }, [
      el("div", { class: "chunk-head", text: (ch.title || ch.doc_id || "") + (ch.seq !== null && ch.seq !== undefined ? " #" + ch.seq : "") }),
      el("div", { class: "chunk-text", text: ch.text || "" })]));
    const triples = (info.triples || []).map((t) => el("li", { text: t.join("  —  ") }));
    panel.replaceChildren(...[
      el("span", { class: "badge", style: `background:${COLORS[info.label] || "#999"};color:#fff`, text: info.label }),
      el("h2", { id: "graph-panel-title", text: data.name || info.properties.name || id }),
      el("div", { class: "muted small-text mono", text: id }),
      actions, table,
      chunks.length ? el("h3", { text: `Text (${chunks.length}${info.properties.chunks_total > chunks.length ? " of " + info.properties.chunks_total : ""})` }) : null,
      chunks.length ? el("ol", { class: "chunks", id: "graph-chunks" }, chunks) : null,
      triples.length ? el("h3", { text: `Triples (${info.properties.triples_total})` }) : null,
      triples.length ? el("ul", { class: "triples" }, triples) : null,
    ].filter(Boolean));
  }

  /** Fill the form from params and draw. */
  function go(p) {
    const q = new URLSearchParams(p);
    if (q.has("entity")) { $("#graph-entry").value = "entity"; $("#graph-entity").value = q.get("entity"); }
    if (q.has("document")) { $("#graph-entry").value = "document"; $("#graph-document").value = q.get("document"); }
    if (q.has("sample")) { $("#graph-entry").value = "sample"; $("#graph-dataset").value = q.get("dataset") || "";
      $("#graph-sample").value = q.get("sample"); }
    syncEntry();
    if (q.has("answer")) return load(new URLSearchParams({ answer: q.get("answer"), limit: $("#graph-limit").value || "150" }), "why this answer");
    return load(params());
  }

  function syncEntry() {
    const entry = $("#graph-entry").value;
    for (const label of view.querySelectorAll("label.entry")) label.hidden = label.dataset.entry !== entry;
  }

  let suggestTimer = null;
  function suggestEntities() {
    clearTimeout(suggestTimer);
    const q = $("#graph-entity").value.trim();
    if (!q) return;
    suggestTimer = setTimeout(async () => {
      try {
        const data = await api("GET", "/entities/search?" + new URLSearchParams({ q, limit: "10" }));
        $("#graph-entity-list").replaceChildren(...data.entities.map((e) => el("option", { value: e.name,
          label: `${e.freq || 0} mentions` })));
      } catch (_) { /* suggestions are optional */ }
    }, 150);
  }

  const suggestSamples = sampleSuggester($("#graph-dataset"), $("#graph-sample"), $("#graph-samples"));

  $("#graph-entry").addEventListener("change", syncEntry);
  $("#graph-entity").addEventListener("input", suggestEntities);
  $("#graph-sample").addEventListener("input", suggestSamples);
  $("#graph-sample").addEventListener("focus", suggestSamples);
  $("#graph-form").addEventListener("submit", (ev) => { ev.preventDefault(); load(params()); });
  $("#graph-fit").addEventListener("click", () => cy && cy.fit(undefined, 30));
  $("#graph-clear").addEventListener("click", () => { if (cy) cy.elements().remove(); $("#graph-meta").textContent = "";
    $("#graph-legend").replaceChildren(); });

  views.graph = {
    onShow() {
      const q = (location.hash.split("?")[1] || "");
      if (q && q !== shownHash) { shownHash = q; go(q); return; }
      if (cy) cy.resize();
    },
  };
  window.NeoRAG.graph = { load, expand, showNode, go, get cy() { return cy; },
    showAnswer(id) { location.hash = "#graph?" + new URLSearchParams({ answer: id }).toString(); } };
})();
