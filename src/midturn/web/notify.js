// Browser notifications: when a new interaction reaches the head of a session's queue and
// this tab is not in front of the person (hidden, or the window lost focus), raise one
// Notification for it — once per interaction, never for what was already waiting when
// the page opened. Permission is asked only from the "Notify me" button (a user
// gesture), never on load.

import { plain, setText } from "./dom.js";
import { headline } from "./text.js";

const BODY_MAX = 180;

function cut(text, limit) {
  const value = plain(text).replace(/\s+/g, " ").trim();
  return value.length > limit ? `${value.slice(0, limit - 1)}…` : value;
}

// The head of each session's queue in `list` (asks and permissions share one FIFO per
// session; a list is in queue order, so a session's first item is its head).
export function heads(list) {
  const seen = new Map();
  for (const item of list) if (!seen.has(item.session_id)) seen.set(item.session_id, item);
  return [...seen.values()];
}

export class Notifier {
  // button: the "Notify me" control; name(sessionId) -> Promise<string> names a session;
  // open(interaction) brings its session up when the person clicks the notification.
  constructor(button, name, open = () => {}) {
    this.button = button;
    this.name = name;
    this.open = open;
    this.shown = new Set(); // interaction ids already notified, or waiting when we began
    this.started = false;
    this.focused = document.hasFocus();
    window.addEventListener("focus", () => {
      this.focused = true;
    });
    window.addEventListener("blur", () => {
      this.focused = false;
    });
    this.supported = typeof window.Notification === "function";
    button.addEventListener("click", () => this.ask());
    this.render();
  }

  permission() {
    return this.supported ? window.Notification.permission : "unsupported";
  }

  render() {
    const state = this.permission();
    this.button.hidden = state === "unsupported";
    this.button.disabled = state !== "default";
    setText(
      this.button,
      state === "granted" ? "Notifications on" : state === "denied" ? "Notifications blocked" : "Notify me",
    );
    this.button.title =
      state === "denied"
        ? "This browser blocks notifications for this page; allow them in the site settings."
        : "Get a browser notification when an agent asks something while this tab is in the background.";
  }

  async ask() {
    if (!this.supported || this.permission() !== "default") return;
    try {
      await window.Notification.requestPermission();
    } finally {
      this.render();
    }
  }

  // The person is looking at this tab.
  watched() {
    return document.visibilityState === "visible" && this.focused;
  }

  // A new list of pending interactions (a session's queue or the whole inbox).
  update(list) {
    const fresh = heads(list).filter((item) => !this.shown.has(item.id));
    for (const item of fresh) this.shown.add(item.id);
    if (!this.started) {
      this.started = true; // what waits when the page opens is on screen already
      return;
    }
    if (this.permission() !== "granted" || this.watched()) return;
    for (const item of fresh) this.raise(item);
  }

  async raise(interaction) {
    const session = await this.name(interaction.session_id);
    const agent = interaction.context && interaction.context.agent ? cut(interaction.context.agent, 60) : null;
    const title = cut(`${agent ? `${agent} asks` : "An agent asks"} · ${session}`, 120);
    try {
      const notification = new window.Notification(title, {
        body: cut(headline(interaction), BODY_MAX),
        tag: `midturn-${interaction.id}`,
      });
      notification.addEventListener("click", () => {
        window.focus();
        this.open(interaction);
        notification.close();
      });
    } catch {
      // A browser that only notifies from a service worker: the tab title still counts.
    }
  }
}
