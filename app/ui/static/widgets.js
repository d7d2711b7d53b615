/* NeoRAG UI widgets shared by several views (loaded right after app.js, before the views): progress bars,
   the stream token for EventSource, and the debounced sample-id suggestions. Plain browser JavaScript
   (no build step); adds its helpers to window.NeoRAG. */
"use strict";

(function () {
  const { el, api, askForKey } = window.NeoRAG;

  /** A progress bar element (div.progress with a .fill, and a .label when ``withLabel``). */
  function progressBar(name, withLabel) {
    return el("div", { class: "progress", role: "progressbar", "aria-label": name + " progress",
      "aria-valuemin": "0", "aria-valuemax": "100", "aria-valuenow": "0" },
      [el("div", { class: "fill" }), withLabel ? el("span", { class: "label", text: "" }) : null]);
  }

  /** Set a progress bar to ``pct`` (clamped to 0..100). opts: label (default "NN%"), complete (default
      pct >= 100), failed (left as it is when not given), indeterminate. */
  function setBar(node, pct, opts) {
    const o = opts || {};
    const p = Math.max(0, Math.min(100, Math.round(pct)));
    node.setAttribute("aria-valuenow", String(p));
    node.querySelector(".fill").style.width = p + "%";
    node.classList.toggle("complete", o.complete === undefined ? p >= 100 : Boolean(o.complete));
    if (o.failed !== undefined) node.classList.toggle("failed", Boolean(o.failed));
    node.classList.toggle("indeterminate", Boolean(o.indeterminate));
    const label = node.querySelector(".label");
    if (label) label.textContent = o.label || p + "%";
  }

  /** A short-lived token for an EventSource on GET /ingest/stream when the server has API keys (EventSource
      sends no headers); asks for a write key once (``reason``) when the stored key only reads. Null without keys. */
  async function streamToken(reason) {
    const mint = () => api("POST", "/auth/stream-token", { path: "/ingest/stream" });
    let data = await mint();
    if (data && data.level === "read" && await askForKey(reason)) data = await mint();
    return data && data.token;
  }

  /** A debounced handler that fills the datalist ``list`` with the sample ids of the dataset typed in
      ``dataset`` that start with what is typed in ``sample`` (GET /ui/api/kg/samples); ``label(sample)``
      optionally labels each option. Suggestions are optional: errors are ignored. */
  function sampleSuggester(dataset, sample, list, label) {
    let timer = null;
    return function suggestSamples() {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const query = new URLSearchParams({ dataset: dataset.value.trim(), prefix: sample.value.trim(),
          limit: "50" });
        if (!query.get("dataset")) return;
        try {
          const data = await api("GET", "/ui/api/kg/samples?" + query.toString());
          list.replaceChildren(...(data.samples || []).map((s) => el("option", { value: s.sample_id,
            label: label ? label(s) : undefined })));
        } catch (_) { /* suggestions are optional */ }
      }, 150);
    };
  }

  Object.assign(window.NeoRAG, { progressBar, setBar, streamToken, sampleSuggester });
})();
