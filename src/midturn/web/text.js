// Short plain-text lines about interactions and events, for the history, the inbox rows
// and the screen-reader announcements. Everything here ends up in textContent.

const DECISION_TEXT = {
  allowed: "allowed",
  denied: "denied",
  timed_out: "timed out (denied)",
  cancelled: "cancelled",
  unavailable: "unavailable",
};

// A message shown on its own (the gateway's, worded for API clients in lower case) as a
// sentence like the inbox's own: a capital first letter and a full stop at the end.
export function sentence(text) {
  const trimmed = String(text || "").trim();
  if (!trimmed) return "";
  const first = trimmed[0].toUpperCase() + trimmed.slice(1);
  return /[.!?…:]$/.test(first) ? first : `${first}.`;
}

// One line naming what an interaction wants.
export function headline(interaction) {
  if (interaction.kind === "permission") {
    const request = interaction.permission;
    return `Permission to run ${request.tool}: ${request.summary}`;
  }
  const questions = interaction.ask.questions;
  const first = questions[0];
  const more = questions.length > 1 ? ` (1 of ${questions.length} questions)` : "";
  return `Question — ${first.header}: ${first.question}${more}`;
}

// A history line for an event, or null for events the history leaves out.
export function eventLine(event) {
  const interaction = (event.data && event.data.interaction) || null;
  switch (event.type) {
    case "user_question_requested":
    case "permission_requested":
      return interaction ? `Asked: ${headline(interaction)}` : "Asked";
    case "user_question_answered": {
      const answers = (interaction && interaction.result && interaction.result.answers) || [];
      const parts = answers.map((a) => `${a.header}: ${a.answer === null ? "(skipped)" : a.answer}`);
      return `Answered — ${parts.join("; ")}`;
    }
    case "user_question_skipped":
      return "Skipped the questions";
    case "user_question_timeout":
      return "The questions timed out";
    case "user_question_cancelled":
      return "The questions were cancelled";
    case "user_question_redirected": {
      const message = interaction && interaction.result ? interaction.result.message : null;
      return message ? `Replied in chat instead: ${message}` : "Replied in chat instead";
    }
    case "permission_decided": {
      if (!interaction || !interaction.decision) return "Permission settled";
      const decision = interaction.decision;
      const how = decision.decision === "allow_for_turn" ? "allowed for this turn" : DECISION_TEXT[decision.outcome] || decision.outcome;
      const note = decision.message ? ` — ${decision.message}` : "";
      return `${interaction.permission.tool}: ${how}${decision.auto ? " (already allowed this turn)" : ""}${note}`;
    }
    default:
      return null;
  }
}
