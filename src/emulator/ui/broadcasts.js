// The broadcasts tab: each broadcast newest first, with its preview, its audience, its
// status and its counts.
import { badge, compact, duration, el, empty, fill, fmtTime, num, stat } from "./dom.js";
import { BY_AGE, PAGE, admin, changed, entriesOf, has, loadSegments, pager, refresh, rendered,
  segmentName, state } from "./page.js";
import { preview } from "./preview.js";

var AUDIENCE_LABELS = {
  include_segments: "segments", exclude_segments: "not segments", include_countries: "countries",
  exclude_countries: "not countries", include_states: "states", include_cities: "cities",
  include_device_types: "device types", include_browsers: "browsers", profile_id: "profiles",
  subscriber_hash: "subscribers", from_date: "subscribed from", to_date: "subscribed to",
  attributes: "attributes"
};
function audienceChips(aud) {
  var keys = Object.keys(aud || {}).filter(function (k) {
    var v = aud[k];
    return v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0);
  });
  if (!keys.length) return el("div", { class: "chips", "data-testid": "audience" }, el("span", { class: "chip" }, "everyone"));
  return el("div", { class: "chips", "data-testid": "audience" }, keys.map(function (k) {
    var v = aud[k], text;
    if (k === "attributes" && Array.isArray(v)) {
      text = v.map(function (group) {
        return (Array.isArray(group) ? group : [group]).map(function (r) {
          return r && typeof r === "object" ? [r.key || r.field || r.name, r.op || r.operator, compact(r.value)].filter(function (x) { return x !== undefined && x !== ""; }).join(" ") : compact(r);
        }).join(" and ");
      }).join(" or ");
    } else if (/segments$/.test(k) && Array.isArray(v)) {
      text = v.map(segmentName).join(", ");
    } else if (Array.isArray(v)) {
      text = v.map(compact).join(", ");
    } else {
      text = compact(v);
    }
    return el("span", { class: "chip", "data-audience": k }, el("b", null, AUDIENCE_LABELS[k] || k), text);
  }));
}
function broadcastCard(b) {
  var due = b.due_at && (b.status === "scheduled" || b.status === "sent") ? " · " + fmtTime(b.due_at) : "";
  return el("article", { class: "card broadcast", "data-testid": "broadcast",
    "data-notification-id": b.notification_id, "data-status": b.status },
    el("div", { class: "card-head" },
      el("span", { class: "nid" }, "#" + b.notification_id),
      badge(b.status, due, "broadcast-status"),
      el("span", { class: "muted" }, "created " + fmtTime(b.created_at)),
      b.expiry_minutes ? el("span", { class: "muted" }, "expires " + duration(num(b.expiry_minutes)) + " after it is sent") : null),
    el("div", { class: "card-body" },
      preview(b),
      el("div", { class: "card-side" },
        el("div", { class: "muted side-label" }, "Audience"),
        audienceChips(b.audience),
        el("div", { class: "stats" },
          stat("deliveries", b.deliveries, "count-deliveries"),
          stat("delivered", b.delivered, "count-delivered"),
          stat("pending", b.pending, "count-pending"),
          stat("expired", b.expired, "count-expired"),
          stat("views", b.views, "count-views"),
          stat("clicks", b.clicks, "count-clicks")))));
}
export function viewBroadcasts() {
  if (!has("broadcasts")) { fill("broadcast-list", empty("This emulator has no broadcasts operation.")); return Promise.resolve(); }
  return Promise.all([
    admin("broadcasts", { limit: PAGE + 1, offset: state.broadcastPage * PAGE }),
    loadSegments()
  ]).then(function (out) {
    // One more than a page is asked for, to know whether an older page exists.
    var got = entriesOf(out[0]).entries, more = got.length > PAGE, shown = got.slice(0, PAGE);
    if (!changed("broadcasts", [got, state.segmentNames])) return;
    fill("broadcast-list", shown.length ? shown.map(broadcastCard)
      : empty("No broadcast yet: create one through the API and it shows here at once."));
    var site = state.sites.filter(function (s) { return s.site_id === state.site; })[0] || {};
    var total = typeof site.broadcasts === "number" ? site.broadcasts
      : state.broadcastPage * PAGE + shown.length + (more ? 1 : 0);
    pager("broadcast-pager", state.broadcastPage, total, function (p) { state.broadcastPage = p; rendered.broadcasts = null; refresh(); }, BY_AGE);
  });
}
