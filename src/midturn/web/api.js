// Everything the inbox knows about the wire (docs/protocol.md) lives in this module:
// the routes, the bearer token, the error body, the answer payload and the event stream.

import { SseParser } from "./sse.js";

const CREDENTIAL_KEY = "midturn.credential";

export class ApiError extends Error {
  constructor(status, body) {
    const message = body && typeof body.message === "string" ? body.message : `HTTP ${status}`;
    super(message);
    this.status = status;
    this.code = body && typeof body.error === "string" ? body.error : "http_error";
    this.body = body;
  }

  // The interaction settled before this response: someone else answered, or it was
  // cancelled or timed out.
  get alreadySettled() {
    return this.status === 409;
  }

  // The token does not reach this route: nothing will change on retry.
  get fatal() {
    return this.status === 401 || this.status === 403;
  }
}

// The credential from the URL fragment (`#token=…` or `#session=…&token=…`), which the
// browser never sends to the server. It moves into this tab's sessionStorage and out of
// the address bar, so it does not end up in history or screenshots; a reload finds it
// there. Returns {token, session} (either may be null) for the current view.
// `#interaction=<id>` (a link for one request, as an MCP client's URL mode opens it)
// carries no credential: the page uses the token this tab holds, or asks for one.
// Returns {token, session, interaction} (any may be null) and `fresh`: whether the
// token came from this fragment (a link just opened) rather than from the tab's storage.
export function takeCredential(location, history, storage) {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  const session = params.get("session");
  const interaction = params.get("interaction");
  const token = params.get("token");
  if (token) {
    rememberToken(storage, token);
    const kept = new URLSearchParams();
    if (session) kept.set("session", session);
    if (interaction) kept.set("interaction", interaction);
    history.replaceState(null, "", `${location.pathname}${location.search}#${kept}`);
  }
  let stored = null;
  try {
    stored = JSON.parse(storage.getItem(CREDENTIAL_KEY) || "null");
  } catch {
    stored = null;
  }
  return {
    token: stored && stored.token ? stored.token : null,
    session: session || null,
    interaction: interaction || null,
    fresh: Boolean(token),
  };
}

export function rememberToken(storage, token) {
  storage.setItem(CREDENTIAL_KEY, JSON.stringify({ token }));
}

// What a person pastes to sign in: a bare token, or a whole link with `#token=…`.
export function tokenFrom(text) {
  const value = (text || "").trim();
  const at = value.indexOf("#");
  if (at >= 0) return new URLSearchParams(value.slice(at + 1)).get("token");
  return value && !/\s/.test(value) ? value : null;
}

export function forgetCredential(storage) {
  storage.removeItem(CREDENTIAL_KEY);
}

const enc = encodeURIComponent;

// How many pending interactions one request reads, and how many past events a freshly
// opened view shows (docs/web-inbox.md).
export const PAGE_SIZE = 100;
export const TAIL_EVENTS = 200;

export class Api {
  constructor(token, base = "") {
    this.token = token;
    this.base = base;
  }

  headers(extra = {}) {
    return { Authorization: `Bearer ${this.token}`, Accept: "application/json", ...extra };
  }

  async request(method, path, body) {
    const init = { method, headers: this.headers(), cache: "no-store" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(this.base + path, init);
    let parsed = null;
    try {
      parsed = await response.json();
    } catch {
      parsed = null;
    }
    if (!response.ok) throw new ApiError(response.status, parsed);
    return parsed;
  }

  // {role: "admin" | "agent" | "answer", session_id}
  whoami() {
    return this.request("GET", "/v1/whoami");
  }

  // The pending interactions: one session's queue (head first), or with no session the
  // admin inbox of every session (oldest first), read a page at a time (`next_cursor`).
  async pending(sessionId) {
    const path = sessionId
      ? `/v1/sessions/${enc(sessionId)}/interactions?status=pending&limit=${PAGE_SIZE}`
      : `/v1/inbox?limit=${PAGE_SIZE}`;
    const all = [];
    let cursor = null;
    do {
      const suffix = cursor === null ? "" : `&cursor=${enc(cursor)}`;
      const body = await this.request("GET", path + suffix);
      all.push(...body.interactions);
      cursor = body.next_cursor || null;
    } while (cursor !== null);
    return all;
  }

  // One ask or permission ({interaction, output, secrets}); the route is tried as an
  // ask first, then as a permission.
  async interaction(id) {
    try {
      return await this.request("GET", `/v1/asks/${enc(id)}`);
    } catch (error) {
      if (error.status !== 404) throw error;
      return await this.request("GET", `/v1/permissions/${enc(id)}`);
    }
  }

  // payload is any answer shape of docs/contract.md#answers; see answerPayload() below.
  answer(askId, payload) {
    return this.request("POST", `/v1/asks/${enc(askId)}/answer`, payload);
  }

  redirect(askId, message) {
    return this.answer(askId, { redirect: message });
  }

  decide(permissionId, decision, message) {
    const body = { decision };
    if (message) body.message = message;
    return this.request("POST", `/v1/permissions/${enc(permissionId)}/decision`, body);
  }

  stopTurn(sessionId, turnId) {
    return this.request("POST", `/v1/sessions/${enc(sessionId)}/turns/${enc(turnId)}/stop`);
  }

  // Follow an event stream until `signal` aborts: one session's, or every session's.
  // The first connection starts with only the newest TAIL_EVENTS events (the queue comes
  // from the REST route; the log is history), not the whole log. Reconnects after a drop
  // (or a `stream_dropped` frame), resuming with Last-Event-ID so nothing is lost or
  // repeated.
  // handlers: onEvent(event) with the parsed JSON event, onState("live" | "down"),
  // onFatal(ApiError) when the token no longer reaches the stream.
  async follow(sessionId, handlers, signal) {
    const path = sessionId ? `/v1/sessions/${enc(sessionId)}/events` : "/v1/events";
    let lastId = null;
    let retryMs = 2000;
    let failures = 0;
    while (!signal.aborted) {
      try {
        const headers = this.headers({ Accept: "text/event-stream" });
        if (lastId !== null) headers["Last-Event-ID"] = lastId;
        const url = lastId === null ? `${path}?tail=${TAIL_EVENTS}` : path;
        const response = await fetch(this.base + url, { headers, signal, cache: "no-store" });
        if (!response.ok) {
          let body = null;
          try {
            body = await response.json();
          } catch {
            body = null;
          }
          const error = new ApiError(response.status, body);
          if (error.fatal) {
            handlers.onFatal(error);
            return;
          }
          throw error;
        }
        failures = 0;
        handlers.onState("live");
        const parser = new SseParser();
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const frame of parser.push(value)) {
            if (frame.retry !== null) retryMs = frame.retry;
            if (frame.id !== null) lastId = frame.id;
            if (frame.data === null || frame.id === null) continue; // e.g. stream_dropped
            let event;
            try {
              event = JSON.parse(frame.data);
            } catch {
              continue;
            }
            handlers.onEvent(event);
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        failures += 1;
      }
      handlers.onState("down");
      const backoff = Math.min(retryMs * 2 ** Math.min(failures, 3), 15000);
      await sleep(backoff * (0.75 + Math.random() / 2), signal);
    }
  }
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

// The answer body for an ask from the tray's per-question state (docs/contract.md#answers, keyed by
// question id). Each state is {skipped, selected: Set<index>, other: bool, otherText,
// text}; an unanswered or skipped question is null.
export function answerPayload(ask, states) {
  const answers = {};
  ask.questions.forEach((question, index) => {
    answers[question.id] = questionValue(question, states[index]);
  });
  return { answers };
}

function questionValue(question, state) {
  if (!state || state.skipped) return null;
  if (question.kind === "text") {
    const text = state.text.trim() === "" ? null : state.text;
    return text === null ? null : { selected: [], text };
  }
  const selected = [...state.selected]
    .sort((a, b) => a - b)
    .map((index) => optionKey(question.options[index]));
  const text = state.other && state.otherText.trim() !== "" ? state.otherText.trim() : null;
  if (selected.length === 0 && text === null && !(question.multi && question.min_choices === 0 && state.touched)) return null;
  return { selected, text };
}

// An option by id when it has one (ids resolve first), else by its exact label.
function optionKey(option) {
  return option.id ? option.id : option.label;
}

export function isSettledEvent(type) {
  return (
    type === "permission_decided" ||
    (type.startsWith("user_question_") && type !== "user_question_requested")
  );
}

export function isRequestedEvent(type) {
  return type === "user_question_requested" || type === "permission_requested";
}
