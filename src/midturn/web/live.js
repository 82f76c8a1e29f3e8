// The live set of pending interactions: one session's queue or the admin inbox, kept
// current from the event stream (applied as events arrive) and re-read from the REST
// route whenever the stream (re)connects. A settled interaction never comes back.

import { isRequestedEvent, isSettledEvent } from "./api.js";

export class LiveQueue {
  // handlers: onChange(list), onEvent(event), onState("live" | "down"), onFatal(error)
  constructor(api, sessionId, handlers) {
    this.api = api;
    this.sessionId = sessionId;
    this.handlers = handlers;
    this.items = new Map(); // id -> {interaction, seen}
    this.settled = new Set();
    this.counter = 0;
    this.refreshing = false;
    this.dirty = false;
    this.controller = null;
  }

  start() {
    this.controller = new AbortController();
    this.api.follow(
      this.sessionId,
      {
        onEvent: (event) => this.apply(event),
        onState: (state) => {
          this.handlers.onState(state);
          if (state === "live") this.refresh();
        },
        onFatal: (error) => this.handlers.onFatal(error),
      },
      this.controller.signal,
    );
    this.refresh();
  }

  stop() {
    if (this.controller) this.controller.abort();
    this.controller = null;
  }

  list() {
    return [...this.items.values()]
      .map((entry) => entry.interaction)
      .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || (a.id < b.id ? -1 : 1));
  }

  // Drop an interaction at once (this page settled it, or learned it is settled).
  settle(id) {
    this.settled.add(id);
    if (this.items.delete(id)) this.changed();
  }

  apply(event) {
    this.counter += 1;
    const interaction = event.data && event.data.interaction;
    const id = event.interaction_id || (interaction && interaction.id);
    if (id && isSettledEvent(event.type)) {
      this.settled.add(id);
      this.items.delete(id);
    } else if (id && isRequestedEvent(event.type) && interaction && !this.settled.has(id)) {
      if (interaction.status === "pending") this.items.set(id, { interaction, seen: this.counter });
    }
    this.handlers.onEvent(event);
    if (id) this.changed();
  }

  async refresh() {
    if (this.refreshing) {
      this.dirty = true;
      return;
    }
    this.refreshing = true;
    try {
      do {
        this.dirty = false;
        const start = this.counter;
        const pending = await this.api.pending(this.sessionId);
        const next = new Map();
        for (const interaction of pending) {
          if (!this.settled.has(interaction.id)) next.set(interaction.id, { interaction, seen: start });
        }
        // Keep what the stream added while the request was in flight.
        for (const [id, entry] of this.items) {
          if (entry.seen > start && !next.has(id) && !this.settled.has(id)) next.set(id, entry);
        }
        this.items = next;
        this.changed();
      } while (this.dirty);
    } catch (error) {
      if (error.fatal) this.handlers.onFatal(error);
      // Otherwise the next (re)connect of the stream reads the queue again.
    } finally {
      this.refreshing = false;
    }
  }

  changed() {
    if (this.controller !== null) this.handlers.onChange(this.list());
  }
}
