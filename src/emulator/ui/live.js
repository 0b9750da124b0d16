// The page kept live: one stream of change notices for every tab of this emulator.
//
// A browser keeps at most six connections to a host over HTTP/1.1, and a stream holds one
// for as long as its page is open: a stream per tab would leave the sixth tab waiting for
// a connection it never gets. So one tab holds the stream (the holder of a Web Lock, taken
// over by another when it closes) and passes each change to the others on a
// BroadcastChannel; every tab then reads again for itself. Where the browser has no Web
// Locks (a page served over plain HTTP from a host other than this machine is no secure
// context), each tab keeps a stream of its own.
import { $ } from "./dom.js";
import { BASE, onChange } from "./page.js";

export function connect() {
  var live = $("live");
  function show(m) {
    var on = m.kind === "open" || m.kind === "change";
    live.dataset.state = on ? "live" : "offline";
    live.textContent = on ? "live" : m.kind === "polling" ? "polling" : "reconnecting";
    if (m.version !== undefined) live.title = "state version " + m.version;
    if (m.kind === "change") onChange();
  }
  function stream(tell) {
    var source = new EventSource(BASE + "ui/stream");
    source.addEventListener("open", function () { tell({ kind: "open" }); });
    source.addEventListener("change", function (ev) {
      var version;
      try { version = JSON.parse(ev.data).version; } catch (e) { /* not JSON */ }
      tell({ kind: "change", version: version });
    });
    // EventSource reconnects by itself, unless an answer was no stream at all (a proxy's
    // error page, an emulator restarting): then a new one is opened after a while, or
    // every tab that follows this one would stay without changes.
    source.addEventListener("error", function () {
      tell({ kind: "error" });
      if (source.readyState === EventSource.CLOSED) setTimeout(function () { stream(tell); }, 3000);
    });
  }
  if (!window.EventSource) { show({ kind: "polling" }); return; }
  if (!(navigator.locks && window.BroadcastChannel)) { stream(show); return; }
  var name = "pushwire-inspector " + BASE;
  var channel = new BroadcastChannel(name);
  // What this tab's stream last said, while it holds the stream: a tab opened later asks.
  var heard = null;
  channel.addEventListener("message", function (ev) {
    var m = ev.data || {};
    if (m.kind === "hello") { if (heard) channel.postMessage(heard); }
    else show(m);
  });
  navigator.locks.request(name, function () {
    // Held until this tab closes: the promise never settles.
    return new Promise(function () {
      stream(function (m) {
        heard = m.kind === "change" ? { kind: "open", version: m.version } : m;
        show(m);
        channel.postMessage(m);
      });
    });
  });
  channel.postMessage({ kind: "hello" });
}
