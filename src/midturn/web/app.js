// The web inbox: reads its token from the URL fragment, then shows either the admin
// inbox (every session with something pending) or one session, whose composer slot is
// taken over by the head of the session's queue and given back unchanged afterwards.

import { Api, forgetCredential, isSettledEvent, rememberToken, takeCredential, tokenFrom } from "./api.js";
import { announce, h, plain, setText } from "./dom.js";
import { HistoryPanel } from "./history.js";
import { Labels, agentName, askedBy, metaLine, sessionName, showSession } from "./labels.js";
import { Notifier } from "./notify.js";
import { LiveQueue } from "./live.js";
import { PermissionTray } from "./permission.js";
import { installShortcuts } from "./keys.js";
import { QuestionTray } from "./questions.js";
import { eventLine, headline, sentence } from "./text.js";

const $ = (id) => document.getElementById(id);

let current = null; // the open view: {stop()}
let role = null;
let tokenSession = null;
let api = null;
let labels = null; // session titles (labels.js)
let notifier = null; // browser notifications (notify.js), one for the tab

const CONNECTION_TEXT = { live: "Live", down: "Reconnecting…", connecting: "Connecting…", off: "Not connected" };

function setConnection(state) {
  const node = $("conn");
  setText(node, CONNECTION_TEXT[state]);
  node.className = `conn conn-${state}`;
}

// Close the open view and its event stream (before another opens, or on a failure).
function closeView() {
  if (current) current.stop();
  current = null;
  setConnection("off");
  setText($("where"), "");
}

// The tab title counts what waits, so a background tab shows it.
function setTitle(view, waiting) {
  document.title = plain(`${waiting ? `(${waiting}) ` : ""}midturn · ${view}`);
}

function fail(message) {
  closeView();
  for (const view of ["inbox-view", "session-view", "signin"]) $(view).hidden = true;
  $("problem").hidden = false;
  setText($("problem-text"), sentence(message));
}

// -- the session view -----------------------------------------------------------------

class SessionView {
  // focusId: the request a `#interaction=` link named; the view says where it stands
  // (it opens in the slot once it is the head of the queue).
  constructor(sessionId, focusId = null) {
    this.sessionId = sessionId;
    this.focusId = focusId;
    this.tray = null;
    this.ownSettles = new Set();
    this.draft = $("draft");
    this.composer = $("composer");
    this.slot = $("slot");
    this.notice = $("slot-notice");
    this.history = $("history");
    this.draftKey = `midturn.draft.${sessionId}`;
    this.onDraft = () => sessionStorage.setItem(this.draftKey, this.draft.value);
    this.queue = new LiveQueue(api, sessionId, {
      onChange: (list) => this.show(list),
      onEvent: (event) => this.log(event),
      onState: setConnection,
      onFatal: (error) => fail(error.message),
    });
  }

  start() {
    $("session-view").hidden = false;
    $("back").hidden = role !== "admin";
    setText($("where"), `Session ${this.sessionId}`);
    labels.session(this.sessionId).then((info) => {
      if (current !== this) return;
      showSession($("where"), info, this.sessionId);
      setText($("session-title"), `Session ${sessionName(info, this.sessionId)}`);
      this.meta = metaLine(info); // the rest of the meta given at creation
      if (this.meta) $("past").before(this.meta);
    });
    this.past = new HistoryPanel(api, this.sessionId, $("past"));
    this.history.replaceChildren();
    this.say("");
    this.draft.value = sessionStorage.getItem(this.draftKey) || "";
    this.draft.addEventListener("input", this.onDraft);
    this.queue.start();
  }

  stop() {
    this.queue.stop();
    this.past.stop();
    if (this.meta) this.meta.remove();
    $("where").removeAttribute("title");
    this.draft.removeEventListener("input", this.onDraft);
    this.closeTray();
    $("session-view").hidden = true;
  }

  show(list) {
    const head = list[0] || null;
    if (this.tray && (!head || head.id !== this.tray.interaction.id)) {
      const id = this.tray.interaction.id;
      this.closeTray();
      if (!this.ownSettles.has(id)) this.say(goneMessage(this.queue.outcome(id)));
    }
    if (head && !this.tray) this.openTray(head, list.length - 1);
    else if (this.tray) this.tray.setWaiting(list.length - 1);
    this.showFocus(list);
    setText($("waiting-count"), list.length ? `${list.length} waiting` : "Nothing waiting");
    setTitle("session", list.length);
    notifier.update(list);
  }

  // Where the linked request stands: open in the slot (the head), behind others, or
  // already settled.
  showFocus(list) {
    if (!this.focusId) return;
    const at = list.findIndex((item) => item.id === this.focusId);
    if (at === 0) {
      this.tray.root.classList.add("tray-linked");
      this.say("This is the request your link opened.");
    } else if (at > 0) {
      const ahead = at === 1 ? "1 earlier request" : `${at} earlier requests`;
      this.say(`The request from your link is waiting behind ${ahead} of this session; answer those first.`);
    } else if (!this.ownSettles.has(this.focusId)) {
      const status = this.queue.outcome(this.focusId);
      this.say(status ? goneMessage(status) : "The request from your link is no longer waiting.");
      this.focusId = null;
    } else {
      this.say("");
      this.focusId = null;
    }
  }

  openTray(interaction, waiting) {
    const actions = this.actionsFor(interaction);
    this.tray =
      interaction.kind === "ask"
        ? new QuestionTray(interaction, actions, waiting)
        : new PermissionTray(interaction, actions, waiting);
    const hadFocus = document.activeElement === this.draft;
    this.composer.hidden = true;
    this.say("");
    this.slot.append(this.tray.root);
    this.asker = askedBy(interaction); // who is asking, above the tray
    if (this.asker) this.tray.root.before(this.asker);
    announce(headline(interaction));
    if (hadFocus || document.activeElement === document.body || !document.activeElement) {
      this.tray.focus();
    }
  }

  closeTray() {
    if (!this.tray) return;
    const hadFocus = this.tray.root.contains(document.activeElement);
    this.tray.root.remove();
    if (this.asker) this.asker.remove();
    this.asker = null;
    this.tray.destroy();
    this.tray = null;
    this.composer.hidden = false;
    if (hadFocus || document.activeElement === document.body) this.draft.focus();
  }

  say(text) {
    setText(this.notice, text);
    this.notice.hidden = !text;
  }

  actionsFor(interaction) {
    const settle = async (work) => {
      this.ownSettles.add(interaction.id);
      try {
        const body = await work();
        this.queue.settle(interaction.id);
        return body;
      } catch (error) {
        if (error.alreadySettled) {
          this.queue.settle(interaction.id);
          this.say("That request was already settled elsewhere; nothing was changed.");
          return null;
        }
        this.ownSettles.delete(interaction.id);
        throw error;
      }
    };
    return {
      submit: (payload) => settle(() => api.answer(interaction.id, payload)),
      redirect: (message) => settle(() => api.redirect(interaction.id, message)),
      decide: (decision, message) => settle(() => api.decide(interaction.id, decision, message)),
      stop: async () => {
        this.ownSettles.add(interaction.id);
        const body = await api.stopTurn(interaction.session_id, interaction.turn_id);
        for (const cancelled of body.cancelled || []) {
          this.ownSettles.add(cancelled.id);
          this.queue.settle(cancelled.id);
        }
        this.queue.settle(interaction.id);
      },
    };
  }

  log(event) {
    if (isSettledEvent(event.type)) this.past.changed();
    const text = eventLine(event);
    if (text === null) return;
    const time = new Date(event.at);
    this.history.append(
      h(
        "li",
        { class: `event event-${event.type}` },
        h("time", { datetime: event.at, text: time.toLocaleTimeString() }),
        h("span", { text }),
      ),
    );
    const scroller = $("history-scroll");
    scroller.scrollTop = scroller.scrollHeight;
  }
}

// Why a request left the slot when this page did not settle it.
function goneMessage(status) {
  if (status === "timed_out") return "That request timed out.";
  if (status === "cancelled") return "That request was cancelled.";
  return "That request was settled elsewhere.";
}

// -- the admin inbox --------------------------------------------------------------------

class InboxView {
  constructor() {
    this.seen = new Set();
    this.first = true;
    this.queue = new LiveQueue(api, null, {
      onChange: (list) => this.show(list),
      onEvent: () => {},
      onState: setConnection,
      onFatal: (error) => fail(error.message),
    });
  }

  start() {
    $("inbox-view").hidden = false;
    $("back").hidden = true;
    setText($("where"), "Inbox");
    this.queue.start();
  }

  stop() {
    this.queue.stop();
    $("inbox-view").hidden = true;
  }

  show(list) {
    const sessions = new Map();
    for (const interaction of list) {
      if (!sessions.has(interaction.session_id)) sessions.set(interaction.session_id, []);
      sessions.get(interaction.session_id).push(interaction);
      if (!this.seen.has(interaction.id)) {
        this.seen.add(interaction.id);
        if (!this.first) announce(`New in session ${interaction.session_id}: ${headline(interaction)}`);
      }
    }
    this.first = false;
    const rows = [...sessions].map(([sessionId, items]) => {
      const name = h("span", { class: "inbox-session", text: sessionId });
      labels.session(sessionId).then((info) => showSession(name, info, sessionId, "Session"));
      const agent = agentName(items[0]);
      return h(
        "li",
        { class: "inbox-row" },
        h(
          "a",
          { href: `#session=${encodeURIComponent(sessionId)}` },
          name,
          h("span", { class: "inbox-count", text: `${items.length} waiting` }),
          agent ? h("span", { class: "inbox-agent", text: `${agent} asks` }) : null,
          h("span", { class: "inbox-head", text: headline(items[0]) }),
          h("time", {
            class: "inbox-age",
            datetime: items[0].created_at,
            text: `waiting since ${new Date(items[0].created_at).toLocaleTimeString()}`,
          }),
        ),
      );
    });
    $("sessions").replaceChildren(...rows);
    setTitle("inbox", list.length);
    notifier.update(list);
    $("inbox-empty").hidden = rows.length > 0;
  }
}

// -- routing ----------------------------------------------------------------------------

// A `#interaction=` link without a token in this tab: ask for one (never in the URL).
// The page opened without any link (an installed app's start) asks the same way.
const INTERACTION_LEAD = $("signin-text").textContent;
const NO_LINK_LEAD =
  "Paste the link the gateway printed (it ends in #token=…) or a session's answer_url. It stays in this tab only.";

function signIn(problem, lead = null) {
  for (const view of ["inbox-view", "session-view", "problem"]) $(view).hidden = true;
  $("signin").hidden = false;
  if (lead !== null) setText($("signin-text"), lead);
  setText($("signin-error"), sentence(problem));
  $("signin-error").hidden = !problem;
  $("signin-token").value = "";
  $("signin-token").focus();
}

$("signin-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const token = tokenFrom($("signin-token").value);
  if (!token) {
    signIn("Paste the whole answer link (…#token=…) or the token itself.");
    return;
  }
  rememberToken(sessionStorage, token);
  role = null;
  $("signin").hidden = true;
  route();
});

// The session of the request a link names (the token must reach it).
async function linkedSession(interactionId) {
  try {
    const body = await api.interaction(interactionId);
    return body.interaction.session_id;
  } catch (error) {
    if (error.status === 403) {
      signIn("That token does not reach this request: sign in with its session's answer link.");
    } else if (error.status === 404) {
      fail("No request by that id: it may have been pruned, or the link is mistyped.");
    } else {
      fail(error.message);
    }
    return null;
  }
}

async function route() {
  const credential = takeCredential(window.location, window.history, sessionStorage);
  // Every link opened in this tab rebuilds the view; one with a new token also asks
  // the gateway again whose token it is (another session's answer_url, the admin link).
  closeView();
  if (credential.fresh) role = null;
  if (!credential.token) {
    signIn("", credential.interaction ? INTERACTION_LEAD : NO_LINK_LEAD);
    return;
  }
  api = new Api(credential.token);
  labels = new Labels(api);
  if (!notifier) {
    const name = async (id) => sessionName(await labels.session(id), id);
    // The admin can open any session: a click on a notification opens the one it names.
    const open = (interaction) => {
      if (role === "admin") window.location.hash = `session=${encodeURIComponent(interaction.session_id)}`;
    };
    notifier = new Notifier($("notify"), name, open);
  }
  if (role === null) {
    try {
      const me = await api.whoami();
      role = me.role;
      tokenSession = me.session_id;
    } catch (error) {
      if (error.fatal) forgetCredential(sessionStorage);
      if (error.fatal && credential.interaction) signIn(error.message);
      else fail(error.message);
      return;
    }
  }
  if (role === "agent") {
    fail("This is an agent token: it cannot answer. Open the session's answer_url instead.");
    return;
  }
  let sessionId = role === "answer" ? tokenSession : credential.session;
  if (credential.interaction) {
    sessionId = await linkedSession(credential.interaction);
    if (sessionId === null) return;
  }
  $("problem").hidden = true;
  $("signin").hidden = true;
  setConnection("connecting");
  current = sessionId ? new SessionView(sessionId, credential.interaction) : new InboxView();
  current.start();
}

installShortcuts(document.querySelector(".bar"), $("conn"));
window.addEventListener("hashchange", route);
route();
