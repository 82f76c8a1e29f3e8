// A tiny element builder. Strings always become text nodes: model text can never turn
// into markup. Event handlers go through addEventListener (the CSP forbids inline ones).

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "on") {
      for (const [type, listener] of Object.entries(value)) node.addEventListener(type, listener);
    } else if (name === "class") {
      node.className = value;
    } else if (name === "text") {
      node.textContent = value;
    } else if (name === "style" || name.startsWith("on")) {
      throw new Error(`h(): refusing the inline attribute ${name}; use classes and listeners`);
    } else if (value === true) {
      node.setAttribute(name, "");
    } else {
      node.setAttribute(name, String(value));
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
    else node.appendChild(document.createTextNode(String(child)));
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
    region.textContent = text;
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
