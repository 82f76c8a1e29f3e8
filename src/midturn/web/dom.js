// A tiny element builder. Strings always become text nodes: model text can never turn
// into markup. Event handlers go through addEventListener (the CSP forbids inline ones).
// Every string that reaches the page through here (text, attributes, setText) loses its
// bidirectional controls first: a model's U+202E could otherwise show "exe.txt" for
// "txt.exe" ("Trojan Source"). The terminal picker strips the same set.

const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

// `value` as a string without bidirectional embeddings, overrides, isolates or marks.
export function plain(value) {
  return String(value).replace(BIDI_CONTROLS, "");
}

// Set a node's text (never markup), bidi controls removed.
export function setText(node, value) {
  node.textContent = plain(value);
}

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "on") {
      for (const [type, listener] of Object.entries(value)) node.addEventListener(type, listener);
    } else if (name === "class") {
      node.className = value;
    } else if (name === "text") {
      setText(node, value);
    } else if (name === "style" || name.startsWith("on")) {
      throw new Error(`h(): refusing the inline attribute ${name}; use classes and listeners`);
    } else if (value === true) {
      node.setAttribute(name, "");
    } else {
      node.setAttribute(name, plain(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else if (child instanceof Node) node.appendChild(child);
    else node.appendChild(document.createTextNode(plain(child)));
  }
}

let counter = 0;

// A document-unique id for aria-labelledby / aria-describedby / label for.
export function uid(prefix) {
  counter += 1;
  return `${prefix}-${counter}`;
}

// Say something to screen readers through the page's polite live region.
export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  // A fresh text node on the next frame makes repeated messages audible too.
  requestAnimationFrame(() => {
    setText(region, text);
  });
}

// A ticking "label m:ss" until `deadline` (an ISO time), or null without one. Call
// stop() when the node goes away.
export function countdown(deadline, label) {
  if (!deadline) return null;
  const end = Date.parse(deadline);
  if (Number.isNaN(end)) return null;
  const node = h("span", { class: "deadline", role: "timer" });
  const tick = () => {
    const left = Math.max(0, Math.ceil((end - Date.now()) / 1000));
    const minutes = Math.floor(left / 60);
    const seconds = String(left % 60).padStart(2, "0");
    node.textContent = `${label} ${minutes}:${seconds}`;
  };
  tick();
  const timer = setInterval(tick, 1000);
  return { node, stop: () => clearInterval(timer) };
}
