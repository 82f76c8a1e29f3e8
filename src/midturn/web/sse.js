// A server-sent events parser for fetch() streams (the WHATWG event-stream format).
//
// EventSource cannot send an Authorization header, so the inbox reads the stream with
// fetch() and feeds the decoded text here, chunk by chunk. A chunk may end anywhere,
// even inside a line or between "\r" and "\n"; the parser keeps the remainder.

export class SseParser {
  constructor() {
    this.buffer = "";
    this.reset();
  }

  reset() {
    this.data = [];
    this.type = "";
    this.id = null;
    this.retry = null;
  }

  // Feed decoded text; returns the complete events it finished, each
  // {id, type, data, retry} (data is null for a frame with no data lines, e.g. retry only).
  push(text) {
    this.buffer += text;
    const events = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (match === null) break;
      // A lone "\r" at the very end may be the first half of "\r\n": wait for more.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const event = this.line(line);
      if (event !== null) events.push(event);
    }
    return events;
  }

  line(line) {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null; // a comment (keep-alive)
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.type = value;
    else if (field === "id" && !value.includes("\0")) this.id = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retry = Number(value);
    return null;
  }

  dispatch() {
    const event = {
      id: this.id,
      type: this.type || "message",
      data: this.data.length ? this.data.join("\n") : null,
      retry: this.retry,
    };
    const empty = event.data === null && event.id === null && event.retry === null;
    this.reset();
    return empty ? null : event;
  }
}
