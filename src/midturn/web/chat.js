// The chat box under a question: a message to the agent instead of an answer. The ask
// then settles as `redirected` and the agent continues its turn with the message
// (docs/runtime.md#redirect). Enter sends, Shift+Enter starts a new line, and Send stays
// disabled while there is nothing to send.

import { h, uid } from "./dom.js";

export class ChatBox {
  // send(message): called with the trimmed message when the person sends it.
  constructor(send) {
    this.send = send;
    this.locked = false;
    const fieldId = uid("chat");
    const hintId = uid("chat-hint");
    this.input = h("textarea", {
      id: fieldId,
      class: "chat-input",
      rows: 1,
      autocomplete: "off",
      placeholder: "Write a message…",
      "aria-describedby": hintId,
      maxlength: 10000,
    });
    this.button = h("button", { type: "submit", class: "chat-send", text: "Send", disabled: true });
    this.root = h(
      "form",
      { class: "chat", on: { submit: (event) => this.submit(event) } },
      h("label", { for: fieldId, class: "chat-label", text: "Reply in chat instead" }),
      h("p", {
        id: hintId,
        class: "chat-hint",
        text: "Your message goes to the agent in place of an answer, and it carries on with what you wrote.",
      }),
      h("div", { class: "chat-row" }, this.input, this.button),
    );
    this.input.addEventListener("input", () => this.sync(this.locked));
    this.input.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
      event.preventDefault();
      this.submit(event);
    });
  }

  get message() {
    return this.input.value.trim();
  }

  submit(event) {
    event.preventDefault();
    if (this.locked || this.message === "") return;
    this.send(this.message);
  }

  // Lock everything while a settle is in flight; otherwise Send follows the text.
  sync(locked) {
    this.locked = locked;
    this.input.disabled = locked;
    this.button.disabled = locked || this.message === "";
  }

  focus() {
    this.input.focus();
  }
}
