// The rules of one question's answer in the tray, kept apart from the DOM: what starts
// selected, the hint for a multi-select, what blocks moving on (a lone question never
// goes in as a silent skip), and the review line. A question's state is
// {touched, skipped, selected: Set<option index>, other, otherText, text}.

export function choiceHint(question) {
  if (!question.multi) return null;
  const total = question.options.length + (question.allow_other ? 1 : 0);
  const min = question.min_choices;
  const max = question.max_choices ?? total;
  if (min === max) return `Choose ${min}.`;
  if (min <= 1 && max >= total) return "Choose any that apply.";
  return `Choose ${min}–${max}.`;
}

// What is wrong with a question's answer before moving on, or null. An untouched
// question is fine: it goes in as skipped.
export function checkQuestion(question, state) {
  if (question.kind === "text" || state.skipped) return null;
  if (state.other && state.otherText.trim() === "") {
    return "Type your answer in the Other field, or choose one of the options.";
  }
  if (!question.multi) return null;
  const count = state.selected.size + (state.other ? 1 : 0);
  if (count === 0) return null;
  if (count < question.min_choices) return `Choose at least ${question.min_choices}.`;
  if (question.max_choices !== null && count > question.max_choices) {
    return `Choose at most ${question.max_choices}.`;
  }
  return null;
}

// The review line for one question: labels joined with ", ", typed text in quotes;
// null when it goes in skipped.
export function displayAnswer(question, state) {
  if (state.skipped) return null;
  if (question.kind === "text") {
    if (state.text.trim() === "") return null;
    return question.secret ? "[secret]" : `"${state.text}"`;
  }
  const parts = [...state.selected].sort((a, b) => a - b).map((i) => question.options[i].label);
  if (state.other && state.otherText.trim() !== "") {
    parts.push(question.secret ? "[secret]" : `"${state.otherText.trim()}"`);
  }
  if (parts.length === 0) return question.multi && question.min_choices === 0 && state.touched ? "(none)" : null;
  return parts.join(", ");
}

// Whether a question's state would go in as skipped (nothing chosen or typed), the rule
// answerPayload() in api.js applies.
export function unanswered(question, state) {
  if (question.kind === "text") return state.text.trim() === "";
  if (state.selected.size > 0 || (state.other && state.otherText.trim() !== "")) return false;
  return !(question.multi && question.min_choices === 0 && state.touched);
}

// The options a question starts with (indices): its recommendation, if it has one.
export function preselected(question) {
  if (question.kind === "text" || !Number.isInteger(question.recommended)) return [];
  return question.recommended >= 0 && question.recommended < question.options.length ? [question.recommended] : [];
}

// What a lone question with nothing chosen says instead of going in as skipped.
export function nothingYet(question) {
  return question.kind === "text"
    ? "Nothing is typed yet. Type an answer, or press Skip question to leave it unanswered."
    : "Nothing is chosen yet. Choose an option, or press Skip question to leave it unanswered.";
}
