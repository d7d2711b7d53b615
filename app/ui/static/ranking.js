/* Ranking preview view: POST /ranking/preview -> a sortable table of the scoring breakdown. */
"use strict";

(function () {
  const { $, $$, el, fmtNum, api, showError, views } = window.NeoRAG;

  const table = $("#rank-table");
  let items = [];
  let sortKey = "rank";
  let sortDir = 1; // 1 ascending, -1 descending

  function value(item, key) {
    if (key === "final_score" && (item.final_score === undefined || item.final_score === null)) {
      return item.final !== undefined ? item.final : item.composite_score;
    }
    if (key === "composite_score" && item.composite_score === undefined) return item.composite;
    return item[key];
  }

  function score(v) {
    return typeof v === "number" && isFinite(v) ? v.toFixed(4) : fmtNum(v);
  }

  function signed(v) {
    return (v >= 0 ? "+" : "") + v.toFixed(2);
  }

  // The multi-hop reranker's contributions: the three largest shares in the cell, all of them on hover.
  function why(item) {
    const parts = Object.entries(item.contributions || {}).filter(([k]) => k !== "bias");
    if (!parts.length) return el("td", { class: "why", text: "—" });
    const top = parts.slice().sort((a, b) => Math.abs(b[1]) - Math.abs(a[1])).slice(0, 3);
    const all = ["bias " + signed(item.contributions.bias)].concat(parts.map(([k, v]) => k + " " + signed(v)));
    return el("td", { class: "why", title: all.join(" · ") },
      top.map(([k, v]) => el("div", { class: v >= 0 ? "up" : "down", text: k + " " + signed(v) })));
  }

  function compare(a, b) {
    const type = ($('th[data-key="' + sortKey + '"]', table) || {}).dataset?.type || "str";
    const va = value(a, sortKey);
    const vb = value(b, sortKey);
    const na = va === null || va === undefined;
    const nb = vb === null || vb === undefined;
    if (na || nb) return na === nb ? 0 : na ? 1 : -1; // empty values last whatever the direction
    if (type === "num") return (Number(va) - Number(vb)) * sortDir;
    return String(va).localeCompare(String(vb)) * sortDir;
  }

  function render() {
    for (const th of $$("th", table)) {
      th.classList.toggle("sorted-asc", th.dataset.key === sortKey && sortDir === 1);
      th.classList.toggle("sorted-desc", th.dataset.key === sortKey && sortDir === -1);
    }
    const maxFinal = Math.max(1e-9, ...items.map((i) => Number(value(i, "final_score")) || 0));
    const rows = items.slice().sort(compare).map((it) => {
      const num = (key) => el("td", { class: "num", "data-key": key, text: score(value(it, key)) });
      const final = num("final_score");
      const f = Number(value(it, "final_score"));
      final.append(el("span", { class: "score-track" }, [el("span", { class: "score-bar",
        style: "width:" + (isFinite(f) && f > 0 ? Math.round(100 * f / maxFinal) : 0) + "%" })]));
      return el("tr", { "data-id": it.id }, [
        el("td", { class: "num", "data-key": "rank", text: it.rank }),
        el("td", { class: "id", title: it.id }, [el("div", { class: "sid", text: it.id }),
          it.title ? el("div", { class: "title", text: it.title + (it.depth ? " · depth " + it.depth : "") }) : null]),
        el("td", { "data-key": "reason" }, [el("span", { class: "badge " + (it.reason || ""), text: it.reason || "—" })]),
        el("td", { "data-key": "rel_type", text: it.rel_type ? it.rel_type + (it.rel_conf != null ? " (" + fmtNum(it.rel_conf, 2) + ")" : "") : "—" }),
        num("score_raw"), num("base_norm"), num("bonus"), num("composite_score"), final, why(it),
      ]);
    });
    table.tBodies[0].replaceChildren(...rows);
  }

  async function preview(q) {
    showError($("#rank-error"), null);
    $("#rank-go").disabled = true;
    try {
      const data = await api("POST", "/ranking/preview", { question: q });
      items = (data.items || []).map((it, i) => Object.assign({ rank: i + 1 }, it));
      sortKey = "rank"; sortDir = 1;
      const meta = $("#rank-meta");
      meta.replaceChildren(items.length + " item(s) for “" + (data.question || q) + "”");
      if (data.degraded) meta.append(" ", el("span", { class: "badge degraded", text: "degraded" }));
      if (data.graph_mode) {  // the graph stage that ranked (NEORAG_RETRIEVAL_GRAPH_MODE=auto picks it per corpus)
        meta.append(" ", el("span", { class: "badge graph-mode", text: "ranked by " + data.graph_mode,
          title: "graph stage: multihop (feature reranker) or bonus (graph bonuses); /diagnostics shows why" }));
      }
      $("#rank-card").hidden = false;
      render();
    } catch (e) {
      showError($("#rank-error"), e.message);
    } finally {
      $("#rank-go").disabled = false;
    }
  }

  for (const th of $$("th[data-key]", table)) {
    th.addEventListener("click", () => {
      if (sortKey === th.dataset.key) sortDir = -sortDir;
      else { sortKey = th.dataset.key; sortDir = th.dataset.type === "num" && sortKey !== "rank" ? -1 : 1; }
      render();
    });
  }
  $("#rank-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = $("#rank-question").value.trim();
    if (q) preview(q);
  });

  views.ranking = { onShow() { $("#rank-question").focus(); } };
})();
