// The session's history panel: past questions and decisions (GET /v1/sessions/{sid}/history),
// oldest first, a page at a time, filtered by a search box, and exported as a JSON Lines
// file. What the gateway sends never holds a secret value (a secret answer reads
// "[secret provided]"); every string lands as text through h() (dom.js).

import { h, setText } from "./dom.js";
import { contextLine } from "./labels.js";

const PAGE = 50;
const SEARCH_DELAY_MS = 250;

const WHO = {
  answer: "the answer link",
  admin: "the admin",
  agent: "the agent",
  system: "midturn (automatically)",
};

const STATUS = {
  answered: "answered",
  skipped: "skipped",
  redirected: "replied in chat instead",
  timed_out: "timed out",
  cancelled: "cancelled",
  unavailable: "unavailable",
  allowed: "allowed",
  denied: "denied",
};

function when(iso) {
  const moment = new Date(iso);
  return Number.isNaN(moment.getTime()) ? String(iso) : moment.toLocaleString();
}

function settledBy(entry) {
  if (entry.settled_by === null) return entry.status === "timed_out" ? "no one (it timed out)" : "no one";
  return WHO[entry.settled_by] || entry.settled_by;
}

// One entry as a list item: what was asked, what came of it, by whom, when.
export function entryNode(entry) {
  const lines = [];
  if (entry.kind === "permission" && entry.permission) {
    const request = entry.permission;
    lines.push(h("p", { class: "past-asked", text: `Permission to run ${request.tool} (${request.risk} risk): ${request.summary}` }));
    const decision = entry.decision || {};
    const how = decision.decision === "allow_for_turn" ? "allowed for the turn" : STATUS[entry.status] || entry.status;
    const note = decision.message ? ` — “${decision.message}”` : "";
    lines.push(h("p", { class: "past-outcome", text: `Decision: ${how}${decision.auto ? " (already allowed this turn)" : ""}${note}` }));
  } else {
    const answers = h(
      "dl",
      { class: "past-answers" },
      entry.questions.map((item) => [
        h("dt", { text: `${item.header}: ${item.question}` }),
        h("dd", { text: item.answer === null ? `(${STATUS[item.status] || item.status})` : item.answer }),
      ]),
    );
    lines.push(answers);
    if (entry.message) lines.push(h("p", { class: "past-outcome", text: `Replied in chat instead: ${entry.message}` }));
    else lines.push(h("p", { class: "past-outcome", text: `Outcome: ${STATUS[entry.status] || entry.status}` }));
  }
  const asker = contextLine(entry.context);
  return h(
    "li",
    { class: `past-entry past-${entry.status}`, "data-id": entry.id },
    h(
      "p",
      { class: "past-meta" },
      h("time", { datetime: entry.asked_at, text: when(entry.asked_at) }),
      asker ? h("span", { class: "past-asker", text: ` · ${asker}` }) : null,
    ),
    lines,
    h("p", {
      class: "past-by",
      text: `Settled by ${settledBy(entry)}${entry.settled_at ? ` at ${when(entry.settled_at)}` : ""}`,
    }),
  );
}

export class HistoryPanel {
  // root: the <details> element of the session view; it is filled here.
  constructor(api, sessionId, root) {
    this.api = api;
    this.sessionId = sessionId;
    this.root = root;
    this.cursor = null;
    this.query = "";
    this.loading = 0; // a counter, so a stale page never lands after a newer search
    this.timer = null;
    this.build();
  }

  build() {
    this.search = h("input", {
      id: "past-q",
      type: "search",
      autocomplete: "off",
      placeholder: "Words in a question, an answer or a decision",
      on: { input: () => this.schedule() },
    });
    this.status = h("p", { class: "past-status", role: "status" });
    this.list = h("ol", { class: "past-list", "aria-label": "Past questions and decisions" });
    this.more = h("button", { type: "button", class: "past-more", hidden: true, text: "Show more", on: { click: () => this.load(false) } });
    this.exportButton = h("button", { type: "button", class: "past-export", text: "Export (JSON Lines)", on: { click: () => this.exportFile() } });
    const form = h(
      "form",
      { class: "past-search", role: "search", action: "#", on: { submit: (event) => { event.preventDefault(); this.load(true); } } },
      h("label", { for: "past-q", text: "Search history" }),
      this.search,
      this.exportButton,
    );
    this.onToggle = () => {
      if (this.root.open) this.load(true);
    };
    this.root.replaceChildren(
      h("summary", { text: "History of this session" }),
      h("div", { class: "past-body" }, form, this.status, this.list, this.more),
    );
    this.root.addEventListener("toggle", this.onToggle);
  }

  stop() {
    clearTimeout(this.timer);
    this.loading += 1;
    this.root.removeEventListener("toggle", this.onToggle);
    this.root.open = false;
    this.root.replaceChildren();
  }

  // Something settled: show it when the panel is open.
  changed() {
    if (this.root.open) this.schedule();
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.load(true), SEARCH_DELAY_MS);
  }

  path(extra) {
    const params = new URLSearchParams(extra);
    if (this.query) params.set("q", this.query);
    return `/v1/sessions/${encodeURIComponent(this.sessionId)}/history?${params}`;
  }

  async load(fresh) {
    if (fresh) {
      this.query = this.search.value.trim().slice(0, 200);
      this.cursor = null;
    }
    const ticket = ++this.loading;
    const params = { limit: String(PAGE) };
    if (this.cursor) params.cursor = this.cursor;
    setText(this.status, "Loading…");
    let body;
    try {
      body = await this.api.request("GET", this.path(params));
    } catch (error) {
      if (ticket === this.loading) setText(this.status, `Cannot read the history: ${error.message}`);
      return;
    }
    if (ticket !== this.loading) return;
    if (fresh) this.list.replaceChildren();
    this.list.append(...body.entries.map(entryNode));
    this.cursor = body.next_cursor || null;
    this.more.hidden = this.cursor === null;
    const count = this.list.children.length;
    const found = this.query ? ` matching “${this.query}”` : "";
    setText(this.status, count ? `${count} shown${found}${this.cursor ? " (more below)" : ""}` : `Nothing settled yet${found}.`);
  }

  // The whole history (this search's) as a file: fetched with the token in a header,
  // handed to the browser as a download.
  async exportFile() {
    this.exportButton.disabled = true;
    try {
      const response = await fetch(this.api.base + this.path({ format: "jsonl" }), {
        headers: this.api.headers({ Accept: "application/jsonl" }),
        cache: "no-store",
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const blob = await response.blob();
      const url = URL.createObjectURL(blob);
      const link = h("a", { href: url, download: `midturn-history-${this.sessionId}.jsonl`, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      setText(this.status, "Exported.");
    } catch (error) {
      setText(this.status, `The export failed: ${error.message}`);
    } finally {
      this.exportButton.disabled = false;
    }
  }
}
