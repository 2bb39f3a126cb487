// knowhow's page: keeps the open page live and sends supersede/restore. No framework: the
// server renders every part (escaped); this script only swaps rendered parts in.
"use strict";

const POLL_MS = 1000;
const pageToken = () => document.querySelector('meta[name="knowhow-page"]').content;
let version = null;
let busy = false;

async function refreshLiveParts() {
  // Fetch this same URL again and replace each [data-live] part by its new rendering.
  const response = await fetch(location.href, { headers: { Accept: "text/html" } });
  if (!response.ok) return;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  for (const part of document.querySelectorAll("[data-live]")) {
    const replacement = fresh.getElementById(part.id);
    const typing = part.contains(document.activeElement) && document.activeElement.matches("input, textarea");
    if (!replacement || typing || replacement.innerHTML === part.innerHTML) continue;
    // What the reader opened stays open: a step's supersede form, what was visible, a screenshot.
    const opened = new Set([...part.querySelectorAll("details[open]")].map(openedKey));
    const redrawn = document.importNode(replacement, true);
    for (const details of redrawn.querySelectorAll("details")) {
      if (opened.has(openedKey(details))) details.open = true;
    }
    part.replaceWith(redrawn);
  }
  document.dispatchEvent(new Event("knowhow:updated"));
}

function openedKey(details) {
  // A <details> by the step it belongs to and its place among that step's.
  const step = details.closest("[id], [data-step]");
  const owner = step ? step.id || step.dataset.step : "";
  return `${owner}:${details.querySelector("summary")?.textContent}`;
}

async function poll() {
  if (busy || document.hidden) return;
  busy = true;
  const status = document.getElementById("live-status");
  try {
    const response = await fetch("/ui/api/version", { cache: "no-store" });
    const now = (await response.json()).version;
    if (version !== null && now !== version) await refreshLiveParts();
    version = now;
    status.textContent = "live";
  } catch (error) {
    status.textContent = "offline: retrying";
  } finally {
    busy = false;
  }
}

async function change(kind, stepId, body, place) {
  const response = await fetch(`/ui/api/${kind}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Knowhow-Page": pageToken() },
    body: JSON.stringify({ stepId, ...body }),
  });
  let answer;
  try { answer = await response.json(); } catch (error) { answer = { ok: false, error: { message: await response.text() } }; }
  place.classList.toggle("failed", !answer.ok);
  place.textContent = answer.ok
    ? (kind === "supersede" ? "Superseded: agents stop being offered this step within a second." : "Restored: agents are offered this step again within a second.")
    : `Not changed: ${answer.error.message}`;
}

document.addEventListener("submit", (event) => {
  const form = event.target.closest("form.supersede");
  if (!form) return;
  event.preventDefault();
  const box = form.closest(".curate");
  change("supersede", box.dataset.step, { reason: form.elements.reason.value }, box.querySelector(".curate-result"));
});

document.addEventListener("click", (event) => {
  const button = event.target.closest("button.restore");
  if (!button) return;
  const box = button.closest(".curate");
  change("restore", box.dataset.step, {}, box.querySelector(".curate-result"));
});

// A screenshot the server refuses (missing, outside its session, too large) is said so in words.
document.addEventListener("error", (event) => {
  const image = event.target;
  if (!(image instanceof HTMLImageElement) || !image.classList.contains("shot")) return;
  const note = document.createElement("p");
  note.className = "note";
  note.textContent = "Screenshot missing or refused (outside its session, too large, not an image).";
  image.replaceWith(note);
}, true);

poll();
setInterval(poll, POLL_MS);
