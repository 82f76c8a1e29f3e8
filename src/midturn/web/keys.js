// The keys the inbox shares across trays, and the `?` overlay that lists them. The
// bindings follow the terminal picker's (docs/terminal.md#keys) where a browser allows:
// 1–9 pick, ↑↓ move, ←→ previous / next question, Space toggles, Enter confirms. Esc
// backs out (closes the overlay or the details, leaves a text field) and never skips.

import { h } from "./dom.js";

// What the overlay lists: [section, [[keys, what they do], …]].
const SHORTCUTS = [
  [
    "Questions",
    [
      ["1 – 9", "Pick that option (toggle it in a multi-select)"],
      ["↑ ↓", "Move between the options"],
      ["← →", "Previous / next question"],
      ["Space", "Select the option under the focus, or toggle a checkbox"],
      ["Enter", "Pick the focused option and go on (on the last: review; single question: submit)"],
      ["Ctrl + Enter", "Go on from a text answer (Enter adds a line)"],
      ["Esc", "Leave a text field for the options; on the review, back to the last question"],
    ],
  ],
  [
    "Permissions",
    [
      ["1 – 4", "Move to Allow, Allow for this turn, Deny or Stop turn"],
      ["← → ↑ ↓", "Move between the decisions"],
      ["Enter", "Press the focused decision (nothing is pressed for you)"],
      ["Esc", "Close the details; leave the note field"],
    ],
  ],
  [
    "Anywhere",
    [
      ["Tab / Shift + Tab", "Move between controls"],
      ["Enter (chat box)", "Send the message instead of answering; Shift + Enter adds a line"],
      ["?", "Show these shortcuts"],
      ["Esc", "Close this overlay"],
    ],
  ],
];

// A field that takes typed text (so 1–9, ? and the arrows type there instead).
export function isTextField(node) {
  if (!node || !node.tagName) return false;
  if (node.tagName === "TEXTAREA" || node.isContentEditable) return true;
  return node.tagName === "INPUT" && !["radio", "checkbox", "button", "submit"].includes(node.type);
}

// A radio or checkbox.
export function isChoice(node) {
  return Boolean(node) && node.tagName === "INPUT" && (node.type === "radio" || node.type === "checkbox");
}

// Move the focus from `current` by `step` through `controls`, wrapping round.
export function moveFocus(controls, current, step) {
  const live = controls.filter((control) => !control.disabled && !control.hidden);
  if (live.length === 0) return;
  const at = live.indexOf(current);
  const next = at < 0 ? 0 : (at + step + live.length) % live.length;
  live[next].focus();
}

function focusables(root) {
  return [...root.querySelectorAll("button, [href], input, textarea, [tabindex]:not([tabindex='-1'])")].filter(
    (node) => !node.disabled && node.offsetParent !== null,
  );
}

// The overlay: a modal dialog (the page behind is inert), the focus kept inside it, Esc
// or Close shuts it and gives the focus back to where it was.
export class ShortcutOverlay {
  constructor() {
    this.returnTo = null;
    this.close = h("button", { type: "button", class: "overlay-close", text: "Close" });
    this.root = h(
      "dialog",
      { class: "overlay", "aria-labelledby": "shortcuts-title" },
      h(
        "div",
        { class: "overlay-head" },
        h("h2", { id: "shortcuts-title", text: "Keyboard shortcuts" }),
        h("span", { class: "spacer" }),
        this.close,
      ),
      h("div", { class: "overlay-body", tabindex: 0, "aria-label": "The shortcuts" }, SHORTCUTS.map(([title, rows]) => section(title, rows))),
    );
    this.close.addEventListener("click", () => this.root.close());
    this.root.addEventListener("close", () => {
      if (this.returnTo && this.returnTo.isConnected) this.returnTo.focus();
      this.returnTo = null;
    });
    this.root.addEventListener("keydown", (event) => {
      if (event.key !== "Tab") return;
      event.preventDefault();
      moveFocus(focusables(this.root), document.activeElement, event.shiftKey ? -1 : 1);
    });
  }

  get open() {
    return this.root.open;
  }

  show() {
    if (this.root.open) return;
    this.returnTo = document.activeElement;
    this.root.showModal();
    this.close.focus();
  }
}

function section(title, rows) {
  return h(
    "section",
    { class: "overlay-section" },
    h("h3", { text: title }),
    h(
      "table",
      { class: "shortcuts", "aria-label": `${title}: keys and what they do` },
      h(
        "tbody",
        {},
        rows.map(([keys, does]) => h("tr", {}, h("th", { scope: "row" }, h("kbd", { text: keys })), h("td", { text: does }))),
      ),
    ),
  );
}

// Put the overlay and its button on the page; `?` outside a text field opens it.
export function installShortcuts(bar, before) {
  const overlay = new ShortcutOverlay();
  document.body.append(overlay.root);
  const button = h("button", {
    type: "button",
    class: "quiet keys-button",
    "aria-label": "Keyboard shortcuts",
    title: "Keyboard shortcuts (?)",
    text: "?",
    on: { click: () => overlay.show() },
  });
  bar.insertBefore(button, before);
  document.addEventListener("keydown", (event) => {
    if (event.key !== "?" || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    if (overlay.open || isTextField(event.target)) return;
    event.preventDefault();
    overlay.show();
  });
  return overlay;
}
