"""Chat messages for incoming webhooks: Slack (Block Kit blocks with a text fallback),
Discord (`content` and an embed) and Microsoft Teams (an Adaptive Card in a Workflows
`message`), each built from a `Notice` (pure: no I/O here).

Everything the model wrote is neutralized for the format it goes into:

- Slack mrkdwn: `&`, `<` and `>` escaped (so no `<!channel>`, `<@U…>` or `<url|text>`
  link can be written), every text object `verbatim` (no automatic links or mentions),
  and a bare `@channel` / `@here` / `@everyone` broken with a word joiner;
- Discord: `allowed_mentions: {"parse": []}` (nobody is pinged, whatever the text says),
  markdown specials backslash-escaped (no masked links, no `<@id>` chips), the same word
  joiner in `@everyone` / `@here`;
- Teams: the model's text goes into `TextRun`s, which Adaptive Cards never read as
  markdown; only midturn's own words are in `TextBlock`s.

Each format's length limits are respected by cutting with an ellipsis (`cut`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from midturn.notify._notice import Notice, NoticeQuestion, cut, one_line

__all__ = [
    "ANSWER_ACTION",
    "OPEN_ACTION",
    "discord_escape",
    "discord_message",
    "slack_escape",
    "slack_message",
    "teams_message",
]

ANSWER_ACTION = "midturn.answer"
"""The `action_id` prefix of a Slack option button (`midturn.answer.<index>`)."""
OPEN_ACTION = "midturn.open"
"""The `action_id` of the Slack link button to the web inbox."""

_MENTION = re.compile(r"@(channel|here|everyone)\b", re.IGNORECASE)
_WORD_JOINER = "\u2060"


def _defuse_mentions(text: str) -> str:
    return _MENTION.sub(lambda m: "@" + _WORD_JOINER + m.group(1), text)


# -- Slack -------------------------------------------------------------------------------

# Block Kit limits (docs.slack.dev, Block Kit reference)
_SLACK_HEADER = 150
_SLACK_SECTION = 3000
_SLACK_BUTTON_TEXT = 75
_SLACK_FALLBACK = 3000
_SLACK_URL = 3000


def slack_escape(text: str) -> str:
    """`text` safe inside Slack mrkdwn: the three control characters escaped, broadcast
    mentions broken."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _defuse_mentions(escaped)


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def _plain(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": cut(_defuse_mentions(one_line(text)), limit)}


def _slack_question(question: NoticeQuestion, *, with_options: bool) -> str:
    lines = []
    if question.header:
        lines.append(f"*{slack_escape(one_line(question.header))}*")
    lines.append(slack_escape(question.question))
    if question.secret:
        lines.append("_A secret: answer it in midturn, never in chat._")
    elif with_options:
        for option in question.options:
            line = f"• *{slack_escape(one_line(option.label))}*"
            if option.description:
                line += f" — {slack_escape(one_line(option.description))}"
            lines.append(line)
    if question.kind == "text" and not question.secret:
        lines.append("_Type the answer in midturn._")
    elif question.multi:
        lines.append("_Choose one or more in midturn._")
    return cut("\n".join(lines), _SLACK_SECTION)


def _slack_context(notice: Notice) -> list[str]:
    parts = []
    if notice.session_title:
        parts.append(f"Session: *{slack_escape(one_line(notice.session_title))}*")
    if notice.place:
        parts.append(notice.place.capitalize())
    return parts


def slack_message(notice: Notice, *, buttons: bool = True) -> dict[str, Any]:
    """The incoming-webhook body for `notice`. With `buttons` (the gateway has a Slack
    signing secret, so it can take the clicks) a one-question single-select ask gets one
    button per option; every message gets a link button to the web inbox."""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": _plain(notice.title, _SLACK_HEADER)},
    ]
    context = _slack_context(notice)
    if context:
        blocks.append({"type": "context", "elements": [_mrkdwn(cut(" · ".join(context), 2000))]})
    for question in notice.questions:
        blocks.append(
            {"type": "section", "text": _mrkdwn(_slack_question(question, with_options=True))}
        )
    if notice.permission_summary or notice.permission_tool:
        lines = []
        if notice.permission_tool:
            lines.append(f"*Tool:* `{slack_escape(one_line(notice.permission_tool))}`")
        if notice.permission_summary:
            lines.append(slack_escape(notice.permission_summary))
        if notice.permission_risk:
            lines.append(f"*Risk:* {slack_escape(notice.permission_risk)}")
        blocks.append({"type": "section", "text": _mrkdwn(cut("\n".join(lines), _SLACK_SECTION))})

    elements: list[dict[str, Any]] = []
    choice = notice.single_choice if buttons else None
    if choice is not None and notice.interaction_id is not None:
        for index, option in enumerate(choice.options):
            value = {"i": notice.interaction_id, "q": choice.id, "o": index}
            elements.append(
                {
                    "type": "button",
                    "action_id": f"{ANSWER_ACTION}.{index}",
                    "text": _plain(option.label, _SLACK_BUTTON_TEXT),
                    "value": json.dumps(value, separators=(",", ":")),
                }
            )
    if notice.answer_url is not None and len(notice.answer_url) <= _SLACK_URL:
        elements.append(
            {
                "type": "button",
                "action_id": OPEN_ACTION,
                "text": _plain("Answer in midturn", _SLACK_BUTTON_TEXT),
                "url": notice.answer_url,
                **({"style": "primary"} if choice is None else {}),
            }
        )
    if elements:
        blocks.append({"type": "actions", "block_id": "midturn", "elements": elements})
    fallback = f"{notice.title}: {slack_escape(notice.summary)}"
    return {"text": cut(fallback, _SLACK_FALLBACK), "blocks": blocks}


# -- Discord -----------------------------------------------------------------------------

# Discord's limits (Discord developer docs, "Execute Webhook" and "Embed Limits")
_DISCORD_CONTENT = 2000
_DISCORD_TITLE = 256
_DISCORD_DESCRIPTION = 4096
_DISCORD_FIELD_VALUE = 1024
_DISCORD_FOOTER = 2048

_DISCORD_SPECIALS = re.compile(r"([\\*_~`|<>\[\]()#])")


def discord_escape(text: str) -> str:
    """`text` shown as written in Discord markdown: every markdown special
    backslash-escaped (no masked links, no `<@id>` mentions, no headings), broadcast
    mentions broken (they also ping nobody: see `allowed_mentions`)."""
    return _defuse_mentions(_DISCORD_SPECIALS.sub(r"\\\1", text))


def _discord_question(question: NoticeQuestion) -> str:
    lines = []
    if question.header:
        lines.append(f"**{discord_escape(one_line(question.header))}**")
    lines.append(discord_escape(question.question))
    if question.secret:
        lines.append("*A secret: answer it in midturn, never in chat.*")
    else:
        for option in question.options:
            line = f"• **{discord_escape(one_line(option.label))}**"
            if option.description:
                line += f" — {discord_escape(one_line(option.description))}"
            lines.append(line)
    return "\n".join(lines)


def discord_message(notice: Notice) -> dict[str, Any]:
    """The execute-webhook body for `notice`: a short `content` line (what phones show)
    and one embed with the questions, the session and the answer link; nobody is
    mentioned."""
    parts = [_discord_question(question) for question in notice.questions]
    if notice.permission_summary or notice.permission_tool:
        lines = []
        if notice.permission_tool:
            lines.append(f"**Tool:** {discord_escape(one_line(notice.permission_tool))}")
        if notice.permission_summary:
            lines.append(discord_escape(notice.permission_summary))
        if notice.permission_risk:
            lines.append(f"**Risk:** {discord_escape(notice.permission_risk)}")
        parts.append("\n".join(lines))
    link = f"\n\n[Answer in midturn]({notice.answer_url})" if notice.answer_url else ""
    body = cut("\n\n".join(parts), _DISCORD_DESCRIPTION - len(link)) + link
    embed: dict[str, Any] = {"title": cut(notice.title, _DISCORD_TITLE)}
    if notice.answer_url:
        embed["url"] = notice.answer_url
    if body:
        embed["description"] = body
    embed["footer"] = {"text": "midturn"}
    fields = []
    if notice.session_title:
        fields.append(
            {
                "name": "Session",
                "value": cut(discord_escape(one_line(notice.session_title)), _DISCORD_FIELD_VALUE),
                "inline": True,
            }
        )
    if notice.place:
        fields.append({"name": "Queue", "value": notice.place.capitalize(), "inline": True})
    if fields:
        embed["fields"] = fields
    content = f"**{notice.title}:** {discord_escape(notice.summary)}"
    return {
        "content": cut(content, _DISCORD_CONTENT),
        "embeds": [embed],
        "allowed_mentions": {"parse": []},
    }


# -- Microsoft Teams ---------------------------------------------------------------------

_TEAMS_TEXT = 2000
"""A bound per text run, so a message stays well under Teams' 28 KB per message."""


def _run(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextRun", "text": cut(text, _TEAMS_TEXT), **style}


def _rich(*runs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "RichTextBlock", "inlines": list(runs), **extra}


def teams_message(notice: Notice) -> dict[str, Any]:
    """The body a Teams Workflows webhook ("When a Teams webhook request is received",
    then "Post card in a chat or channel") takes: a `message` whose one attachment is
    an Adaptive Card with the questions and an `Action.OpenUrl` to the answer link."""
    body: list[dict[str, Any]] = [
        {
            "type": "TextBlock",
            "text": notice.title,
            "weight": "Bolder",
            "size": "Medium",
            "wrap": True,
        }
    ]
    if notice.session_title:
        body.append(_rich(_run("Session: "), _run(one_line(notice.session_title), weight="Bolder")))
    if notice.place:
        body.append(_rich(_run(notice.place.capitalize(), isSubtle=True), spacing="None"))
    for question in notice.questions:
        if question.header:
            body.append(_rich(_run(one_line(question.header), weight="Bolder"), separator=True))
        body.append(_rich(_run(question.question)))
        if question.secret:
            body.append(_rich(_run("A secret: answer it in midturn, never in chat.", italic=True)))
            continue
        for option in question.options:
            runs = [_run("• "), _run(one_line(option.label), weight="Bolder")]
            if option.description:
                runs.append(_run(" — " + one_line(option.description)))
            body.append(_rich(*runs, spacing="Small"))
    if notice.permission_summary or notice.permission_tool:
        if notice.permission_tool:
            body.append(
                _rich(_run("Tool: "), _run(one_line(notice.permission_tool), fontType="Monospace"))
            )
        if notice.permission_summary:
            body.append(_rich(_run(notice.permission_summary)))
        if notice.permission_risk:
            body.append(_rich(_run("Risk: "), _run(notice.permission_risk, weight="Bolder")))
    card: dict[str, Any] = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": body,
    }
    if notice.answer_url:
        card["actions"] = [
            {"type": "Action.OpenUrl", "title": "Answer in midturn", "url": notice.answer_url}
        ]
    return {
        "type": "message",
        "attachments": [
            {
                "contentType": "application/vnd.microsoft.card.adaptive",
                "contentUrl": None,
                "content": card,
            }
        ],
    }
