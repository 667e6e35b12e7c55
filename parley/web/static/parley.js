// Parley's page: live parts and streamed replies over server-sent events. Everything here is
// an addition: without JavaScript every page still reads, and every form still posts.
(function () {
  "use strict";
  const open = new Map(); // element -> EventSource

  function closeGone() {
    for (const [element, source] of open) {
      if (!document.body.contains(element)) {
        source.close();
        open.delete(element);
      }
    }
  }

  function follow(element, url, handlers) {
    if (open.has(element)) return;
    const source = new EventSource(url, { withCredentials: true });
    open.set(element, source);
    for (const [name, handle] of Object.entries(handlers)) {
      source.addEventListener(name, (message) => handle(message.data, source));
    }
  }

  function stream(element) {
    follow(element, element.dataset.stream, {
      // A text node a chunk: a live region around it reads the new words, not all again.
      chunk: (data) => { element.append(JSON.parse(data)); },
      end: (_, source) => { source.close(); },
    });
  }

  // A live part is redrawn whole, so it is not a live region itself (a screen reader would read
  // all of it at each change). What the reader should hear is marked data-announce="KEY": an
  // element whose key was not in the part before is said once, through the page's #announce.
  function keys(element) {
    return new Set([...element.querySelectorAll("[data-announce]")].map((e) => e.dataset.announce));
  }

  function announce(element, before) {
    const said = [...element.querySelectorAll("[data-announce]")]
      .filter((e) => !before.has(e.dataset.announce))
      .map((e) => e.textContent.replace(/\s+/g, " ").trim());
    const region = document.getElementById("announce");
    if (!region || said.length === 0) return;
    region.textContent = "";
    // Emptied first, then filled on the next frame: the same words twice are said twice.
    requestAnimationFrame(() => { region.textContent = said.join(". "); });
  }

  function live(element) {
    follow(element, element.dataset.live, {
      part: (html) => {
        const focused = document.activeElement;
        const keep = focused && element.contains(focused) ? focused.id : null;
        // What the reader opened stays open across updates (by id).
        const opened = [...element.querySelectorAll("details[open][id]")].map((d) => d.id);
        const before = keys(element);
        element.innerHTML = html;
        announce(element, before);
        for (const id of opened) {
          const again = document.getElementById(id);
          if (again) again.open = true;
        }
        if (window.htmx) window.htmx.process(element);
        scan(element);
        if (keep && document.getElementById(keep)) document.getElementById(keep).focus();
        element.dispatchEvent(new CustomEvent("parley:updated", { bubbles: true }));
      },
      "signed-out": () => { window.location.assign("/signin"); },
    });
  }

  function scan(root) {
    closeGone();
    root.querySelectorAll("[data-live]").forEach(live);
    root.querySelectorAll("[data-stream]").forEach(stream);
  }

  document.addEventListener("DOMContentLoaded", () => scan(document));
  document.addEventListener("htmx:load", (e) => scan(e.target.parentElement || document));
  document.addEventListener("htmx:afterSettle", () => scan(document));
})();
