/* KG explorer: KG-R1 actions through POST /retrieve with a JSON list body. Shows the exact request and
   response. get_relations for an entity; clicking a relation asks for its tail and head entities. */
"use strict";

(function () {
  const { $, el, api, showError, views, sampleSuggester } = window.NeoRAG;

  let selectedRelation = null;

  function ctx() {
    return {
      dataset_name: $("#kg-dataset").value.trim(),
      sample_id: $("#kg-sample").value.trim(),
      entity_id: $("#kg-entity").value.trim(),
    };
  }

  /** POST /retrieve with a list body; shows the exact JSON sent and received. */
  async function retrieve(items) {
    const reqText = JSON.stringify(items, null, 2);
    $("#kg-request").textContent = reqText;
    $("#kg-response").textContent = "…";
    $("#kg-response-meta").textContent = "";
    showError($("#kg-error"), null);
    const t0 = performance.now();
    try {
      const data = await api("POST", "/retrieve", items);
      $("#kg-response").textContent = JSON.stringify(data, null, 2);
      $("#kg-response-meta").textContent = "200 · " + Math.round(performance.now() - t0) + " ms";
      if (!Array.isArray(data) || data.length !== items.length) {
        throw new Error("Expected a list of " + items.length + " item(s) in the response.");
      }
      return data;
    } catch (e) {
      if (e.body !== undefined) {
        $("#kg-response").textContent = typeof e.body === "string" ? e.body : JSON.stringify(e.body, null, 2);
        $("#kg-response-meta").textContent = String(e.status || "error");
      } else if ($("#kg-response").textContent === "…") {
        $("#kg-response").textContent = "—";
      }
      showError($("#kg-error"), e.message);
      return null;
    }
  }

  /** The list under `key` in one response item, or throws its error message. */
  function listOf(item, key) {
    if (item.error) throw new Error(item.error);
    const first = (item.results || [])[0] || {};
    if (first.error) throw new Error(first.error);
    return first[key] || [];
  }

  function chip(text, cls, onclick, selected) {
    return el("li", {}, [el("button", { type: "button", class: cls + (selected ? " selected" : ""), title: text,
      text, onclick })]);
  }

  async function loadRelations() {
    const c = ctx();
    if (!c.dataset_name || !c.sample_id || !c.entity_id) {
      showError($("#kg-error"), "Dataset, sample id and entity are all required.");
      return;
    }
    selectedRelation = null;
    $("#kg-entities-card").hidden = true;
    $("#kg-go").disabled = true;
    const data = await retrieve([Object.assign({ action_type: "get_relations" }, c)]);
    $("#kg-go").disabled = false;
    if (!data) return;
    let rels;
    try { rels = listOf(data[0], "relations"); } catch (e) { showError($("#kg-error"), e.message); rels = []; }
    $("#kg-rel-entity").textContent = c.entity_id;
    $("#kg-rel-count").textContent = "(" + rels.length + ")";
    $("#kg-relations").replaceChildren(...rels.map((r) => chip(r, "relation", () => loadEntities(r))));
    if (!rels.length && !$("#kg-error").textContent) {
      showError($("#kg-error"), "No relations found for “" + c.entity_id + "” in " + c.dataset_name + "/" + c.sample_id + ".");
    }
  }

  async function loadEntities(relation) {
    const c = ctx();
    selectedRelation = relation;
    for (const b of document.querySelectorAll("#kg-relations button")) {
      b.classList.toggle("selected", b.textContent === relation);
    }
    const data = await retrieve([
      Object.assign({ action_type: "get_tail_entities" }, c, { relation }),
      Object.assign({ action_type: "get_head_entities" }, c, { relation }),
    ]);
    if (!data) return;
    let tails = [];
    let heads = [];
    try { tails = listOf(data[0], "tail_entities"); heads = listOf(data[1], "head_entities"); } catch (e) {
      showError($("#kg-error"), e.message);
    }
    $("#kg-selected-relation").textContent = relation;
    $("#kg-tail-of").textContent = c.entity_id;
    $("#kg-head-of").textContent = c.entity_id;
    $("#kg-tail-count").textContent = "(" + tails.length + ")";
    $("#kg-head-count").textContent = "(" + heads.length + ")";
    const explore = (name) => () => { $("#kg-entity").value = name; loadRelations(); };
    $("#kg-tails").replaceChildren(...tails.map((t) => chip(t, "entity tail", explore(t))));
    $("#kg-heads").replaceChildren(...heads.map((h) => chip(h, "entity head", explore(h))));
    $("#kg-entities-card").hidden = false;
  }

  const plural = (n, word) => Number(n).toLocaleString("en-US") + " " + word + (n === 1 ? "" : "s");

  /** Loaded datasets from GET /actions (fills the dataset list). */
  async function loadDatasets() {
    let data;
    try { data = await api("GET", "/actions"); } catch (e) { $("#kg-loaded").textContent = e.message; return; }
    const sets = data.datasets || [];
    $("#kg-datasets").replaceChildren(...sets.map((d) => el("option", { value: d.name,
      label: d.samples + " samples" })));
    $("#kg-loaded").textContent = sets.length
      ? "Loaded: " + sets.map((d) => d.name + " (" + plural(d.samples, "sample") + ", " + plural(d.triples, "triple") + ")").join(", ")
      : "No KG dataset loaded yet: `neorag kg load <RoG parquet/JSON or subgraphs folder> --dataset webqsp`.";
    const ds = $("#kg-dataset");
    if (sets.length && !sets.some((d) => d.name === ds.value)) ds.value = sets[0].name;
  }

  /** Suggest sample ids of the dataset as the user types (GET /ui/api/kg/samples). */
  const suggestSamples = sampleSuggester($("#kg-dataset"), $("#kg-sample"), $("#kg-samples"),
    (s) => s.n_triples === null || s.n_triples === undefined ? "" : s.n_triples + " triples");

  let shownSample = "";
  let samplePromise = Promise.resolve();
  /** The sample's question, topic and answer entities (GET /ui/api/kg/sample); prefills the entity.
      Concurrent calls for the same sample share one request. */
  function loadSample() {
    const c = ctx();
    const key = c.dataset_name + "/" + c.sample_id;
    if (!c.dataset_name || !c.sample_id || key === shownSample) return samplePromise;
    shownSample = key;
    samplePromise = fetchSample(c);
    return samplePromise;
  }

  async function fetchSample(c) {
    const card = $("#kg-sample-card");
    let info;
    try {
      info = await api("GET", "/ui/api/kg/sample?" + new URLSearchParams({ dataset: c.dataset_name,
        sample_id: c.sample_id }).toString());
    } catch (e) {
      card.hidden = true;
      if (e.status === 404) showError($("#kg-error"), e.message.replace(/^HTTP 404: /, ""));
      return;
    }
    showError($("#kg-error"), null);
    $("#kg-question").textContent = info.question || "(no question stored)";
    const pick = (name) => () => { $("#kg-entity").value = name; loadRelations(); };
    $("#kg-topics").replaceChildren(...(info.q_entity || []).map((n) => chip(n, "entity topic", pick(n))));
    $("#kg-answers").replaceChildren(...(info.a_entity || info.answers || []).map((n) => chip(n, "entity answer", pick(n))));
    $("#kg-sample-size").textContent = info.n_triples ? info.n_triples + " triples" : "";
    card.hidden = false;
    if (!$("#kg-entity").value.trim() && (info.q_entity || []).length) $("#kg-entity").value = info.q_entity[0];
  }

  $("#kg-sample").addEventListener("input", suggestSamples);
  $("#kg-sample").addEventListener("focus", suggestSamples);
  $("#kg-sample").addEventListener("change", loadSample);
  $("#kg-dataset").addEventListener("change", () => { shownSample = ""; suggestSamples(); loadSample(); });
  $("#kg-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    await loadSample();
    loadRelations();
  });

  views.kg = { onShow() { loadDatasets(); if (!$("#kg-sample").value) $("#kg-sample").focus(); } };
  window.NeoRAG.kg = { retrieve, get selectedRelation() { return selectedRelation; } };
})();
