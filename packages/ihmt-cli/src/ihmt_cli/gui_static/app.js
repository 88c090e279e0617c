// The IHMT web interface: four screens over the /api/ of `ihmt gui`.
// Plain DOM, no framework, no build step. Memory text is only ever set through
// textContent, never parsed as HTML.
"use strict";

(function () {
  const WORDS = window.IHMT_I18N;
  const LANG_KEY = "ihmt.lang";
  const TOKEN_KEY = "ihmt.token";
  const SCREENS = ["setup", "explore", "diagnose", "timeline"];

  let lang = "en";
  let token = "";
  let info = null;
  const last = { tree: null, list: null, facets: null, detail: null, diag: null, timeline: null, setupPreview: null, setupApply: null };
  // Explore shows one of three lists: the tree, the newest memories, a search's results.
  const explore = { view: "tree", query: "" };
  const SMALL_SCREEN = "(max-width: 900px)";

  // ------------------------------------------------------------------ words
  function t(key, values) {
    const table = WORDS[lang] || WORDS.en;
    let text = key in table ? table[key] : (WORDS.en[key] || key);
    if (values) {
      for (const [name, value] of Object.entries(values)) {
        text = text.split("{" + name + "}").join(String(value));
      }
    }
    return text;
  }

  function plural(base, count) {
    return t(base + (Number(count) === 1 ? "_one" : "_other"), { count: num(count) });
  }

  function num(value) {
    return Number(value).toLocaleString(lang);
  }

  function pct(part, whole) {
    if (!whole) return "0%";
    return (part / whole).toLocaleString(lang, { style: "percent", maximumFractionDigits: 1 });
  }

  function day(stamp) {
    return stamp ? String(stamp).slice(0, 10) : "";
  }

  function applyWords() {
    document.documentElement.lang = lang;
    for (const el of document.querySelectorAll("[data-i18n]")) {
      el.textContent = t(el.dataset.i18n);
    }
    for (const el of document.querySelectorAll("[data-i18n-attr]")) {
      const [attr, key] = el.dataset.i18nAttr.split(":");
      el.setAttribute(attr, t(key));
    }
    for (const button of document.querySelectorAll(".lang button")) {
      button.setAttribute("aria-pressed", String(button.dataset.lang === lang));
    }
    document.title = "IHMT · " + t("tab_" + currentScreen());
    renderStoreLine();
    if (last.tree) renderTree(last.tree);
    if (last.facets) renderFacets(last.facets);
    if (last.list) renderList(last.list);
    renderViews();
    if (last.detail) renderDetail(last.detail);
    if (last.diag) renderDiag(last.diag);
    if (last.timeline) renderTimeline(last.timeline);
    if (last.setupPreview) renderPreview(last.setupPreview);
    if (last.setupApply) renderApply(last.setupApply);
    renderStats();
    renderStoreRows();
  }

  function setLang(next) {
    lang = WORDS[next] ? next : "en";
    try {
      localStorage.setItem(LANG_KEY, lang);
    } catch (e) {
      // storage disabled: the choice lasts for this page only
    }
    applyWords();
  }

  // ------------------------------------------------------------------ DOM helpers
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  function banner(message, kind) {
    const box = document.getElementById("banner");
    if (!message) {
      box.hidden = true;
      box.textContent = "";
      return;
    }
    box.className = "banner " + (kind || "error");
    box.textContent = message;
    box.hidden = false;
  }

  // ------------------------------------------------------------------ the API
  async function api(path, options) {
    const opts = options || {};
    const headers = { "X-IHMT-Token": token };
    let body;
    if (opts.body !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(opts.body);
    }
    const response = await fetch(path, { method: opts.method || "GET", headers, body, credentials: "omit" });
    let data = {};
    try {
      data = await response.json();
    } catch (e) {
      data = { error: response.statusText };
    }
    if (!response.ok) {
      const error = new Error(data.error || String(response.status));
      error.code = data.code;
      error.status = response.status;
      throw error;
    }
    return data;
  }

  function query(params) {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) {
      if (value !== undefined && value !== null && value !== "") search.set(name, value);
    }
    return search.toString();
  }

  function showError(error) {
    if (error && error.code === "no_store") {
      banner(t("no_store", { path: info ? info.store : "" }), "warn");
    } else {
      banner(t("error", { message: error && error.message ? error.message : String(error) }));
    }
  }

  // ------------------------------------------------------------------ screens
  function currentScreen() {
    const name = location.hash.replace("#", "");
    return SCREENS.includes(name) ? name : (info && !info.exists ? "setup" : "explore");
  }

  function show(name) {
    for (const screen of SCREENS) {
      const section = document.getElementById("screen-" + screen);
      const tab = document.getElementById("tab-" + screen);
      section.hidden = screen !== name;
      if (screen === name) tab.setAttribute("aria-current", "page");
      else tab.removeAttribute("aria-current");
    }
    document.title = "IHMT · " + t("tab_" + name);
    banner("");
    if (name === "explore") loadExplore();
    if (name === "timeline") loadTimeline();
    if (name === "setup") loadSetup();
    if (name === "diagnose" && info && !info.exists) showError({ code: "no_store" });
  }

  async function loadInfo() {
    info = await api("/api/info");
    renderStoreLine();
    renderStats();
    renderStoreRows();
  }

  function renderStoreLine() {
    const line = document.getElementById("store-line");
    line.textContent = info ? t("store_line", { path: info.store }) : "";
  }

  // Explore's tiles: what a user counts. How the tree is built (branches, depth,
  // unreachable items, bytes) is on Diagnose.
  function renderStats() {
    const box = clear(document.getElementById("stats"));
    if (!info || !info.stats) return;
    const s = info.stats;
    const rows = [
      ["stat_leaves", num(s.leaves)],
      ["stat_outdated", num(s.outdated === undefined ? 0 : s.outdated)],
      ["stat_topics", num(Object.keys(s.domains || {}).length)],
    ];
    if (last.facets) {
      rows.push(["stat_projects", num(last.facets.projects.filter((p) => p.name).length)]);
      if (last.facets.newest) rows.push(["stat_newest", day(last.facets.newest)]);
    }
    for (const [key, value] of rows) {
      box.append(el("div", { "data-stat": key }, el("dt", { text: t(key) }), el("dd", { text: value })));
    }
  }

  // Diagnose's card about the store: one [label key, value] row per line.
  function storeRows() {
    const s = info.stats;
    return [
      ["diag_store_path", info.store],
      ["diag_store_leaves", num(s.leaves)],
      ["diag_store_branches", num(s.branches)],
      ["diag_store_depth", num(s.depth)],
      ["diag_store_unconsolidated", num(s.unconsolidated)],
      ["diag_store_unreachable", num(s.unreachable)],
      ["diag_store_bytes", num(s.bytes)],
      ["diag_store_search", searchMode(info.search)],
    ];
  }

  function searchMode(search) {
    if (!search) return "";
    if (search.mode !== "semantic") return t("diag_search_words") + " · " + search.reason;
    let text = t("diag_search_meaning") + " · " + search.model;
    if (search.vectors_missing) {
      text += " · " + num(search.vectors_missing) + " " + t("diag_search_missing");
    }
    return text;
  }

  function renderStoreRows() {
    const box = clear(document.getElementById("diag-store"));
    if (!info || !info.stats) return;
    for (const [key, value] of storeRows()) {
      box.append(el("dt", { text: t(key) }), el("dd", { "data-row": key, text: value }));
    }
  }

  // ------------------------------------------------------------------ Explore
  async function loadExplore() {
    if (info && !info.exists) {
      clear(document.getElementById("tree"));
      showError({ code: "no_store" });
      return;
    }
    await Promise.all([loadFacets(), explore.view === "tree" ? loadTree() : loadList()]);
  }

  async function loadFacets() {
    try {
      last.facets = await api("/api/facets");
      renderFacets(last.facets);
      renderStats();
    } catch (error) {
      showError(error);
    }
  }

  // Project options: "" every memory, "g" the global ones (no project), "p:NAME" one project.
  function renderFacets(data) {
    const project = document.getElementById("explore-project");
    const chosenProject = project.value;
    clear(project).append(el("option", { value: "", text: t("all_projects") }));
    for (const p of data.projects) {
      const label = (p.name ? p.name : t("global_only")) + " (" + num(p.count) + ")";
      project.append(el("option", { value: p.name ? "p:" + p.name : "g", text: label }));
    }
    project.value = [...project.options].some((o) => o.value === chosenProject) ? chosenProject : "";
    const tag = document.getElementById("explore-tag");
    const chosenTag = tag.value;
    clear(tag).append(el("option", { value: "", text: t("all_tags") }));
    for (const g of data.tags) tag.append(el("option", { value: "t:" + g.name, text: g.name + " (" + num(g.count) + ")" }));
    tag.value = [...tag.options].some((o) => o.value === chosenTag) ? chosenTag : "";
  }

  function filterParams() {
    const project = document.getElementById("explore-project").value;
    const tag = document.getElementById("explore-tag").value;
    return {
      project: project.startsWith("p:") ? project.slice(2) : "",
      global: project === "g" ? "1" : "",
      tag: tag.startsWith("t:") ? tag.slice(2) : "",
    };
  }

  function hasFilters() {
    const f = filterParams();
    return Boolean(f.project || f.global || f.tag);
  }

  function setView(view) {
    explore.view = view;
    renderViews();
    if (view === "tree") {
      if (!last.tree) loadTree();
    } else {
      loadList();
    }
  }

  function renderViews() {
    for (const button of document.querySelectorAll(".views button")) {
      button.setAttribute("aria-pressed", String(button.dataset.view === explore.view));
    }
    document.getElementById("view-results").hidden = !explore.query;
    document.getElementById("tree").hidden = explore.view !== "tree";
    document.getElementById("list").hidden = explore.view === "tree";
    const head = clear(document.getElementById("list-head"));
    if (explore.view === "tree") {
      head.append(t(hasFilters() ? "tree_unfiltered" : "tree_head"));
    } else if (last.list) {
      renderListHead(head, last.list);
    }
  }

  async function runExploreSearch(event) {
    event.preventDefault();
    explore.query = document.getElementById("explore-q").value.trim();
    setView(explore.query ? "results" : "recent");
  }

  function changeFilter() {
    setView(explore.view === "tree" ? "recent" : explore.view);
  }

  async function loadList() {
    const box = document.getElementById("list");
    box.setAttribute("aria-busy", "true");
    const q = explore.view === "results" ? explore.query : "";
    try {
      last.list = await api("/api/list?" + query({ q, limit: 100, ...filterParams() }));
      renderList(last.list);
      renderViews();
    } catch (error) {
      showError(error);
    } finally {
      box.removeAttribute("aria-busy");
    }
  }

  function renderListHead(head, data) {
    if (data.mode === "search" && data.words_only) {
      head.append(t(data.total === 1 ? "words_one" : "words_other", { count: num(data.total), query: data.query }));
    } else if (data.mode === "search") {
      head.append(el("span", { class: "badge " + data.status, text: t("status_" + data.status) }), " ");
      head.append(t(data.total === 1 ? "results_one" : "results_other", { count: num(data.total), query: data.query }));
    } else {
      head.append(t(data.total === 1 ? "recent_one" : "recent_other", { count: num(data.total) }));
    }
  }

  function renderList(data) {
    const box = clear(document.getElementById("list"));
    box.dataset.mode = data.mode;
    if (!data.items.length) {
      box.append(el("p", { class: "help", text: t(data.mode === "search" ? "no_results" : "no_recent") }));
      return;
    }
    const list = el("ul", { class: "items" });
    for (const item of data.items) list.append(treeItem(item));
    box.append(list);
    if (data.total > data.items.length) {
      box.append(el("p", { class: "help", text: t("list_more", { shown: num(data.items.length), total: num(data.total) }) }));
    }
  }

  async function refreshExplore() {
    last.tree = null;
    await loadInfo();
    await loadExplore();
  }

  async function loadTree() {
    const box = document.getElementById("tree");
    if (info && !info.exists) {
      clear(box);
      showError({ code: "no_store" });
      return;
    }
    box.setAttribute("aria-busy", "true");
    try {
      last.tree = await api("/api/tree");
      renderTree(last.tree);
    } catch (error) {
      showError(error);
    } finally {
      box.removeAttribute("aria-busy");
    }
  }

  function itemLabel(item) {
    const parts = [el("span", { class: "title", title: item.title || item.id, text: item.title || item.id })];
    if (item.kind === "branch") {
      parts.push(el("span", { class: "count", text: plural("memories", item.leaf_count) }));
    } else {
      parts.push(el("span", { class: "date", text: day(item.timestamp) }));
      if (item.project) parts.push(el("span", { class: "project", text: t("project", { name: item.project }) }));
    }
    if (item.outdated) parts.push(el("span", { class: "badge outdated", text: t("outdated") }));
    return parts;
  }

  function treeItem(item) {
    if (item.kind === "branch") {
      const kids = el("ul", { class: "kids" });
      const details = el(
        "details",
        { class: "branch", "data-id": item.id },
        el("summary", {}, ...itemLabel(item)),
        kids,
      );
      details.addEventListener("toggle", async () => {
        if (!details.open) return;
        await openItem(item.id, kids);
      });
      return el("li", {}, details);
    }
    const button = el(
      "button",
      { type: "button", class: "leaf" + (item.outdated ? " is-outdated" : ""), "data-id": item.id },
      ...itemLabel(item),
    );
    button.addEventListener("click", () => openItem(item.id, null));
    return el("li", {}, button);
  }

  function renderTree(data) {
    const box = clear(document.getElementById("tree"));
    if (!data.domains.length) {
      box.append(el("p", { class: "help", text: t("explore_empty") }));
      return;
    }
    const list = el("ul", { class: "domains" });
    for (const domain of data.domains) {
      const items = el("ul", { class: "kids" });
      for (const item of domain.items) items.append(treeItem(item));
      list.append(
        el(
          "li",
          {},
          el(
            "details",
            { class: "domain", open: true, "data-domain": domain.domain },
            el(
              "summary",
              {},
              el("span", { class: "title domain-name", text: domain.domain }),
              el("span", { class: "count", text: t("domain_counts", { leaves: plural("memories", domain.leaves), branches: plural("branches", domain.branches) }) }),
            ),
            items,
          ),
        ),
      );
    }
    box.append(list);
  }

  async function openItem(id, kidsBox) {
    try {
      const data = await api("/api/node/" + encodeURIComponent(id));
      last.detail = data;
      renderDetail(data);
      // One column: the memory opens below the list, so bring it into view.
      if (!kidsBox && window.matchMedia(SMALL_SCREEN).matches) {
        document.getElementById("detail").scrollIntoView({ block: "start" });
      }
      if (kidsBox && data.children) {
        clear(kidsBox);
        for (const child of data.children) kidsBox.append(treeItem(child));
      }
    } catch (error) {
      showError(error);
    }
  }

  function meta(rows) {
    const list = el("dl", { class: "meta" });
    for (const [key, value] of rows) {
      if (value === "" || value === null || value === undefined) continue;
      list.append(el("dt", { text: t(key) }), el("dd", { text: value }));
    }
    return list;
  }

  function renderDetail(data) {
    const box = clear(document.getElementById("detail"));
    const item = data.item;
    box.append(
      el("p", { class: "kind" }, el("span", { class: "badge " + item.kind, text: t(item.kind === "branch" ? "branch" : "leaf") }), " ", el("code", { text: item.id })),
      el("h3", { id: "detail-title", text: item.title || item.id }),
    );
    if (data.path && data.path.length > 1) {
      const crumbs = el("ol", { class: "crumbs", "aria-label": t("path_label") });
      for (const step of data.path) crumbs.append(el("li", { text: step.title || step.id }));
      box.append(crumbs);
    }
    for (const notice of data.notices || []) {
      const by = notice.by_title ? notice.by_title + " (" + notice.by + ")" : notice.by;
      const text = notice.kind === "outdated"
        ? t("notice_outdated", { by, date: day(notice.date) })
        : t("notice_corrects", { by });
      box.append(el("p", { class: "notice " + notice.kind, role: "note", text }));
    }
    box.append(
      meta([
        ["meta_date", item.kind === "branch" && item.time_end ? day(item.timestamp) + " → " + day(item.time_end) : day(item.timestamp)],
        ["meta_domain", item.domain],
        ["meta_project", item.project ? item.project : t("global")],
        ["meta_source", item.source],
        ["meta_type", data.data_type || ""],
        ["meta_tags", (data.tags || []).join(", ")],
      ]),
    );
    if (item.kind === "branch") {
      box.append(el("h4", { text: t("summary") }), el("pre", { class: "text", text: data.summary || "" }));
      if (data.keywords && data.keywords.length) {
        box.append(el("h4", { text: t("keywords") }), el("p", { text: data.keywords.join(", ") }));
      }
      const kids = el("ul", { class: "child-list" });
      for (const child of data.children || []) {
        kids.append(el("li", {}, el("button", { type: "button", class: "linkish", onclick: () => openItem(child.id, null) }, ...itemLabel(child))));
      }
      box.append(el("h4", { text: t("children") }), kids);
      return;
    }
    box.append(el("h4", { text: t("text") }), el("pre", { class: "text", id: "leaf-text", text: data.text }));
    if (data.history && data.history.length) box.append(el("h4", { text: t("history") }), historyList(data.history));
    const actions = el("div", { class: "actions" });
    if (item.outdated) {
      actions.append(el("button", { type: "button", id: "restore-button", onclick: () => restore(item) }, t("restore_button")));
    }
    actions.append(el("button", { type: "button", class: "danger", id: "forget-button", onclick: () => forget(item.id) }, t("forget_button")));
    box.append(actions);
  }

  // The correction chain, oldest first: each memory with what happened to it.
  function historyList(rows) {
    const list = el("ol", { class: "history-chain", id: "history" });
    for (const row of rows) {
      const label = [el("span", { class: "title", text: row.title || row.id }), el("span", { class: "date", text: day(row.timestamp) })];
      if (row.outdated) label.push(el("span", { class: "badge outdated", text: t("outdated") }));
      const state = t(row.outdated ? "history_corrected" : "history_current", { by: row.corrected_by || "" });
      const what = row.relation === "self" ? t("history_self") + " " + state : state;
      const head = row.relation === "self"
        ? el("strong", { class: "here" }, ...label)
        : el("button", { type: "button", class: "linkish", "data-id": row.id, onclick: () => openItem(row.id, null) }, ...label);
      list.append(
        el("li", { class: row.outdated ? "is-outdated" : "", "data-relation": row.relation, "aria-current": row.relation === "self" ? "true" : null },
          head, el("br"), el("span", { class: "help", text: what }), " ", el("code", { text: row.id })),
      );
    }
    return list;
  }

  // ------------------------------------------------------------------ confirmation
  function confirmDialog({ title, text, ok, withReason }) {
    const dialog = document.getElementById("confirm");
    document.getElementById("confirm-title").textContent = title;
    document.getElementById("confirm-text").textContent = text;
    document.getElementById("confirm-ok").textContent = ok;
    document.getElementById("confirm-reason-row").hidden = !withReason;
    const reason = document.getElementById("confirm-reason");
    reason.value = "";
    dialog.returnValue = "cancel";
    return new Promise((resolve) => {
      dialog.addEventListener(
        "close",
        () => resolve({ ok: dialog.returnValue === "ok", reason: reason.value }),
        { once: true },
      );
      dialog.showModal();
      document.getElementById("confirm-cancel").focus();
    });
  }

  // A write the user confirms first: ask, then POST the body with confirm: true and let
  // `done` show the outcome; cancelling says so, a failure shows the error.
  async function confirmedWrite(dialog, cancelled, path, body, done) {
    const answer = await confirmDialog(dialog);
    if (!answer.ok) {
      banner(t(cancelled), "info");
      return;
    }
    try {
      await done(await api(path, { method: "POST", body: { ...body(answer), confirm: true } }));
    } catch (error) {
      showError(error);
    }
  }

  function forget(id) {
    return confirmedWrite(
      { title: t("forget_title", { id }), text: t("forget_text"), ok: t("forget_ok"), withReason: true },
      "forget_cancelled",
      "/api/forget",
      (answer) => ({ id, reason: answer.reason }),
      async (result) => {
        last.detail = null;
        clear(document.getElementById("detail")).append(el("p", { class: "notice done", role: "status", text: t("forgotten", { message: result.message }) }));
        await refreshExplore();
      },
    );
  }

  function restore(item) {
    return confirmedWrite(
      { title: t("restore_title", { id: item.id }), text: t("restore_text", { by: item.outdated_by }), ok: t("restore_ok"), withReason: false },
      "restore_cancelled",
      "/api/restore",
      () => ({ id: item.id, corrected_by: item.outdated_by }),
      async (result) => {
        await refreshExplore();
        await openItem(item.id, null);
        document.getElementById("detail").prepend(el("p", { class: "notice done", role: "status", text: result.message }));
      },
    );
  }

  // ------------------------------------------------------------------ Diagnose
  async function runSearch(event) {
    event.preventDefault();
    const q = document.getElementById("q").value.trim();
    if (!q) {
      document.getElementById("q").focus();
      return;
    }
    const params = query({ q, clue: document.getElementById("clue").value.trim(), as_of: document.getElementById("as-of").value });
    const box = document.getElementById("diag");
    box.setAttribute("aria-busy", "true");
    banner("");
    try {
      last.diag = await api("/api/search?" + params);
      renderDiag(last.diag);
    } catch (error) {
      showError(error);
    } finally {
      box.removeAttribute("aria-busy");
    }
  }

  function renderDiag(data) {
    const box = clear(document.getElementById("diag"));
    const total = data.store.files;
    const statusKey = "status_" + data.status;
    const head = el(
      "div",
      { class: "card verdict " + data.status },
      el("p", { class: "status", id: "diag-status" }, el("span", { class: "badge big " + data.status, text: t(statusKey) })),
      el(
        "dl",
        { class: "figures" },
        el("div", {}, el("dt", { text: t("confidence") }), el("dd", {}, el("meter", { min: "0", max: "1", value: String(data.confidence), "aria-label": t("confidence") }), " ", el("span", { id: "diag-confidence", text: data.confidence.toLocaleString(lang, { maximumFractionDigits: 2 }) }))),
        el("div", {}, el("dt", { text: t("files_read") }), el("dd", { id: "diag-files", text: t("files_of", { read: num(data.files_read), total: num(total), pct: pct(data.files_read, total) }) })),
        el("div", {}, el("dt", { text: t("bytes_read") }), el("dd", { id: "diag-bytes", text: t("files_of", { read: num(data.bytes_read), total: num(data.store.bytes), pct: pct(data.bytes_read, data.store.bytes) }) })),
        el("div", {}, el("dt", { text: t("tokens") }), el("dd", { text: num(data.tokens) })),
      ),
    );
    box.append(head);

    const best = data.status === "found" && data.results.length ? data.results[0] : null;
    const path = el("ol", { class: "crumbs answer-path", id: "diag-path" });
    if (best) {
      // The trunk's domain, then each branch read on the way down, then the memory itself.
      path.append(el("li", {}, el("span", { class: "domain-name", text: best.domain })));
      best.path.forEach((id, i) => {
        const title = id === best.id ? (best.title || best.content) : ((best.path_titles || [])[i] || id);
        path.append(el("li", {}, el("span", { text: title }), " ", el("code", { text: id })));
      });
    }
    box.append(el("div", { class: "card" }, el("h3", { text: t("answer_path") }), best ? path : el("p", { class: "help", text: t("no_path") })));

    if (data.notices.length) {
      const list = el("ul", { class: "notices" });
      for (const notice of data.notices) list.append(el("li", { class: "notice outdated", text: notice }));
      box.append(el("div", { class: "card" }, el("h3", { text: t("notices") }), list));
    }

    const table = el(
      "table",
      { class: "candidates", id: "diag-candidates" },
      el("caption", { text: t("candidates") }),
      el("thead", {}, el("tr", {}, ...["col_rank", "col_memory", "col_date", "col_where", "col_score"].map((k) => el("th", { scope: "col", text: t(k) })))),
    );
    const body = el("tbody");
    data.results.forEach((hit, i) => {
      const where = [hit.domain, hit.project ? t("project", { name: hit.project }) : t("global")].join(" · ");
      body.append(
        el(
          "tr",
          { class: hit.outdated ? "is-outdated" : "" },
          el("td", { text: String(i + 1) }),
          el("td", {}, el("span", { text: (hit.content || hit.title || "").slice(0, 220) }), hit.outdated ? el("span", { class: "badge outdated", text: t("outdated") }) : null, el("br"), el("code", { text: hit.id })),
          el("td", { text: day(hit.timestamp) }),
          el("td", { text: where }),
          el("td", { text: hit.score.toLocaleString(lang, { maximumFractionDigits: 2 }) }),
        ),
      );
    });
    table.append(body);
    box.append(el("div", { class: "card scroll" }, table));
    box.append(el("div", { class: "card" }, el("h3", { text: t("agent_text") }), el("pre", { class: "code", id: "diag-compact", text: data.compact })));
  }

  // ------------------------------------------------------------------ Timeline
  async function loadTimeline() {
    if (info && !info.exists) {
      showError({ code: "no_store" });
      return;
    }
    const subject = document.getElementById("subject").value;
    try {
      last.timeline = await api("/api/timeline?" + query({ subject }));
      renderTimeline(last.timeline);
    } catch (error) {
      showError(error);
    }
  }

  function renderTimeline(data) {
    const select = document.getElementById("subject");
    const chosen = data.subject || "";
    clear(select).append(el("option", { value: "", text: t("timeline_all") }));
    for (const subject of data.subjects) select.append(el("option", { value: subject, text: subject }));
    select.value = chosen;

    const box = clear(document.getElementById("timelines"));
    box.dataset.subject = chosen;
    if (!data.timelines.length) box.append(el("p", { class: "help", text: t("no_facts") }));
    for (const line of data.timelines) {
      const card = el("article", { class: "card fact", "data-key": line.subject + "::" + line.attribute });
      card.append(el("h4", {}, el("span", { class: "subject", text: line.subject }), " · ", el("span", { text: line.attribute })));
      if (line.active) {
        card.append(
          el("p", { class: "value active" },
            el("span", { class: "badge active", text: t("active") }), " ",
            el("strong", { text: line.active.value }), " ",
            el("span", { class: "date", text: t("since", { date: day(line.active.valid_from) }) })),
        );
      }
      if (line.history.length) {
        const list = el("ul", { class: "history" });
        for (const old of line.history) {
          list.append(
            el("li", { class: "value historical" },
              el("span", { class: "badge historical", text: t("historical") }), " ",
              el("s", { text: old.value }), " ",
              el("span", { class: "date", text: t("from_to", { from: day(old.valid_from), to: day(old.valid_to) || "…" }) })),
          );
        }
        card.append(list);
      }
      box.append(card);
    }

    const conflicts = clear(document.getElementById("conflicts"));
    if (!data.contradictions.length) conflicts.append(el("li", { class: "help", text: t("no_conflicts") }));
    for (const c of data.contradictions) {
      conflicts.append(
        el("li", { class: "notice conflict" },
          t("conflict_line", { old_date: day(c.old_date), new_date: day(c.new_date), subject: c.subject, attribute: c.attribute, old: c.old_value, new: c.new_value }),
          el("br"), el("code", { text: c.old_sources.join(", ") + " → " + c.new_source })),
      );
    }
  }

  // ------------------------------------------------------------------ Set up
  function setupValues() {
    const form = document.getElementById("setup-form");
    const scope = form.querySelector("input[name=scope]:checked").value;
    return {
      home: document.getElementById("setup-home").value.trim(),
      agent: form.querySelector("input[name=agent]:checked").value,
      scope,
      project_dir: scope === "project" ? document.getElementById("setup-project").value.trim() : "",
    };
  }

  // The folders are suggested, never a temporary one (the server leaves those out).
  function loadSetup() {
    const home = document.getElementById("setup-home");
    if (info && !home.value) home.value = info.suggested_home;
    const project = document.getElementById("setup-project");
    if (info && !project.value) project.value = info.suggested_project;
    renderStoreState();
  }

  function renderStoreState() {
    const state = document.getElementById("setup-store-state");
    const preview = last.setupPreview;
    if (preview && preview.home === document.getElementById("setup-home").value.trim()) {
      state.textContent = t(preview.store_exists ? "setup_store_exists" : "setup_store_missing", { path: preview.store });
    } else if (info && info.home === document.getElementById("setup-home").value.trim()) {
      state.textContent = t(info.exists ? "setup_store_exists" : "setup_store_missing", { path: info.store });
    } else {
      state.textContent = "";
    }
  }

  async function previewSetup(event) {
    if (event) event.preventDefault();
    const values = setupValues();
    banner("");
    try {
      const data = await api("/api/setup/preview?" + query(values));
      data.home = values.home;
      last.setupPreview = data;
      last.setupApply = null;
      document.getElementById("setup-apply-out").hidden = true;
      renderPreview(data);
      renderStoreState();
    } catch (error) {
      showError(error);
    }
  }

  function renderPreview(data) {
    document.getElementById("setup-preview-out").hidden = false;
    const where = data.cwd ? "cd " + data.cwd + " && " : "";
    document.getElementById("setup-command").textContent = where + data.command;
    const hooks = document.getElementById("setup-hooks");
    hooks.replaceChildren();
    for (const row of data.hooks || []) {
      const chip = document.createElement("span");
      chip.className = "chip hooks-" + (row.on === null ? "unknown" : row.on ? "on" : "off");
      chip.title = row.path;
      chip.dataset.agent = row.agent;
      chip.textContent = row.agent + ": " + t(row.on === null ? "setup_hooks_unknown" : row.on ? "setup_hooks_on" : "setup_hooks_off");
      hooks.append(chip, " ");
    }
    const dry = document.getElementById("setup-dry");
    const dryLabel = document.getElementById("setup-dry-label");
    if (data.preview) {
      const p = data.preview;
      dry.textContent = "$ " + data.dry_run_command + "\n" + p.stdout + (p.stderr ? "\n" + p.stderr : "") + "\n" + t("setup_exit", { code: p.exit_code });
      dry.hidden = false;
      dryLabel.hidden = false;
    } else {
      dry.hidden = true;
      dryLabel.hidden = true;
    }
  }

  async function applySetup() {
    const values = setupValues();
    const preview = last.setupPreview;
    const answer = await confirmDialog({
      title: t("setup_apply_title", { agent: values.agent }),
      text: t("setup_apply_text", { command: preview ? preview.command : "ihmt install " + values.agent }),
      ok: t("setup_apply_ok"),
      withReason: false,
    });
    if (!answer.ok) return;
    try {
      last.setupApply = await api("/api/setup/apply", { method: "POST", body: { ...values, confirm: true } });
      renderApply(last.setupApply);
    } catch (error) {
      showError(error);
    }
  }

  function renderApply(data) {
    document.getElementById("setup-apply-out").hidden = false;
    document.getElementById("setup-exit").textContent = t("setup_exit", { code: data.exit_code });
    document.getElementById("setup-apply-text").textContent = data.stdout + (data.stderr ? "\n" + data.stderr : "");
  }

  async function createStore() {
    const home = document.getElementById("setup-home").value.trim();
    banner("");
    try {
      const result = await api("/api/setup/create", { method: "POST", body: { home } });
      await loadInfo();
      last.tree = null;
      last.list = null;
      last.facets = null;
      last.detail = null;
      last.diag = null;
      last.timeline = null;
      banner(t(result.created ? "setup_created" : "setup_opened", { path: result.store }), "info");
      renderStoreState();
    } catch (error) {
      showError(error);
    }
  }

  // ------------------------------------------------------------------ start
  function readToken() {
    const params = new URLSearchParams(location.search);
    const fromUrl = params.get("token");
    if (fromUrl) {
      token = fromUrl;
      try {
        sessionStorage.setItem(TOKEN_KEY, token);
      } catch (e) {
        // no storage: the token lives in this page only
      }
      // Keep the secret out of the address bar, history and screenshots.
      history.replaceState(null, "", location.pathname + location.hash);
    } else {
      try {
        token = sessionStorage.getItem(TOKEN_KEY) || "";
      } catch (e) {
        token = "";
      }
    }
  }

  async function start() {
    let saved = null;
    try {
      saved = localStorage.getItem(LANG_KEY);
    } catch (e) {
      saved = null;
    }
    lang = saved && WORDS[saved] ? saved : ((navigator.language || "en").toLowerCase().startsWith("es") ? "es" : "en");
    applyWords();
    for (const button of document.querySelectorAll(".lang button")) {
      button.addEventListener("click", () => setLang(button.dataset.lang));
    }
    const listeners = [
      ["search-form", "submit", runSearch],
      ["explore-form", "submit", runExploreSearch],
      ["explore-project", "change", changeFilter],
      ["explore-tag", "change", changeFilter],
      ["subject", "change", loadTimeline],
      ["setup-form", "submit", previewSetup],
      ["setup-apply", "click", applySetup],
      ["setup-create", "click", createStore],
      ["setup-home", "input", renderStoreState],
    ];
    for (const [id, event, handler] of listeners) {
      document.getElementById(id).addEventListener(event, handler);
    }
    for (const button of document.querySelectorAll(".views button")) {
      button.addEventListener("click", () => setView(button.dataset.view));
    }
    for (const radio of document.querySelectorAll("input[name=scope]")) {
      radio.addEventListener("change", () => {
        document.getElementById("setup-project-row").hidden = setupValues().scope !== "project";
      });
    }
    window.addEventListener("hashchange", () => show(currentScreen()));

    readToken();
    if (!token) {
      banner(t("no_token"));
      return;
    }
    try {
      await loadInfo();
    } catch (error) {
      showError(error);
      return;
    }
    document.body.dataset.ready = "true";
    show(currentScreen());
  }

  document.addEventListener("DOMContentLoaded", start);
})();
