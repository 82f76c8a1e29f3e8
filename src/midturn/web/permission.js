// The permission tray: compact (summary, risk, the four decisions) with the raw details
// or diff behind a disclosure whose content scrolls inside a capped height. A high-risk
// request says so in a banner (icon and words, not colour alone) and makes no decision
// the primary one. Keys: 1–4 move to a decision, the arrows move between them, Enter
// presses the focused one; nothing is ever pressed for the person.

import { countdown, h, setText, uid } from "./dom.js";
import { isTextField, moveFocus } from "./keys.js";
import { sentence } from "./text.js";

const RISK_TEXT = { low: "Low risk", medium: "Medium risk", high: "High risk" };

export class PermissionTray {
  // actions: {decide(decision, message), stop()} returning promises that settle it.
  constructor(interaction, actions, waiting) {
    this.interaction = interaction;
    this.actions = actions;
    this.busy = false;
    const request = interaction.permission;
    const risk = RISK_TEXT[request.risk] ? request.risk : "medium";
    const titleId = uid("tray-title");
    this.more = h("span", { class: "more" });
    this.setWaiting(waiting);
    this.timer = countdown(interaction.deadline, "denied in");
    const summaryId = uid("summary");
    this.error = h("p", { class: "error", role: "alert", hidden: true });
    this.note = h("input", {
      type: "text",
      class: "deny-note",
      autocomplete: "off",
      placeholder: "Note (sent with Deny)",
      "aria-label": "Note for the agent, sent with Deny",
      maxlength: 2000,
    });
    const button = (text, cls, decision, number) =>
      h(
        "button",
        { type: "button", class: cls, on: { click: () => this.decide(decision) } },
        h("span", { class: "key-hint", "aria-hidden": "true", text: String(number) }),
        text,
      );
    const high = risk === "high";
    this.allow = button("Allow", high ? "" : "primary", "allow", 1);
    this.stopButton = h(
      "button",
      { type: "button", class: "quiet stop", on: { click: () => this.run(() => this.actions.stop()) } },
      h("span", { class: "key-hint", "aria-hidden": "true", text: "4" }),
      "Stop turn",
    );
    this.decisions = [this.allow, button("Allow for this turn", "", "allow_for_turn", 2), button("Deny", "danger", "deny", 3), this.stopButton];
    this.details = request.details ? details(request.details) : null;
    this.root = h(
      "section",
      {
        class: `tray tray-permission risk-${risk}`,
        role: "region",
        "aria-labelledby": titleId,
        "aria-describedby": summaryId,
        tabindex: -1,
        "data-interaction": interaction.id,
      },
      h(
        "div",
        { class: "tray-head" },
        h("span", { class: `risk risk-${risk}`, text: RISK_TEXT[risk] }),
        h("h2", { id: titleId, class: "tool" }, "Run ", h("code", { text: request.tool }), "?"),
        this.more,
        h("span", { class: "spacer" }),
        this.timer ? this.timer.node : null,
      ),
      high ? riskBanner() : null,
      h("p", { id: summaryId, class: "summary", text: request.summary }),
      this.details,
      this.error,
      h("div", { class: "actions" }, this.decisions.slice(0, 3), this.note, this.stopButton),
    );
    this.root.addEventListener("keydown", (event) => this.key(event));
    this.note.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.isComposing) {
        event.preventDefault();
        this.decide("deny");
      }
    });
  }

  focus() {
    this.root.focus();
  }

  key(event) {
    if (event.isComposing || this.busy || event.defaultPrevented) return;
    const target = event.target;
    if (event.key === "Escape") {
      if (target === this.note) {
        event.preventDefault();
        this.root.focus();
      } else if (this.details && this.details.open) {
        event.preventDefault();
        this.details.open = false;
        this.details.querySelector("summary").focus();
      }
      return;
    }
    if (isTextField(target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (/^[1-4]$/.test(event.key)) {
      event.preventDefault();
      this.decisions[Number(event.key) - 1].focus();
    } else if (this.decisions.includes(target) && event.key.startsWith("Arrow")) {
      event.preventDefault();
      const forward = event.key === "ArrowRight" || event.key === "ArrowDown";
      moveFocus(this.decisions, target, forward ? 1 : -1);
    }
  }

  destroy() {
    if (this.timer) this.timer.stop();
  }

  setWaiting(count) {
    setText(this.more, count > 0 ? `${count} more waiting` : "");
    this.more.hidden = count <= 0;
  }

  decide(decision) {
    const message = decision === "deny" ? this.note.value.trim() : "";
    this.run(() => this.actions.decide(decision, message || null));
  }

  async run(action) {
    if (this.busy) return;
    this.busy = true;
    this.sync();
    try {
      await action();
    } catch (error) {
      this.busy = false;
      this.sync();
      this.error.hidden = false;
      setText(this.error, sentence(error.message || String(error)));
    }
  }

  sync() {
    this.root.setAttribute("aria-busy", this.busy ? "true" : "false");
    this.root.classList.toggle("busy", this.busy);
    if (this.busy) this.error.hidden = true;
    for (const control of this.root.querySelectorAll("button, input")) control.disabled = this.busy;
  }
}

// Unmissable: an icon, the words and a colour, above the summary.
function riskBanner() {
  return h(
    "p",
    { class: "risk-banner" },
    h("span", { class: "risk-icon", "aria-hidden": "true", text: "⚠" }),
    h(
      "span",
      {},
      h("strong", { text: "High risk." }),
      " Read the command and its details before you decide; no choice is made for you.",
    ),
  );
}

function details(text) {
  const lines = text.split("\n").length;
  const label = lines > 1 ? `Details (${lines} lines)` : "Details";
  return h(
    "details",
    { class: "details" },
    h("summary", { text: label }),
    h("pre", { class: "details-body", tabindex: 0, "aria-label": "Details" }, detailLines(text)),
  );
}

// A unified diff gets its added and removed lines marked (still text, never markup);
// anything else stays one text node.
function detailLines(text) {
  const lines = text.split("\n");
  const diff = lines.some((line) => line.startsWith("@@ ") || line.startsWith("+++ "));
  if (!diff) return text;
  return lines.map((line, index) => {
    const end = index < lines.length - 1 ? "\n" : "";
    let cls = null;
    if (line.startsWith("@@")) cls = "hunk";
    else if (line.startsWith("+") && !line.startsWith("+++")) cls = "add";
    else if (line.startsWith("-") && !line.startsWith("---")) cls = "del";
    return cls ? h("span", { class: cls }, line + end) : line + end;
  });
}
