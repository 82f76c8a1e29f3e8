// The question tray: one question at a time, Previous/Next (a choice never advances by
// itself), `2 / 3` progress, client-owned Other, multi-select, a review of every answer
// and one submit at the end. Skip question, Stop turn, and a chat box that answers with
// a message instead (the ask then settles as `redirected`).
//
// The recommended option starts selected. Enter never skips: on an option it picks the
// focused one when nothing is chosen yet, then confirms; a single question with nothing
// chosen says so instead of going in as skipped. Skip question is the only way to skip.

import { answerPayload } from "./api.js";
import { ChatBox } from "./chat.js";
import { checkQuestion, choiceHint, displayAnswer, nothingYet, preselected, unanswered } from "./choices.js";
import { countdown, h, setText, uid } from "./dom.js";
import { isChoice, isTextField, moveFocus } from "./keys.js";
import { sentence } from "./text.js";

export class QuestionTray {
  // interaction: a pending ask. actions: {submit(payload), redirect(text), stop()} each
  // returning a promise; they settle the ask (the tray is removed from outside).
  constructor(interaction, actions, waiting) {
    this.interaction = interaction;
    this.ask = interaction.ask;
    this.actions = actions;
    this.count = this.ask.questions.length;
    this.states = this.ask.questions.map((question) => ({
      touched: false,
      skipped: false,
      selected: new Set(preselected(question)),
      other: false,
      otherText: "",
      text: "",
    }));
    this.step = 0;
    this.busy = false;
    this.group = uid("q");
    this.build(waiting);
    this.render(false);
  }

  get reviewing() {
    return this.step === this.count;
  }

  get last() {
    return this.step === this.count - 1;
  }

  build(waiting) {
    const titleId = uid("tray-title");
    this.more = h("span", { class: "more" });
    this.setWaiting(waiting);
    this.timer = countdown(this.interaction.deadline, "times out in");
    this.chip = h("span", { class: "chip" });
    this.progress = h("span", { class: "progress" });
    this.stopButton = h("button", {
      type: "button",
      class: "quiet stop",
      text: "Stop turn",
      on: { click: () => this.run(() => this.actions.stop()) },
    });
    this.body = h("div", { class: "step" });
    this.error = h("p", { class: "error", role: "alert", hidden: true });
    this.previous = h("button", {
      type: "button",
      text: "Previous",
      on: { click: () => this.go(this.step - 1) },
    });
    this.skip = h("button", {
      type: "button",
      class: "quiet",
      text: "Skip question",
      on: { click: () => this.skipQuestion() },
    });
    this.primary = h("button", {
      type: "button",
      class: "primary",
      on: { click: () => this.forward() },
    });
    this.chat = new ChatBox((message) => this.run(() => this.actions.redirect(message)));
    this.root = h(
      "section",
      {
        class: "tray tray-ask",
        role: "region",
        "aria-labelledby": titleId,
        tabindex: -1,
        "data-interaction": this.interaction.id,
      },
      h(
        "div",
        { class: "tray-head" },
        h("h2", { id: titleId, class: "visually-hidden", text: "The agent is asking" }),
        this.chip,
        this.progress,
        this.more,
        h("span", { class: "spacer" }),
        this.timer ? this.timer.node : null,
        this.stopButton,
      ),
      this.body,
      this.error,
      this.chat.root,
      h("div", { class: "nav" }, this.previous, this.skip, h("span", { class: "spacer" }), this.primary),
    );
    this.root.addEventListener("keydown", (event) => this.key(event));
  }

  // -- rendering ---------------------------------------------------------------------

  render(moveFocus = true) {
    this.setError(null);
    this.body.replaceChildren();
    if (this.reviewing) this.renderReview();
    else this.renderQuestion(this.ask.questions[this.step], this.states[this.step]);
    this.previous.hidden = this.step === 0;
    this.skip.hidden = this.reviewing;
    setText(this.primary, this.primaryLabel());
    this.syncLock();
    if (moveFocus) this.focusStep();
  }

  primaryLabel() {
    if (this.reviewing || this.count === 1) return "Submit";
    return this.last ? "Review" : "Next";
  }

  renderQuestion(question, state) {
    setText(this.chip, question.header);
    this.chip.hidden = false;
    setText(this.progress, `${this.step + 1} / ${this.count}`);
    this.progress.setAttribute("aria-label", `Question ${this.step + 1} of ${this.count}`);
    const textId = uid("question");
    this.body.append(h("p", { id: textId, class: "question", tabindex: -1, text: question.question }));
    if (question.kind === "text") {
      this.body.append(this.textField(question, state, textId));
      return;
    }
    const hint = choiceHint(question);
    const hintId = hint ? uid("hint") : null;
    if (hint) this.body.append(h("p", { id: hintId, class: "hint", text: hint }));
    const group = h("div", {
      class: "options",
      role: question.multi ? "group" : "radiogroup",
      "aria-labelledby": textId,
      "aria-describedby": hintId,
    });
    const name = `${this.group}-${this.step}`;
    question.options.forEach((option, index) => {
      group.append(this.optionRow(question, state, option, index, name));
    });
    if (question.allow_other) group.append(this.otherRow(question, state, name));
    this.body.append(group);
  }

  optionRow(question, state, option, index, name) {
    const descId = option.description ? uid("desc") : null;
    const input = h("input", {
      type: question.multi ? "checkbox" : "radio",
      name,
      value: String(index),
      "aria-describedby": descId,
    });
    input.checked = state.selected.has(index);
    input.addEventListener("change", () => this.choose(question, state, index, input.checked));
    const recommended = question.recommended === index;
    return h(
      "label",
      { class: recommended ? "option recommended" : "option" },
      input,
      index < 9 ? h("span", { class: "key-hint", "aria-hidden": "true", text: String(index + 1) }) : null,
      h(
        "span",
        { class: "option-text" },
        h("span", { class: "label", text: option.label }),
        recommended ? h("span", { class: "badge", text: "Recommended" }) : null,
        option.description ? h("span", { id: descId, class: "desc", text: option.description }) : null,
        option.preview ? h("pre", { class: "preview", text: option.preview }) : null,
      ),
    );
  }

  otherRow(question, state, name) {
    const input = h("input", { type: question.multi ? "checkbox" : "radio", name, value: "other" });
    input.checked = state.other;
    const text = h("input", {
      type: question.secret ? "password" : "text", // a secret choice: its typed answer too
      class: "other-text",
      autocomplete: "off",
      placeholder: "Type your own answer",
      "aria-label": "Other: your own answer",
      maxlength: 10000,
    });
    text.value = state.otherText;
    input.addEventListener("change", () => {
      this.chooseOther(question, state, input.checked);
      if (input.checked) text.focus();
    });
    text.addEventListener("input", () => {
      state.otherText = text.value;
      if (text.value !== "" && !state.other) {
        this.chooseOther(question, state, true);
        input.checked = true;
      }
    });
    const number = question.options.length + 1;
    return h(
      "div",
      { class: "option other" },
      h(
        "label",
        { class: "other-choice" },
        input,
        number <= 9 ? h("span", { class: "key-hint", "aria-hidden": "true", text: String(number) }) : null,
        h("span", { class: "label", text: "Other" }),
      ),
      text,
    );
  }

  textField(question, state, textId) {
    const attrs = {
      class: "text-answer",
      "aria-labelledby": textId,
      placeholder: question.placeholder || "Type your answer",
      autocomplete: "off",
      maxlength: 100000,
    };
    const field = question.secret
      ? h("input", { ...attrs, type: "password" })
      : h("textarea", { ...attrs, rows: 3 });
    field.value = state.text;
    field.addEventListener("input", () => {
      state.text = field.value;
      state.touched = true;
      state.skipped = false;
    });
    return field;
  }

  renderReview() {
    this.chip.hidden = true;
    setText(this.progress, "Review");
    this.progress.removeAttribute("aria-label");
    const list = h("ol", { class: "review" });
    this.ask.questions.forEach((question, index) => {
      const shown = displayAnswer(question, this.states[index]);
      list.append(
        h(
          "li",
          {},
          h("span", { class: "chip", text: question.header }),
          h(
            "span",
            { class: "review-text" },
            h("span", { class: "review-question", text: question.question }),
            h("span", { class: shown === null ? "review-answer none" : "review-answer", text: shown ?? "(skipped)" }),
          ),
          h("button", {
            type: "button",
            class: "quiet",
            text: "Change",
            "aria-label": `Change the answer to ${question.header}`,
            on: { click: () => this.go(index) },
          }),
        ),
      );
    });
    this.body.append(h("p", { class: "question", tabindex: -1, text: "Review your answers" }), list);
  }

  focusStep() {
    const checked = this.body.querySelector("input:checked");
    const target = this.reviewing
      ? this.primary
      : checked || this.body.querySelector("input, textarea") || this.body.querySelector(".question");
    if (target) target.focus();
  }

  focus() {
    this.focusStep();
  }

  destroy() {
    if (this.timer) this.timer.stop();
  }

  // How many more interactions wait behind this one in the session's queue.
  setWaiting(count) {
    setText(this.more, count > 0 ? `${count} more waiting` : "");
    this.more.hidden = count <= 0;
  }

  // -- state changes -----------------------------------------------------------------

  choose(question, state, index, checked) {
    state.touched = true;
    state.skipped = false;
    if (!question.multi) {
      state.selected = new Set([index]);
      state.other = false;
    } else if (checked) {
      state.selected.add(index);
    } else {
      state.selected.delete(index);
    }
    this.setError(null);
  }

  chooseOther(question, state, checked) {
    state.touched = true;
    state.skipped = false;
    state.other = checked;
    if (!question.multi && checked) state.selected = new Set();
    this.setError(null);
  }

  go(step) {
    if (this.busy || step < 0 || step > this.count) return;
    this.step = step;
    this.render();
  }

  forward() {
    if (this.busy) return;
    if (!this.reviewing) {
      const question = this.ask.questions[this.step];
      const state = this.states[this.step];
      // A lone question with nothing chosen would go in as skipped: say so instead.
      const problem =
        checkQuestion(question, state) || (this.count === 1 && unanswered(question, state) ? nothingYet(question) : null);
      if (problem) {
        this.setError(problem);
        return;
      }
    }
    if (this.reviewing || this.count === 1) {
      this.submit();
      return;
    }
    this.go(this.step + 1);
  }

  skipQuestion() {
    if (this.busy || this.reviewing) return;
    this.states[this.step].skipped = true;
    if (this.count === 1) {
      this.submit();
      return;
    }
    this.go(this.step + 1);
  }

  submit() {
    const payload = answerPayload(this.ask, this.states);
    this.run(() => this.actions.submit(payload));
  }

  // Run one settling action with every control locked until it answers. On success the
  // tray is taken away by the caller; on failure the controls come back with the reason.
  async run(action) {
    if (this.busy) return;
    this.busy = true;
    this.setError(null);
    this.syncLock();
    try {
      await action();
    } catch (error) {
      this.busy = false;
      this.syncLock();
      this.setError(sentence(error.message || String(error)));
    }
  }

  syncLock() {
    this.root.setAttribute("aria-busy", this.busy ? "true" : "false");
    this.root.classList.toggle("busy", this.busy);
    for (const control of this.root.querySelectorAll("button, input, textarea")) {
      control.disabled = this.busy;
    }
    this.chat.sync(this.busy);
  }

  setError(text) {
    this.error.hidden = !text;
    setText(this.error, text || "");
  }

  // The tray's keys (docs/web-inbox.md#keys): 1–9 pick an option, ↑↓ move, ←→ go to the
  // previous / next question, Space toggles (native), Enter picks the focused option
  // when nothing is chosen yet and confirms, Ctrl+Enter confirms a text answer, Esc
  // leaves a text field for the options (on the review: back to the last question).
  key(event) {
    if (event.isComposing || this.busy || event.defaultPrevented) return;
    const target = event.target;
    const typing = isTextField(target);
    if (event.key === "Escape") {
      if (typing && target !== this.body.querySelector(".text-answer")) {
        event.preventDefault();
        this.focusOptions();
      } else if (this.reviewing) {
        event.preventDefault();
        this.go(this.count - 1);
      }
      return;
    }
    if (event.altKey) return;
    const inStep = this.body.contains(target);
    const choice = isChoice(target);
    if (event.key === "Enter") {
      const area = target.tagName === "TEXTAREA";
      if (!inStep || (area ? !(event.ctrlKey || event.metaKey) : !(choice || typing))) return;
      event.preventDefault();
      if (choice) this.pickFocused(target);
      this.forward();
      return;
    }
    if (typing || event.ctrlKey || event.metaKey || this.reviewing) return;
    if (/^[1-9]$/.test(event.key)) {
      // anywhere in the tray (an option, Next, Stop turn…), but never in a text field
      event.preventDefault();
      this.pickNumber(Number(event.key) - 1);
    } else if (!inStep) {
      return;
    } else if (choice && target.type === "checkbox" && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
      event.preventDefault();
      moveFocus(this.choiceInputs(), target, event.key === "ArrowDown" ? 1 : -1);
    } else if (choice && event.key === "ArrowLeft") {
      event.preventDefault();
      this.go(this.step - 1);
    } else if (choice && event.key === "ArrowRight") {
      event.preventDefault();
      if (this.count > 1) this.forward(); // to the next question or the review, never a submit
    }
  }

  choiceInputs() {
    return [...this.body.querySelectorAll(".options input[type=radio], .options input[type=checkbox]")];
  }

  focusOptions() {
    const inputs = this.choiceInputs();
    const target = inputs.find((input) => input.checked) || inputs[0] || this.body.querySelector(".question");
    if (target) target.focus();
  }

  // Enter on an option with nothing chosen yet picks that option (a question skipped
  // with Skip question stays skipped: that was an explicit choice).
  pickFocused(input) {
    const state = this.states[this.step];
    if (state.skipped || state.selected.size > 0 || state.other || input.checked) return;
    input.checked = true;
    input.dispatchEvent(new Event("change"));
  }

  // A number key: select the Nth option (toggle it in a multi-select) and focus it.
  pickNumber(index) {
    const input = this.choiceInputs()[index];
    if (!input) return;
    input.focus();
    if (input.type === "radio" && input.checked) return;
    input.checked = input.type === "radio" ? true : !input.checked;
    input.dispatchEvent(new Event("change"));
  }
}
