/* Entities view: review duplicate-entity proposals (GET /entities/duplicates) and merge them
   (POST /entities/merge). Each proposal shows both names, the score and its evidence (name rule, name and
   context similarity, chunks shared, where each is mentioned); the person picks the entity to keep.
   "Not duplicates" hides a pair in this browser (localStorage). */
"use strict";

(function () {
  const { $, el, api, showError, views } = window.NeoRAG;
  const DISMISSED = "neorag.entities.dismissed";

  const view = $("#view-entities");
  view.append(
    el("h1", { text: "Entities" }),
    el("p", { class: "hint", text: "Duplicate entities proposed by name similarity, name and context embeddings. " +
      "Merging moves every mention, recounts co-occurrences and keeps the merged name as an alias (a later " +
      "ingest of that name lands on the entity you kept)." }),
    el("form", { id: "dups-form", class: "card row wrap", autocomplete: "off" }, [
      el("label", {}, ["Lowest score", el("input", { type: "number", id: "dups-min", step: "0.05", min: "0", max: "1",
        placeholder: "server default" })]),
      el("label", {}, ["At most", el("input", { type: "number", id: "dups-limit", value: "50", min: "1", max: "500" })]),
      el("label", { class: "check" }, [el("input", { type: "checkbox", id: "dups-show-dismissed" }), "show dismissed"]),
      el("div", { class: "actions" }, [el("button", { type: "submit", id: "dups-go", class: "primary",
        text: "Find duplicates" })]),
    ]),
    el("div", { class: "alert error", id: "dups-error", hidden: true }),
    el("div", { id: "dups-meta", class: "muted" }),
    el("ol", { id: "dups-list", class: "dups" }),
  );

  const key = (p) => [p.a.id, p.b.id].sort().join("\u0000");
  const dismissed = () => new Set(JSON.parse(localStorage.getItem(DISMISSED) || "[]"));
  function dismiss(p) {
    const set = dismissed();
    set.add(key(p));
    localStorage.setItem(DISMISSED, JSON.stringify(Array.from(set)));
  }

  const pct = (x) => (x === null || x === undefined ? "—" : Math.round(x * 100) + "%");

  function side(e, chunks, name, checked) {
    return el("label", { class: "dup-side" + (checked ? " keep" : "") }, [
      el("span", { class: "row" }, [el("input", { type: "radio", name, value: e.id, checked }),
        el("b", { class: "dup-name", text: e.name }), el("span", { class: "muted", text: `${e.freq} mention${e.freq === 1 ? "" : "s"}` })]),
      el("span", { class: "muted small-text", text: "key: " + e.id +
        (e.aliases && e.aliases.length ? " · forms: " + e.aliases.slice(0, 5).join(", ") : "") }),
      el("span", { class: "muted small-text", text: "in: " + (chunks || []).map((c) => c.title || c.id).join(" · ") }),
      el("a", { href: "#graph?" + new URLSearchParams({ entity: e.id }).toString(), class: "small-text", text: "graph" }),
    ]);
  }

  function card(p, i) {
    const ev = p.evidence;
    const name = "keep-" + i;
    const li = el("li", { class: "card dup", "data-a": p.a.id, "data-b": p.b.id });
    const status = el("div", { class: "dup-status muted" });
    const mergeBtn = el("button", { type: "button", class: "primary small dup-merge", text: "Merge" });
    const noBtn = el("button", { type: "button", class: "small dup-dismiss", text: "Not duplicates" });
    li.append(
      el("div", { class: "row between" }, [
        el("span", { class: "dup-score", title: "score", text: pct(p.score) }),
        el("span", { class: "badge", text: ev.rule.replace(/_/g, " ") }),
        el("span", { class: "muted small-text", text: `name ${pct(ev.name)} · name embedding ${pct(ev.name_embedding)} · ` +
          `context ${pct(ev.context)} · ${ev.shared_chunks} shared chunk(s)` }),
      ]),
      el("div", { class: "dup-sides" }, [side(p.a, ev.a_chunks, name, p.suggested_target === p.a.id), el("span", { class: "dup-vs", text: "≡?" }),
        side(p.b, ev.b_chunks, name, p.suggested_target === p.b.id)]),
      el("div", { class: "row" }, [mergeBtn, noBtn, status]),
    );
    li.addEventListener("change", () => {
      for (const s of li.querySelectorAll(".dup-side")) s.classList.toggle("keep", s.querySelector("input").checked);
    });
    mergeBtn.addEventListener("click", async () => {
      const target = li.querySelector(`input[name="${name}"]:checked`).value;
      const source = target === p.a.id ? p.b.id : p.a.id;
      mergeBtn.disabled = noBtn.disabled = true;
      status.textContent = "merging…";
      try {
        const r = await api("POST", "/entities/merge", { target, sources: [source] });
        li.classList.add("merged");
        status.textContent = r.merged.length
          ? `merged “${source}” into “${r.target.name}” (key ${r.target.id}): ${r.mentions_moved} mention(s) moved, now ${r.target.freq} mentions`
          : `already merged into “${r.target.name}”`;
      } catch (e) {
        mergeBtn.disabled = noBtn.disabled = false;
        status.textContent = "";
        li.append(el("div", { class: "alert error", text: e.message }));
      }
    });
    noBtn.addEventListener("click", () => { dismiss(p); li.remove(); });
    return li;
  }

  async function find() {
    showError($("#dups-error"), null);
    const q = new URLSearchParams({ limit: $("#dups-limit").value || "50" });
    if ($("#dups-min").value !== "") q.set("min_score", $("#dups-min").value);
    $("#dups-go").disabled = true;
    $("#dups-meta").textContent = "comparing entities… (the first run embeds their names)";
    try {
      const data = await api("GET", "/entities/duplicates?" + q.toString());
      const hidden = $("#dups-show-dismissed").checked ? new Set() : dismissed();
      const pairs = data.pairs.filter((p) => !hidden.has(key(p)));
      $("#dups-list").replaceChildren(...pairs.map(card));
      $("#dups-meta").textContent = `${pairs.length} proposal(s) at score ≥ ${data.min_score} among ` +
        `${data.entities_compared} entities (${data.pairs.length - pairs.length} dismissed here)`;
    } catch (e) {
      $("#dups-meta").textContent = "";
      showError($("#dups-error"), e.message);
    } finally {
      $("#dups-go").disabled = false;
    }
  }

  $("#dups-form").addEventListener("submit", (ev) => { ev.preventDefault(); find(); });
  views.entities = { onShow() { if (!$("#dups-list").children.length) $("#dups-min").focus(); } };
  window.NeoRAG.entities = { find };
})();
