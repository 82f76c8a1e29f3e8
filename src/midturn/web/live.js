// The live set of pending interactions: one session's queue or the admin inbox.
//
// The REST route is the truth about what is pending; the event stream says when to look
// again. A `*_requested` event (or a (re)connect) reads the queue again — reads that
// overlap collapse into one more read — and a settling event removes its interaction at
// once. A replayed request that has since settled therefore never flashes up, and a
// settled interaction never comes back, whatever order reads and events land in.

import { isRequestedEvent, isSettledEvent } from "./api.js";

export class LiveQueue {
  // handlers: onChange(list), onEvent(event), onState("live" | "down"), onFatal(error)
  constructor(api, sessionId, handlers) {
    this.api = api;
    this.sessionId = sessionId;
    this.handlers = handlers;
    this.items = [];
    this.settled = new Set();
    this.outcomes = new Map(); // id -> the status a settling event reported
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
    return this.items;
  }

  // Drop an interaction at once (this page settled it, or learned it is settled).
  settle(id) {
    this.settled.add(id);
    const before = this.items.length;
    this.items = this.items.filter((item) => item.id !== id);
    if (this.items.length !== before) this.changed();
  }

  apply(event) {
    const id = event.interaction_id || (event.data && event.data.interaction && event.data.interaction.id);
    this.handlers.onEvent(event);
    if (id && isSettledEvent(event.type)) {
      const interaction = event.data && event.data.interaction;
      if (interaction && interaction.status) this.outcomes.set(id, interaction.status);
      this.settle(id);
    }
    else if (isRequestedEvent(event.type)) this.refresh();
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
        const pending = await this.api.pending(this.sessionId);
        this.items = pending.filter((item) => !this.settled.has(item.id));
        this.changed();
      } while (this.dirty && this.controller !== null);
    } catch (error) {
      if (error.fatal) this.handlers.onFatal(error);
      // Otherwise the next event or (re)connect of the stream reads the queue again.
    } finally {
      this.refreshing = false;
    }
  }

  // How an interaction settled, when an event said so (else undefined).
  outcome(id) {
    return this.outcomes.get(id);
  }

  changed() {
    if (this.controller !== null) this.handlers.onChange(this.list());
  }
}
