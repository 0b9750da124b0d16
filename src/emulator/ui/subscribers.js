// The subscribers tab: the site's subscribers a page at a time, and one subscriber's page
// (fields, attributes, segments, the notifications it received).
import { $, badge, compact, count, el, empty, fill, fmtTime, headings, num } from "./dom.js";
import { IN_ORDER, PAGE, admin, changed, entriesOf, loadSegments, pager, refresh, rendered,
  segmentName, state } from "./page.js";

export function viewSubscribers() {
  if (state.subscriber) return viewSubscriber(state.subscriber);
  $("subscriber-index").hidden = false;
  $("subscriber-detail").hidden = true;
  // The segments' names with the page: the list shows a member's segments by name even
  // when no other view loaded them first.
  return Promise.all([
    admin("subscribers", { meta: true, limit: PAGE, offset: state.subscriberPage * PAGE }),
    loadSegments()
  ]).then(function (out) {
    var list = entriesOf(out[0]);
    // An emulator that pages nothing answers every subscriber: page here.
    var rows = list.entries.length > PAGE ? list.entries.slice(state.subscriberPage * PAGE, (state.subscriberPage + 1) * PAGE) : list.entries;
    if (!changed("subscribers", [rows, list.total, state.segmentNames])) return;
    $("subscribers-total").textContent = "(" + count(list.total) + ")";
    fill("subscriber-table-wrap", rows.length ? el("table", { id: "subscriber-table", "data-testid": "subscriber-table" },
      headings(["hash", "profile", "country", "device", "browser", "segments", "subscribed", "status"]),
      el("tbody", null, rows.map(function (s) {
        return el("tr", { class: "clickable", "data-testid": "subscriber-row", "data-hash": s.subscriber_hash,
          onclick: function () { openSubscriber(s.subscriber_hash); } },
          el("td", { class: "mono" }, s.subscriber_hash),
          el("td", null, s.profile_id || ""),
          el("td", null, [s.country, s.state, s.city].filter(Boolean).join(" / ")),
          el("td", null, [s.device_type, s.device].filter(Boolean).join(" · ")),
          el("td", null, s.browser || ""),
          el("td", null, (s.segments || []).map(segmentName).join(", ")),
          el("td", null, fmtTime(s.subscribed_at)),
          el("td", null, s.unsubscribed_at ? el("span", { class: "badge status-expired", "data-testid": "subscriber-status" }, "unsubscribed")
            : el("span", { class: "badge " + (s.online === false ? "status-draft" : "status-sent"), "data-testid": "subscriber-status" }, s.online === false ? "offline" : "online")));
      })))
      : empty("No subscriber on this site."));
    pager("subscriber-pager", state.subscriberPage, list.total, function (p) { state.subscriberPage = p; refresh(); }, IN_ORDER);
  });
}
function openSubscriber(hash) {
  state.subscriber = hash;
  rendered.subscriber = null;
  refresh();
}
function viewSubscriber(hash) {
  $("subscriber-index").hidden = true;
  $("subscriber-detail").hidden = false;
  // Subscribers only go with a reset: a site left with none has not this one (asking for
  // it would be answered 400, a console error).
  var site = state.sites.filter(function (x) { return x.site_id === state.site; })[0];
  if (site && num(site.subscribers) === 0) {
    state.subscriber = null;
    return viewSubscribers();
  }
  return admin("subscribers", { subscriber_hash: hash }).catch(function (e) {
    // Gone (a reset, another site): back to the list.
    if (e.status !== 400) throw e;
    state.subscriber = null;
    return null;
  }).then(function (found) {
    if (found === null) return viewSubscribers();
    return viewSubscriberPage(hash, found);
  });
}
function viewSubscriberPage(hash, one) {
  return Promise.all([
    Promise.resolve(one),
    admin("deliveries", { subscriber_hash: hash, status: "all", meta: true, limit: 500 }),
    loadSegments()
  ]).then(function (out) {
    var found = entriesOf(out[0]).entries;
    if (!Array.isArray(out[0]) && out[0] && out[0].subscriber_hash) found = [out[0]];
    var s = found.filter(function (x) { return x.subscriber_hash === hash; })[0];
    var deliveries = entriesOf(out[1]);
    if (!changed("subscriber", [s, deliveries, state.segmentNames])) return;
    var back = el("button", { type: "button", id: "subscriber-back", onclick: function () { state.subscriber = null; rendered.subscribers = null; refresh(); } }, "‹ All subscribers");
    if (!s) { fill("subscriber-detail", [back, empty("No subscriber " + hash + " on this site.")]); return; }
    var fields = ["subscriber_hash", "profile_id", "country", "state", "city", "device", "device_type", "browser", "platform", "subscribed_at", "unsubscribed_at", "online"];
    var attrs = s.attributes || {};
    fill("subscriber-detail", [
      back,
      el("h2", { class: "after-back" }, "Subscriber ", el("span", { class: "mono", "data-testid": "subscriber-hash" }, s.subscriber_hash)),
      el("dl", { class: "kv", "data-testid": "subscriber-fields" }, fields.map(function (f) {
        var v = s[f];
        if (v === null || v === undefined || v === "") return null;
        return [el("dt", null, f), el("dd", null, /_at$/.test(f) ? fmtTime(v) : compact(v))];
      })),
      el("h3", null, "Attributes"),
      Object.keys(attrs).length ? el("dl", { class: "kv", "data-testid": "subscriber-attributes" }, Object.keys(attrs).sort().map(function (k) {
        return [el("dt", null, k), el("dd", null, compact(attrs[k]))];
      })) : el("p", { class: "muted" }, "No attribute."),
      el("h3", null, "Segments"),
      (s.segments || []).length ? el("div", { class: "chips", "data-testid": "subscriber-segments" }, s.segments.map(function (id) { return el("span", { class: "chip" }, segmentName(id)); }))
        : el("p", { class: "muted" }, "In no segment."),
      el("h3", null, "Notifications received (" + deliveries.total + ")"),
      deliveries.entries.length ? el("table", { "data-testid": "subscriber-deliveries" },
        headings(["sent", "title", "message", "from", "status", "viewed", "clicked"]),
        el("tbody", null, deliveries.entries.map(function (d) {
          return el("tr", { "data-testid": "delivery-row" },
            el("td", null, fmtTime(d.sent_at || d.queued_at)),
            el("td", null, d.title || ""),
            el("td", null, d.message || ""),
            el("td", null, (d.source || "") + (d.source_id !== undefined && d.source_id !== null ? " #" + d.source_id : "")),
            el("td", null, badge(d.status, "", "delivery-status")),
            el("td", null, d.viewed_at ? fmtTime(d.viewed_at) : ""),
            el("td", null, d.clicked_at ? fmtTime(d.clicked_at) : ""));
        }))) : el("p", { class: "muted" }, "Nothing received yet.")
    ]);
  });
}
