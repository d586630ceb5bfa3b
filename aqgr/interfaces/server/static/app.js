// aqgr web page: facts -> candidate legal questions (top 3 pre-selected) -> results per question.
// Plain JavaScript, no build step, no external requests: everything comes from this server's /api/.
"use strict";

const OFFLINE_ENGINES = new Set(["harvest.v1", "evidence.v1", "evidence.v2", "extractive.v1", "hashing.v1", "minilm-l6.v1"]);
const $ = (id) => document.getElementById(id);
const state = { facts: "", result: null };

function apiKey() { return sessionStorage.getItem("aqgr-api-key") || ""; }

async function api(path, body) {
  const headers = { "Accept": "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (apiKey()) headers["X-API-Key"] = apiKey();
  const response = await fetch(path, { method: body === undefined ? "GET" : "POST", headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) {
    if (response.status === 401) $("key-section").hidden = false;
    const detail = data && data.detail ? data.detail : `the server answered ${response.status}`;
    const error = new Error(detail);
    error.status = response.status;
    throw error;
  }
  return data;
}

function showError(message) {
  const box = $("error");
  if (!message) { box.hidden = true; box.textContent = ""; return; }
  box.textContent = message;
  box.hidden = false;
}

function busy(button, indicator, on) {
  button.disabled = on;
  indicator.hidden = !on;
}

function el(tag, attrs = {}, text) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

// ------------------------------------------------------------------ step 2: questions
let questionCounter = 0;

function addQuestion(text, checked, source) {
  const n = ++questionCounter;
  const item = el("li");
  const box = el("input", { type: "checkbox", id: `q-check-${n}`, "aria-label": `Use question ${n}` });
  box.checked = checked;
  const area = el("textarea", { id: `q-text-${n}`, rows: "2", maxlength: "1000", "aria-label": `Question ${n} (editable)` });
  area.value = text;
  area.addEventListener("input", () => { box.checked = area.value.trim().length > 0; sync(); autosize(area); });
  const sync = () => item.classList.toggle("selected", box.checked);
  box.addEventListener("change", sync);
  item.append(box, area);
  if (source) item.append(el("span", { class: "source" }, source));
  sync();
  $("questions").append(item);
  autosize(area);
  return area;
}

function autosize(area) {
  area.style.height = "auto";
  area.style.height = `${area.scrollHeight + 2}px`;
}

function chosenQuestions() {
  return [...$("questions").querySelectorAll("li")]
    .filter((li) => li.querySelector("input[type=checkbox]").checked)
    .map((li) => li.querySelector("textarea").value.trim())
    .filter((q) => q.length > 0);
}

async function suggest(event) {
  event.preventDefault();
  showError(null);
  const facts = $("facts").value.trim();
  if (!facts) { showError("Type the facts first."); $("facts").focus(); return; }
  busy($("suggest"), $("facts-busy"), true);
  try {
    const data = await api("/api/questions", { facts });
    state.facts = facts;
    $("questions").replaceChildren();
    questionCounter = 0;
    const pre = new Set(data.preselected);
    data.candidates.forEach((c, i) => addQuestion(c.text, pre.has(i), c.source_judgment_id ? `suggested by ${c.source_judgment_id}` : ""));
    $("questions-section").hidden = false;
    $("results-section").hidden = true;
    const first = $("questions").querySelector("input[type=checkbox]");
    if (first) first.focus();
    else showError("No candidate question came out of these facts: add your own question below.");
  } catch (error) {
    showError(error.message);
  } finally {
    busy($("suggest"), $("facts-busy"), false);
  }
}

function addOwnQuestion() {
  const input = $("new-question");
  const text = input.value.trim();
  if (!text) { input.focus(); return; }
  addQuestion(text, true, "your question");
  input.value = "";
  input.focus();
}

// ------------------------------------------------------------------ step 3: results
function engineLabel(name) { return OFFLINE_ENGINES.has(name) ? `${name} (offline)` : name; }

function renderEngines(result) {
  const e = result.engines;
  const total = result.timings_ms && result.timings_ms.total !== undefined ? `; ${Math.round(result.timings_ms.total)} ms` : "";
  $("engines").textContent = `Answered by: questions ${engineLabel(e.questions)}, explanations ${engineLabel(e.explainer)}, summaries ${engineLabel(e.summarizer)}, embeddings ${engineLabel(e.embedder)}${total}.`;
  const guard = $("guard");
  if (result.dropped_not_in_archive > 0) {
    guard.textContent = `Citation guard: ${result.dropped_not_in_archive} judgment(s) named by an engine are not in the archive and were dropped.`;
    guard.className = "guard dropped";
  } else {
    guard.textContent = "Citation guard: every judgment below is in the archive; nothing was dropped.";
    guard.className = "guard muted";
  }
  if (Array.isArray(result.notes) && result.notes.length) {  // e.g. a model failed and the offline engine answered
    guard.textContent += ` ${result.notes.join(" ")}`;
  }
}

function scoreClass(score) { return score >= 8 ? "score high" : score <= 3 ? "score low" : "score"; }

function renderHit(hit, questions) {
  const node = $("hit-template").content.firstElementChild.cloneNode(true);
  node.id = `hit-${hit.judgment_id}`;
  node.querySelector(".parties").textContent = hit.parties;
  const score = node.querySelector(".score");
  score.textContent = `${hit.score}/10`;
  score.className = scoreClass(hit.score);
  score.setAttribute("aria-label", `relevance score ${hit.score} out of 10`);
  node.querySelector(".meta").textContent = [hit.case_number, hit.court, hit.date].filter(Boolean).join(" · ") || hit.judgment_id;
  node.querySelector(".issue").textContent = hit.legal_issue;
  node.querySelector(".reason").textContent = hit.reason;
  pinLink(node.querySelector(".issue"), hit, hit.legal_issue_at);
  pinLink(node.querySelector(".reason"), hit, hit.reason_at);
  const all = hit.questions.map((i) => `Q${i + 1}`);
  let also = all.length ? `Retrieved for ${all.join(", ")}.` : "Retrieved from the facts alone.";
  const citing = hit.cited_by || [];
  if (citing.length) {  // precedents referred: judgments ranked for these facts cite it
    also += ` Cited by ${citing.length} of the judgments found for these facts (${citing.slice(0, 3).join(", ")}${citing.length > 3 ? ", ..." : ""}).`;
  }
  if (hit.sections && hit.sections.length) {  // the archive's correspondence table: the old and the new code's sections
    also += ` Sections: ${hit.sections.join("; ")}.`;
  }
  node.querySelector(".also").textContent = also;
  for (const w of hit.treatment_warnings || []) {  // a later judgment of the archive overruled or doubted it
    const flag = el("p", { class: "treatment-warning", role: "alert" });
    flag.append(el("strong", {}, `Warning: ${w.treatment} by ${w.parties} [${w.judgment_id}]${w.date ? `, ${w.date}` : ""}: `),
                el("q", {}, w.quote));
    if (w.dissent) {  // two treatment engines read it differently: the more severe label stands
      flag.append(el("br"), el("small", {}, `The treatment engines disagreed (${w.dissent}): the more severe label stands.`));
    }
    node.querySelector(".meta").after(flag);
  }
  const open = node.querySelector(".open");
  open.setAttribute("aria-label", `Open the summary and text of ${hit.parties}`);
  open.addEventListener("click", () => openJudgment(hit, open));
  return node;
}

// "para 12": where the quoted explanation stands in the judgment; opens the text there, highlighted.
function pinLabel(pin) {
  if (!pin || !pin.located) return null;
  return pin.paragraph !== null && pin.paragraph !== undefined ? `para ${pin.paragraph}` : `chars ${pin.start}-${pin.end}`;
}

function pinHash(judgmentId, pin) { return `#judgment=${encodeURIComponent(judgmentId)}&at=${pin.start}-${pin.end}`; }

function pinLink(dd, hit, pin) {
  const label = pinLabel(pin);
  if (!label) return;
  const link = el("a", { href: pinHash(hit.judgment_id, pin), class: "pin", "aria-label": `${label}: open the judgment text at this passage` }, label);
  link.addEventListener("click", (e) => {
    e.preventDefault();
    history.replaceState(null, "", pinHash(hit.judgment_id, pin));
    openJudgment(hit, link, pin);
  });
  dd.append(" ", link);
}

function renderRef(hit) {
  const item = el("li", { class: "ref" });
  const link = el("a", { href: `#hit-${hit.judgment_id}` }, hit.parties);
  link.addEventListener("click", (e) => {
    e.preventDefault();
    const card = document.getElementById(`hit-${hit.judgment_id}`);
    card.scrollIntoView({ block: "start" });
    card.querySelector("button.open").focus();
  });
  item.append(link, el("span", { class: scoreClass(hit.score) }, `${hit.score}/10`), el("span", { class: "muted" }, " (shown above)"));
  return item;
}

function renderResults(result) {
  state.result = result;
  renderEngines(result);
  aqgrFilters.render(result, () => $("questions-form").requestSubmit());  // filters.js: active filters, facets
  const root = $("results");
  root.replaceChildren();
  // Each question lists the hits retrieved for it, best first; a hit is shown in full once
  // (under its first question) and referred to under the others.
  const groups = result.questions.map((q, i) => ({ title: q, label: `Q${i + 1}`, hits: result.hits.filter((h) => h.questions.includes(i)) }));
  const factsOnly = result.hits.filter((h) => !h.questions.length);
  if (factsOnly.length) groups.push({ title: "Found from the facts alone", label: "", hits: factsOnly });
  if (!result.hits.length) root.append(el("p", { class: "empty" }, "No judgment in the archive addresses these questions above the relevance threshold."));
  const shown = new Set();
  for (const group of groups) {
    const section = el("section", { class: "group" });
    const heading = el("h3");
    if (group.label) heading.append(el("span", { class: "q" }, `${group.label}. `));
    heading.append(document.createTextNode(group.title));
    section.append(heading);
    if (!group.hits.length) section.append(el("p", { class: "empty" }, "No judgment retrieved for this question passed the relevance threshold."));
    const refs = el("ul", { class: "refs" });
    for (const hit of group.hits) {
      if (shown.has(hit.judgment_id)) { refs.append(renderRef(hit)); continue; }
      shown.add(hit.judgment_id);
      section.append(renderHit(hit, result.questions));
    }
    if (refs.children.length) {
      section.append(el("p", { class: "muted refs-title" }, group.hits.length > refs.children.length ? "Also retrieved for this question:" : "Retrieved for this question (shown above):"));
      section.append(refs);
    }
    root.append(section);
  }
  $("results-section").hidden = false;
  $("results-section").focus();
}

async function search(event) {
  event.preventDefault();
  showError(null);
  const facts = $("facts").value.trim() || state.facts;
  const questions = chosenQuestions();
  if (!questions.length) { showError("Tick at least one question, or add your own."); return; }
  busy($("search"), $("search-busy"), true);
  try {
    const result = await api("/api/search", { facts, questions, k: Number($("k").value), filters: aqgrFilters.current() });
    renderResults(result);
  } catch (error) {
    showError(error.message);
  } finally {
    busy($("search"), $("search-busy"), false);
  }
}

// ------------------------------------------------------------------ the judgment dialog
function slotList(title, items) {
  const wrap = document.createDocumentFragment();
  if (!items || !items.length) return wrap;
  wrap.append(el("h3", {}, title));
  const list = el("ul");
  for (const item of items) list.append(el("li", {}, item));
  wrap.append(list);
  return wrap;
}

function slotText(title, text) {
  const wrap = document.createDocumentFragment();
  if (!text) return wrap;
  wrap.append(el("h3", {}, title), el("p", {}, text));
  return wrap;
}

function refs(items) {
  return (items || []).map((r) => [r.name, r.principle, r.application].filter(Boolean).join(": "));
}

function renderSummary(s) {
  const panel = $("panel-summary");
  panel.replaceChildren();
  const meta = [s.case_number, s.court, s.date, s.judgment_kind].filter(Boolean).join(" · ");
  panel.append(el("p", { class: "muted" }, `${meta}${meta ? " · " : ""}summary by ${s.provenance.engine}`));
  panel.append(
    slotList("Appellants / petitioners", s.parties.appellants),
    slotList("Respondents", s.parties.respondents),
    slotList("Bench", s.bench),
    slotText("Facts", s.facts),
    slotList("Issues", s.issues),
    slotList("Arguments of the appellants", s.arguments.appellants),
    slotList("Arguments of the respondents", s.arguments.respondents),
    slotText("Reasoning", s.reasoning),
    slotText("Disposed in favour of", s.disposed_in_favour_of),
    slotText("Final judgment", s.final_judgment),
    slotList("Statutes", refs(s.statutes)),
    slotList("Precedents", refs(s.precedents)),
    slotList("New legal principles", (s.new_principles || []).map((p) => [p.principle, p.application].filter(Boolean).join(": "))),
    slotList("Subjects", s.subjects),
  );
}

// What the judgment cites inside the archive and what cites it, with the words that name each.
function renderCitations(cited) {
  if (!cited) return;
  const line = (r) => `${r.parties} [${r.judgment_id}]${r.date ? `, ${r.date}` : ""}${r.mention ? `: "${r.mention}"` : ""}`;
  $("panel-summary").append(
    slotList("Cites, in this archive", cited.cites.map(line)),
    slotList("Cited by, in this archive", cited.cited_by.map(line)),
  );
}

// Whitespace-insensitive search of `needle` in `text`; returns [start, end] in `text` or null.
function normalised(text) {
  let out = "";
  const map = [];
  let space = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (/\s/.test(c)) { if (!space && out.length) { out += " "; map.push(i); } space = true; continue; }
    space = false;
    out += c.toLowerCase();
    map.push(i);
  }
  return { out, map };
}

function findPassage(norm, passage) {
  const pieces = [passage, ...passage.split(/:\s+/)]
    .map((p) => p.replace(/^\s*\d+\.\s*/, "").trim())
    .filter((p) => p.length >= 12)
    .sort((a, b) => b.length - a.length);
  // whole pieces first (longest first), then ever shorter prefixes of them (quotes may be cut)
  for (const length of [Infinity, 160, 80, 40]) {
    for (const piece of pieces) {
      if (length !== Infinity && length >= piece.length) continue;
      const probe = normalised(piece.slice(0, length)).out.trim();
      const at = norm.out.indexOf(probe);
      if (probe.length >= 12 && at >= 0) return [norm.map[at], norm.map[at + probe.length - 1] + 1];
    }
  }
  return null;
}

function renderText(text, evidence) {
  const norm = normalised(text);
  const spans = [];
  for (const item of evidence) {
    // the server's offsets when it located the passage; else a search of the text here
    const located = item.located && Number.isInteger(item.start) && Number.isInteger(item.end) && 0 <= item.start && item.start < item.end && item.end <= text.length;
    const found = located ? [item.start, item.end] : item.text ? findPassage(norm, item.text) : null;
    if (found && !spans.some(([a, b]) => found[0] < b && a < found[1])) spans.push(found);
  }
  spans.sort((a, b) => a[0] - b[0]);
  const pre = $("judgment-text");
  pre.replaceChildren();
  let at = 0;
  for (const [start, end] of spans) {
    pre.append(document.createTextNode(text.slice(at, start)));
    pre.append(el("mark", { "data-start": String(start) }, text.slice(start, end)));
    at = end;
  }
  pre.append(document.createTextNode(text.slice(at)));
  $("text-note").textContent = spans.length
    ? `${spans.length} evidence passage(s) highlighted.`
    : "The evidence passages are quoted in the summary; none was found verbatim in this text.";
  return spans.length;
}

function selectTab(which, at) {
  const summary = which === "summary";
  $("tab-summary").setAttribute("aria-selected", String(summary));
  $("tab-text").setAttribute("aria-selected", String(!summary));
  $("tab-summary").tabIndex = summary ? 0 : -1;
  $("tab-text").tabIndex = summary ? -1 : 0;
  $("panel-summary").hidden = !summary;
  $("panel-text").hidden = summary;
  if (!summary) {
    const marks = [...$("judgment-text").querySelectorAll("mark")];
    marks.forEach((m) => m.classList.remove("current"));
    const mark = marks.find((m) => at !== undefined && m.dataset.start === String(at.start)) || marks[0];
    if (mark) { mark.classList.add("current"); mark.scrollIntoView({ block: "center" }); }
  }
}

let returnFocus = null;

async function openJudgment(hit, opener, at) {
  showError(null);
  returnFocus = opener;
  const id = encodeURIComponent(hit.judgment_id).replace(/%2F/g, "/");
  try {
    const [summary, text, cited] = await Promise.all([
      api(`/api/judgments/${id}`),
      api(`/api/judgments/${id}/text`),
      api(`/api/judgments/${id}/citations`).catch(() => null), // no citation graph: the summary alone
    ]);
    $("judgment-title").textContent = hit.parties;
    renderSummary(summary);
    renderCitations(cited);
    renderText(text.text, at ? [{ ...at, text: "" }, ...hit.evidence] : hit.evidence);
    const dialog = $("judgment");
    if (!dialog.open) dialog.showModal();
    selectTab(at ? "text" : "summary", at);
    $(at ? "tab-text" : "tab-summary").focus();
  } catch (error) {
    showError(error.message);
  }
}

// A link such as #judgment=C12&at=310-520 opens that judgment's text with the passage highlighted.
async function openFromHash() {
  const match = /^#judgment=([^&]+)&at=(\d+)-(\d+)$/.exec(location.hash);
  if (!match) return;
  let judgmentId;
  try { judgmentId = decodeURIComponent(match[1]); } catch (e) { return; }
  const at = { located: true, start: Number(match[2]), end: Number(match[3]) };
  try {
    const summary = await api(`/api/judgments/${encodeURIComponent(judgmentId).replace(/%2F/g, "/")}`);
    const parties = `${summary.parties.appellants.join(", ")} v. ${summary.parties.respondents.join(", ")}`;
    await openJudgment({ judgment_id: judgmentId, parties, evidence: [] }, document.activeElement, at);
  } catch (error) {
    showError(error.message);
  }
}

function closeJudgment() {
  $("judgment").close();
}

// ------------------------------------------------------------------ wiring
window.addEventListener("resize", () => document.querySelectorAll("#questions textarea").forEach(autosize));
async function loadStatus() {
  try {
    const health = await api("/api/health");
    $("server-status").textContent = health.status === "ok"
      ? `aqgr ${health.version}: ${health.judgments_indexed} judgments indexed.`
      : `aqgr ${health.version}: ${health.detail}`;
  } catch (error) {
    $("server-status").textContent = `The server is not answering: ${error.message}`;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("facts-form").addEventListener("submit", suggest);
  $("questions-form").addEventListener("submit", search);
  $("add-question").addEventListener("click", addOwnQuestion);
  $("new-question").addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); addOwnQuestion(); } });
  $("close-judgment").addEventListener("click", closeJudgment);
  $("judgment").addEventListener("close", () => { if (returnFocus) returnFocus.focus(); });
  $("tab-summary").addEventListener("click", () => selectTab("summary"));
  $("tab-text").addEventListener("click", () => selectTab("text"));
  for (const tab of [$("tab-summary"), $("tab-text")]) {
    tab.addEventListener("keydown", (e) => {
      if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
        const next = tab.id === "tab-summary" ? "text" : "summary";
        selectTab(next);
        $(`tab-${next}`).focus();
      }
    });
  }
  $("facts").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) suggest(e); });
  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem("aqgr-api-key", $("api-key").value);
    $("key-section").hidden = true;
    showError(null);
    loadStatus();
  });
  loadStatus();
  window.addEventListener("hashchange", openFromHash);
  openFromHash();
});
