// aqgr web page: search filters and facets. The filter form sits in step 2; a result's facets
// (counts over the ranked candidates) and the active filters are shown above the precedents.
// Clicking a facet value (or pressing Enter on it) narrows the search to it and searches again;
// each active filter has a button that removes it. Every value is written with textContent,
// so a hostile court or judge name is shown as text, never run.
"use strict";

const FILTER_FIELDS = ["court", "decided_from", "decided_to", "judge", "kind", "statute", "disposal"];
const FILTER_LABELS = {
  court: "Court", court_level: "Court level", decided_from: "Decided from", decided_to: "Decided to",
  judge: "Judge", kind: "Kind", statute: "Statute", disposal: "Disposal",
};
const FACET_TITLES = [["court", "Court"], ["decade", "Decade"], ["year", "Year"], ["statute", "Statute"],
  ["section", "Section"], ["judge", "Judge"], ["kind", "Kind of judgment"], ["disposal", "Disposal"]];
const FACET_VALUES_SHOWN = 8;

const aqgrFilters = (() => {
  const field = (name) => document.getElementById(`filter-${name}`);

  // The filters of the form as the API takes them (empty fields left out; null for none).
  function current() {
    const out = {};
    for (const name of FILTER_FIELDS) {
      const input = field(name);
      const value = input ? input.value.trim() : "";
      if (value) out[name] = value;
    }
    return Object.keys(out).length ? out : null;
  }

  function set(name, value) {
    const input = field(name);
    if (input) input.value = value;
  }

  // A facet value as the filter fields it narrows to.
  function narrowing(facet, value) {
    if (facet === "year") return { decided_from: value, decided_to: value };
    if (facet === "decade") {
      const start = parseInt(value, 10);
      return { decided_from: String(start), decided_to: String(start + 9) };
    }
    if (facet === "section") return { statute: value };
    return { [facet]: value };
  }

  function make(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function renderActive(result, rerun) {
    const box = document.getElementById("active-filters");
    box.replaceChildren();
    const active = result.filters ? Object.entries(result.filters).filter(([, v]) => v !== null && v !== undefined) : [];
    box.hidden = !active.length;
    if (!active.length) return;
    box.append(make("span", { class: "muted" }, "Narrowed to: "));
    const list = make("ul", { class: "chips" });
    for (const [name, value] of active) {
      const item = make("li");
      const label = `${FILTER_LABELS[name] || name}: ${value}`;
      const remove = make("button", { type: "button", class: "chip", "aria-label": `Remove the filter ${label}` }, `${label} ×`);
      remove.addEventListener("click", () => { set(name, ""); rerun(); });
      item.append(remove);
      list.append(item);
    }
    box.append(list);
  }

  function renderFacets(result, rerun) {
    const box = document.getElementById("facets");
    box.replaceChildren();
    const facets = result.facets;
    if (!facets || !facets.candidates) { box.hidden = true; return; }
    box.hidden = false;
    box.append(make("h3", { id: "facets-title" }, `Among the ${facets.candidates} judgments ranked`));
    for (const [name, title] of FACET_TITLES) {
      const counts = facets[name] || [];
      if (!counts.length) continue;
      const group = make("div", { class: "facet", role: "group", "aria-label": title });
      group.append(make("h4", {}, title));
      const list = make("ul");
      for (const { value, count } of counts.slice(0, FACET_VALUES_SHOWN)) {
        const item = make("li");
        const button = make("button", { type: "button", class: "facet-value", "data-facet": name,
          "aria-label": `Narrow to ${title.toLowerCase()} ${value} (${count} of the ranked judgments)` });
        button.append(make("span", { class: "facet-label" }, value), make("span", { class: "facet-count" }, String(count)));
        button.addEventListener("click", () => {
          for (const [key, v] of Object.entries(narrowing(name, value))) set(key, v);
          rerun();
        });
        item.append(button);
        list.append(item);
      }
      group.append(list);
      box.append(group);
    }
  }

  function render(result, rerun) {
    renderActive(result, rerun);
    renderFacets(result, rerun);
  }

  function clear() {
    for (const name of FILTER_FIELDS) set(name, "");
  }

  return { current, render, clear };
})();
