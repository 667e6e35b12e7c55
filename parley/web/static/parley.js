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
      chunk: (data) => { element.textContent += JSON.parse(data); },
      end: (_, source) => { source.close(); },
    });
  }

  function live(element) {
    follow(element, element.dataset.live, {
      part: (html) => {
        const focused = document.activeElement;
        const keep = focused && element.contains(focused) ? focused.id : null;
        // What the reader opened stays open across updates (by id).
        const opened = [...element.querySelectorAll("details[open][id]")].map((d) => d.id);
        element.innerHTML = html;
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
