// Who is asking: the session's title (GET /v1/sessions/{sid}) in place of its raw id, and
// the host's context on an interaction (the agent's name, what it was doing, the tool
// call that asked). All of it is text a model may have written: it goes through h()
// and setText() (dom.js), so it lands as text, without bidirectional controls, and the
// long parts are cut here as well as by the gateway.

import { h, plain } from "./dom.js";

const SHORT_ID = 14;
const DOING_SHOWN = 280;

// Session labels, fetched once per session and shared by every view.
export class Labels {
  constructor(api) {
    this.api = api;
    this.known = new Map(); // session id -> Promise<{title, meta} | null>
  }

  // {session_id, title, meta, created_at}, or null when it cannot be read.
  session(sessionId) {
    if (!this.known.has(sessionId)) {
      const read = this.api.request("GET", `/v1/sessions/${encodeURIComponent(sessionId)}`).catch(() => null);
      this.known.set(sessionId, read);
    }
    return this.known.get(sessionId);
  }
}

// "s_abcdef…", for the small print beside a title.
export function shortId(sessionId) {
  const id = String(sessionId);
  return id.length > SHORT_ID ? `${id.slice(0, SHORT_ID - 1)}…` : id;
}

function cut(text, limit) {
  const value = plain(text).replace(/\s+/g, " ").trim();
  return value.length > limit ? `${value.slice(0, limit - 1)}…` : value;
}

// The session's name for a person: its title, else its id.
export function sessionName(info, sessionId) {
  return info && info.title ? cut(info.title, 120) : sessionId;
}

// Fill `node` with the session's title and, small, its id (the whole id in the tooltip).
export function showSession(node, info, sessionId, prefix = "Session") {
  const title = info && info.title ? cut(info.title, 120) : null;
  const parts = [h("span", { class: "session-title", text: title ? `${prefix}: ${title}` : `${prefix} ${sessionId}` })];
  if (title) parts.push(" ", h("small", { class: "session-id", title: sessionId, text: shortId(sessionId) }));
  node.replaceChildren(...parts);
  node.title = plain(sessionId);
}

const META_SHOWN = 6;

// The rest of the meta given at creation, as one line ("team: payments · ticket: 42"),
// or null when there is nothing but the title. Nested values show as compact JSON, cut.
export function metaLine(info) {
  const meta = info && info.meta && typeof info.meta === "object" ? info.meta : {};
  const keys = Object.keys(meta).filter((key) => key !== "title");
  if (!keys.length) return null;
  const parts = keys.slice(0, META_SHOWN).map((key) => {
    const value = meta[key];
    const text = typeof value === "string" ? value : JSON.stringify(value);
    return `${cut(key, 40)}: ${cut(text, 60)}`;
  });
  if (keys.length > META_SHOWN) parts.push(`${keys.length - META_SHOWN} more`);
  return h("p", { class: "session-meta", text: parts.join(" · ") });
}

// "release-bot", or null when the host named no agent.
export function agentName(interaction) {
  const context = interaction && interaction.context;
  return context && context.agent ? cut(context.agent, 80) : null;
}

// The strip above a tray: who is asking and what it was doing, or null without context.
export function askedBy(interaction) {
  const context = interaction && interaction.context;
  if (!context) return null;
  const parts = [];
  const agent = context.agent ? cut(context.agent, 80) : null;
  parts.push(h("span", { class: "asked-agent", text: agent ? `${agent} asks` : "The agent asks" }));
  if (context.doing) {
    const doing = cut(context.doing, DOING_SHOWN);
    parts.push(h("q", { class: "asked-doing", title: doing, text: doing }));
  }
  if (context.tool && context.tool.name) {
    const input = context.tool.input ? ` ${cut(context.tool.input, 120)}` : "";
    parts.push(
      h("span", { class: "asked-tool" }, "from the tool call ", h("code", { text: `${cut(context.tool.name, 80)}${input}` })),
    );
  }
  const node = h("div", { class: "asked-by", role: "note", "aria-label": "Who is asking" }, parts);
  return node;
}

// One line about who asked, for the inbox row and the history: "release-bot: doing…".
export function contextLine(context) {
  if (!context) return "";
  const bits = [];
  if (context.agent) bits.push(cut(context.agent, 80));
  if (context.doing) bits.push(cut(context.doing, 120));
  return bits.join(" — ");
}
