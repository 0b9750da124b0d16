// The inspector page's script, put inline in inspector.html by the emulator. One closure
// holds the page's state (the site shown, the open tab, the page of each list, what was
// last drawn) and the helpers every view uses; each view is a section of it. Split across
// files, the views would share that state through globals: it is one idea, one file.
"use strict";
(function () {
  // The admin routes are siblings of this page: /_emulator/ui -> /_emulator/{op}.
  var BASE = location.pathname.replace(/\/ui\/?$/, "/");
  // Operations that act on one site's data: the page names the site by id, never by key.
  var SITE_OPS = { broadcasts: 1, triggers: 1, drips: 1, subscribers: 1, segments: 1, events: 1,
    deliveries: 1, retention: 1, summary: 1, notifications: 1 };
  var PAGE = 50;
  var state = {
    ops: null, site: null, sites: [], defaultSite: null, tab: "broadcasts", frozen: false,
    now: null, nowAt: 0, broadcastPage: 0, subscriberPage: 0, subscriber: null,
    segmentNames: {}, openRequest: null, chartFrom: null, chartTo: null
  };
  var rendered = {};

  // ---- helpers ------------------------------------------------------------------------
  function $(id) { return document.getElementById(id); }

  // Builds an element: user data only ever becomes text nodes or attribute values.
  function el(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === null || v === undefined || v === false) return;
        if (k === "class") e.className = v;
        else if (k === "text") e.textContent = String(v);
        else if (k.slice(0, 2) === "on" && typeof v === "function") e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v === true ? "" : String(v));
      });
    }
    for (var i = 2; i < arguments.length; i++) append(e, arguments[i]);
    return e;
  }
  function append(parent, kid) {
    if (kid === null || kid === undefined || kid === false) return;
    if (Array.isArray(kid)) { kid.forEach(function (k) { append(parent, k); }); return; }
    parent.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  function fill(target, content) {
    var node = typeof target === "string" ? $(target) : target;
    while (node.firstChild) node.removeChild(node.firstChild);
    append(node, content);
  }
  // Re-renders only when the data changed, so that a page left open does not flicker.
  function changed(key, data) {
    var s = JSON.stringify(data);
    if (rendered[key] === s) return false;
    rendered[key] = s;
    return true;
  }
  function safeUrl(u) {
    return typeof u === "string" && /^https?:\/\//i.test(u.trim()) ? u.trim() : null;
  }
  function safeImage(u) {
    if (typeof u !== "string") return null;
    var t = u.trim();
    return /^https?:\/\//i.test(t) || /^data:image\//i.test(t) ? t : null;
  }
  function image(src, cls, alt) {
    var u = safeImage(src);
    if (!u) return null;
    var img = el("img", { class: cls, alt: alt || "", referrerpolicy: "no-referrer" });
    // A missing image hides itself rather than showing a broken icon.
    img.addEventListener("error", function () { img.hidden = true; });
    img.src = u;
    return img;
  }
  function hostOf(u) {
    if (!u) return "";
    try { return new URL(u).host || u; } catch (e) { return u; }
  }
  function pad(n) { return n < 10 ? "0" + n : String(n); }
  function fmtTime(iso) {
    if (!iso) return "";
    var d = new Date(iso);
    if (isNaN(d.getTime())) return String(iso);
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " +
      pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds()) + " UTC";
  }
  function isoDate(d) { return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()); }
  function num(v) { return typeof v === "number" ? v : (v ? Number(v) || 0 : 0); }
  function duration(minutes) {
    if (minutes % 1440 === 0) return plural(minutes / 1440, "day");
    if (minutes % 60 === 0) return plural(minutes / 60, "hour");
    return plural(minutes, "minute");
  }
  // A count as the reader's locale writes it: 10,000,000 reads at a glance, 10000000 does not.
  function count(v) { return num(v).toLocaleString(); }
  function plural(n, one, many) { return count(n) + " " + (n === 1 ? one : (many || one + "s")); }
  function compact(v) {
    if (v === null || v === undefined) return "";
    if (typeof v === "string") return v;
    try { return JSON.stringify(v); } catch (e) { return String(v); }
  }
  function has(op) { return !state.ops || state.ops.indexOf(op) >= 0; }

  function admin(op, args) {
    var body = {};
    Object.keys(args || {}).forEach(function (k) {
      if (args[k] !== null && args[k] !== undefined && args[k] !== "") body[k] = args[k];
    });
    if (SITE_OPS[op] && state.site !== null && body.site_id === undefined) body.site_id = state.site;
    return fetch(BASE + op, {
      method: "POST", cache: "no-store",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
        if (!r.ok) {
          var err = new Error(op + ": " + ((data && data.error) || ("HTTP " + r.status)));
          err.status = r.status;
          throw err;
        }
        return data;
      });
    });
  }
  // A `meta` answer or a plain list, as {entries, total, pruned, retention}.
  function entriesOf(answer) {
    if (Array.isArray(answer)) return { entries: answer, total: answer.length };
    answer = answer || {};
    var entries = answer.entries || [];
    return { entries: entries, total: answer.total !== undefined ? answer.total : entries.length,
      pruned: answer.pruned, retention: answer.retention };
  }
  function showError(message) { var b = $("error-banner"); b.textContent = message; b.hidden = false; }
  function hideError() { $("error-banner").hidden = true; }
  function empty(text) { return el("div", { class: "empty" }, text); }
  function badge(status, extra, testid) {
    return el("span", { class: "badge status-" + String(status || "").replace(/[^a-z_-]/gi, ""), "data-testid": testid || "status" },
      String(status || "") + (extra || ""));
  }
  function stat(label, value, testid) {
    return el("div", { class: "stat", "data-testid": testid }, el("b", null, count(value)), el("span", null, label));
  }
  // A page back or on at a time, and the first and the last at once (at ten million
  // subscribers, the last is 200,000 pages away). `labels` name the four in the list's order:
  // broadcasts newest first, subscribers in the order they subscribed.
  var BY_AGE = ["« Newest", "‹ Newer", "Older ›", "Oldest »"];
  var IN_ORDER = ["« First", "‹ Previous", "Next ›", "Last »"];
  function pager(id, page, total, go, labels) {
    var pages = Math.max(1, Math.ceil(total / PAGE));
    function button(label, to, testid, off) {
      return el("button", { type: "button", disabled: off, "data-testid": testid, onclick: function () { go(to); } }, label);
    }
    fill(id, total > PAGE ? [
      button(labels[0], 0, "page-first", page <= 0),
      button(labels[1], page - 1, "page-prev", page <= 0),
      el("span", { class: "muted", "data-testid": "page-of" }, "page " + count(page + 1) + " of " + count(pages)),
      button(labels[2], page + 1, "page-next", page + 1 >= pages),
      button(labels[3], pages - 1, "page-last", page + 1 >= pages)
    ] : null);
  }

  // ---- the notification preview -------------------------------------------------------
  function preview(n) {
    var icon = image(n.image_url, "np-icon", "icon") ||
      el("div", { class: "np-icon np-icon-none", "aria-hidden": "true" }, (hostOf(n.url).replace(/^www\./, "").charAt(0) || "?").toUpperCase());
    var big = image(n.big_image_url, "np-big", "image");
    var actions = (n.actions || []).filter(function (a) { return a && (a.label || a.url); });
    var target = safeUrl(n.url);
    return el("div", { class: "np", "data-testid": "preview" },
      el("div", { class: "np-head" },
        el("span", { class: "np-app" }, "Chromium"), "·",
        el("span", { class: "np-host", "data-testid": "preview-host" }, hostOf(n.url))),
      el("div", { class: "np-main" },
        el("div", { class: "np-text" },
          el("div", { class: "np-title", "data-testid": "preview-title" }, n.title || ""),
          el("div", { class: "np-message", "data-testid": "preview-message" }, n.message || "")),
        icon),
      big ? el("div", { "data-testid": "preview-big-image" }, big) : null,
      actions.length ? el("div", { class: "np-actions", "data-testid": "preview-actions" },
        actions.map(function (a) {
          return el("button", { type: "button", class: "np-action", "data-testid": "preview-action", title: a.url || "" },
            image(a.image_url, "", ""), a.label || "");
        })) : null,
      el("div", { class: "np-url", "data-testid": "preview-url" }, "Opens ",
        target ? el("a", { href: target, target: "_blank", rel: "noopener noreferrer" }, n.url) : el("span", { class: "mono" }, n.url || "(no URL)"),
        actions.length ? actions.map(function (a) {
          var u = safeUrl(a.url);
          return [el("br"), "“" + (a.label || "") + "” opens ",
            u ? el("a", { href: u, target: "_blank", rel: "noopener noreferrer" }, a.url) : el("span", { class: "mono" }, a.url || "")];
        }) : null));
  }

  // ---- broadcasts ---------------------------------------------------------------------
  var AUDIENCE_LABELS = {
    include_segments: "segments", exclude_segments: "not segments", include_countries: "countries",
    exclude_countries: "not countries", include_states: "states", include_cities: "cities",
    include_device_types: "device types", include_browsers: "browsers", profile_id: "profiles",
    subscriber_hash: "subscribers", from_date: "subscribed from", to_date: "subscribed to",
    attributes: "attributes"
  };
  function segmentName(id) {
    var name = state.segmentNames[String(id)];
    return name ? name + " (" + id + ")" : String(id);
  }
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
          el("div", { class: "muted", style: "font-size:12px;margin-bottom:4px" }, "Audience"),
          audienceChips(b.audience),
          el("div", { class: "stats" },
            stat("deliveries", b.deliveries, "count-deliveries"),
            stat("delivered", b.delivered, "count-delivered"),
            stat("pending", b.pending, "count-pending"),
            stat("expired", b.expired, "count-expired"),
            stat("views", b.views, "count-views"),
            stat("clicks", b.clicks, "count-clicks")))));
  }
  function loadSegments() {
    if (!has("segments")) return Promise.resolve();
    return admin("segments", { members: false }).then(function (segs) {
      var names = {};
      (segs || []).forEach(function (s) { names[String(s.segment_id)] = s.segment_name || s.name; });
      state.segmentNames = names;
    });
  }
  function viewBroadcasts() {
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

  // ---- campaigns ----------------------------------------------------------------------
  var WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
  function scheduleText(s) {
    if (!s) return "";
    var at = s.at ? " at " + s.at : "";
    if (s.type === "rightaway") return "right away";
    if (s.type === "after" && s.unit === "minutes") return "after " + plural(num(s.value), "minute");
    if (s.type === "after" && s.unit === "days") return (num(s.value) === 0 ? "the same day" : "after " + plural(num(s.value), "day")) + at;
    if (s.type === "after" && s.unit === "dow") return "next " + (WEEKDAYS[((num(s.value) % 7) + 7) % 7]) + at;
    return [s.type, s.value, s.unit].filter(function (x) { return x !== undefined && x !== null; }).join(" ") + at;
  }
  function analyticsStats(a, prefix) {
    a = a || {};
    return el("div", { class: "stats" },
      stat("sent", a.sentcount, prefix + "-sent"), stat("views", a.views, prefix + "-views"),
      stat("clicks", a.clicks, prefix + "-clicks"), stat("unsubscribed", a.unsubscribed, prefix + "-unsubscribed"));
  }
  function steps(notifications) {
    var list = (notifications || []).slice().sort(function (a, b) { return num(a.order) - num(b.order); });
    if (!list.length) return el("p", { class: "muted" }, "No notification.");
    return el("div", { class: "steps" }, list.map(function (n, i) {
      return el("div", { class: "step", "data-testid": "campaign-step" },
        el("div", { class: "step-when" }, "Step " + (i + 1), el("br"), el("span", { class: "muted" }, scheduleText(n.schedule_options))),
        preview(n),
        el("div", { class: "card-side" }, analyticsStats(n.analytics, "step")));
    }));
  }
  function triggerCard(t) {
    var rules = t.rules || {};
    return el("article", { class: "card", "data-testid": "trigger", "data-trigger-id": t.trigger_id },
      el("div", { class: "card-head" },
        el("span", { class: "nid" }, "#" + t.trigger_id + " " + (t.campaign_name || "")),
        badge(t.status, "", "trigger-status"),
        el("span", { class: "chip" }, t.campaign_type || "generic")),
      el("div", { class: "chips" },
        el("span", { class: "chip" }, el("b", null, "starts on"), rules.start_event_name || "—"),
        rules.stop_event_name ? el("span", { class: "chip" }, el("b", null, "stops on"), rules.stop_event_name) : null,
        el("span", { class: "chip" }, el("b", null, "daily limit"), String(t.daily_trigger_limit !== undefined ? t.daily_trigger_limit : "—")),
        el("span", { class: "chip" }, el("b", null, "weekly limit"), String(t.weekly_trigger_limit !== undefined ? t.weekly_trigger_limit : "—"))),
      analyticsStats(t.analytics, "trigger"),
      steps(t.notifications));
  }
  function dripAudience(aud) {
    var groups = aud && aud.filter && aud.filter.value;
    if (!groups || !groups.length) return el("div", { class: "chips" }, el("span", { class: "chip" }, "everyone"));
    return el("div", { class: "chips" }, groups.map(function (g, i) {
      return el("span", { class: "chip" }, i ? el("b", null, "or") : null,
        (g || []).map(function (r) { return [r.field, r.op, compact(r.value)].join(" "); }).join(" and "));
    }));
  }
  function dripCard(d) {
    return el("article", { class: "card", "data-testid": "drip", "data-drip-id": d.drip_id },
      el("div", { class: "card-head" },
        el("span", { class: "nid" }, "#" + d.drip_id + " " + (d.campaign_name || "")),
        badge(d.status, "", "drip-status"),
        d.drip_type ? el("span", { class: "chip" }, d.drip_type) : null),
      dripAudience(d.audience),
      analyticsStats(d.analytics, "drip"),
      steps(d.notifications));
  }
  function viewCampaigns() {
    return Promise.all([
      has("triggers") ? admin("triggers") : Promise.resolve(null),
      has("drips") ? admin("drips") : Promise.resolve(null)
    ]).then(function (out) {
      var triggers = entriesOf(out[0]).entries, drips = entriesOf(out[1]).entries;
      if (!changed("campaigns", out)) return;
      fill("trigger-list", out[0] === null ? empty("This emulator has no triggers operation.")
        : triggers.length ? triggers.map(triggerCard) : empty("No triggered campaign."));
      fill("drip-list", out[1] === null ? empty("This emulator has no drips operation.")
        : drips.length ? drips.map(dripCard) : empty("No drip."));
    });
  }

  // ---- subscribers --------------------------------------------------------------------
  function viewSubscribers() {
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
        el("thead", null, el("tr", null, ["hash", "profile", "country", "device", "browser", "segments", "subscribed", "status"].map(function (h) { return el("th", null, h); }))),
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
        el("h2", { style: "margin-top:12px" }, "Subscriber ", el("span", { class: "mono", "data-testid": "subscriber-hash" }, s.subscriber_hash)),
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
          el("thead", null, el("tr", null, ["sent", "title", "message", "from", "status", "viewed", "clicked"].map(function (h) { return el("th", null, h); }))),
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

  // ---- events -------------------------------------------------------------------------
  function newestPage(op, filters, limit) {
    // The log is oldest first: read its size, then its last page, shown newest first.
    var first = Object.assign({ meta: true, limit: 1, offset: 0 }, filters);
    return admin(op, first).then(function (head) {
      if (head.total === undefined) {
        return admin(op, Object.assign({ meta: true }, filters)).then(function (all) {
          var e = all.entries || [];
          all.entries = e.slice(Math.max(0, e.length - limit)).reverse();
          all.total = e.length;
          return all;
        });
      }
      var offset = Math.max(0, head.total - limit);
      return admin(op, Object.assign({ meta: true, limit: limit, offset: offset }, filters)).then(function (page) {
        page.entries = (page.entries || []).slice().reverse();
        if (page.total === undefined) page.total = head.total;
        return page;
      });
    });
  }
  function prunedNote(id, what, answer) {
    var r = answer.retention;
    $(id).textContent = (r === 0 ? "Retention keeps every " + what.replace(/s$/, "") + "." : "Retention keeps the last " + r + " " + what + "; ") +
      (r === 0 ? "" : plural(num(answer.pruned), what.replace(/s$/, ""), what) + " pruned so far.");
  }
  function viewEvents() {
    return newestPage("events", {}, 200).then(function (answer) {
      if (!changed("events", answer)) return;
      $("events-total").textContent = "(" + answer.total + ")";
      prunedNote("events-pruned", "events", answer);
      fill("event-table-wrap", answer.entries.length ? el("table", { id: "event-table", "data-testid": "event-table" },
        el("thead", null, el("tr", null, ["received", "event", "profile", "device token hash", "data"].map(function (h) { return el("th", null, h); }))),
        el("tbody", null, answer.entries.map(function (e) {
          return el("tr", { "data-testid": "event-row" },
            el("td", null, fmtTime(e.received_at)), el("td", null, e.event_name || ""),
            el("td", null, e.profile_id || ""), el("td", { class: "mono" }, e.device_token_hash || ""),
            el("td", { class: "mono" }, e.data ? compact(e.data) : ""));
        }))) : empty("No event tracked on this site."));
    });
  }

  // ---- requests -----------------------------------------------------------------------
  function requestFilters() {
    var f = {};
    var path = $("req-path").value.trim();
    var status = $("req-status").value.trim();
    if (path) f.path = path;
    if (/^\d{3}$/.test(status)) f.status = Number(status);
    return f;
  }
  function viewRequests() {
    var status = $("req-status").value.trim();
    if (status && !/^\d{3}$/.test(status)) { fill("request-table-wrap", empty("A status is three digits.")); return Promise.resolve(); }
    return newestPage("requests", requestFilters(), 200).then(function (answer) {
      if (!changed("requests", [answer, state.openRequest])) return;
      $("requests-total").textContent = "(" + answer.total + ")";
      prunedNote("requests-pruned", "requests", answer);
      fill("request-table-wrap", answer.entries.length ? el("table", { id: "request-table", "data-testid": "request-table" },
        el("thead", null, el("tr", null, [el("th", null, "time"), el("th", null, "method"), el("th", null, "path"),
          el("th", { class: "num" }, "status"), el("th", { class: "num" }, "duration"), el("th", null, "fault"), el("th", null, "trace")])),
        el("tbody", null, answer.entries.map(function (r, i) {
          var key = r.received_at + " " + r.method + " " + r.path + " " + i;
          var row = el("tr", { class: "clickable", "data-testid": "request-row", "data-path": r.path, "data-status": r.status,
            onclick: function () { state.openRequest = state.openRequest === key ? null : key; rendered.requests = null; refresh(); } },
            el("td", null, fmtTime(r.received_at)),
            el("td", null, r.method),
            el("td", { class: "mono" }, r.path + (r.query ? "?" + r.query : ""), r.interface && r.interface !== "main" ? el("span", { class: "muted" }, " (" + r.interface + ")") : null),
            el("td", { class: "num http-" + String(r.status).charAt(0), "data-testid": "request-status" }, r.status === null || r.status === undefined ? "—" : String(r.status)),
            el("td", { class: "num" }, r.duration_ms === null || r.duration_ms === undefined ? "—" : (Math.round(num(r.duration_ms) * 10) / 10) + " ms"),
            el("td", { class: "fault", "data-testid": "request-fault" }, r.fault ? compact(r.fault) : ""),
            // The client's trace (its traceparent), shortened as tracing tools show it; whole on hover.
            el("td", { class: "mono", "data-testid": "request-trace", title: r.trace_id || "" }, r.trace_id ? r.trace_id.slice(0, 8) + "…" : ""));
          if (state.openRequest !== key) return row;
          var headers = Object.keys(r.headers || {}).map(function (h) { return h + ": " + r.headers[h]; }).join("\n");
          return [row, el("tr", { "data-testid": "request-detail" }, el("td", { colspan: 7 },
            el("pre", { class: "detail" }, headers + (r.body ? "\n\n" + compact(r.body) : ""))))];
        }))) : empty("No request" + (Object.keys(requestFilters()).length ? " matches the filters." : " yet.")));
    });
  }

  // ---- analytics ----------------------------------------------------------------------
  var SERIES = [
    { key: "notification_sent", label: "notifications sent", color: "#0e7490", dash: "2 3" },
    { key: "net_subscriber_sent", label: "deliveries", color: "#2f6fde" },
    { key: "view_count", label: "views", color: "#1f8a4c" },
    { key: "click_count", label: "clicks", color: "#d97706" },
    { key: "subscriber_count", label: "new subscribers", color: "#7c3aed", dash: "6 4" },
    { key: "unsubscribed_count", label: "lost subscribers", color: "#c53030", dash: "6 4" }
  ];
  var SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function chartRange() {
    var today = state.now ? new Date(state.now) : new Date();
    var to = $("chart-to").value || isoDate(today);
    var from = $("chart-from").value || isoDate(new Date(Date.parse(to + "T00:00:00Z") - 29 * 86400000));
    return { from: from, to: to };
  }
  function drawChart(days, rows) {
    var W = 900, H = 300, L = 50, R = 26, T = 14, B = 34;
    var max = 1;
    rows.forEach(function (r) { SERIES.forEach(function (s) { max = Math.max(max, num(r[s.key])); }); });
    // Counts: four whole-number steps of 1, 2 or 5 times a power of ten.
    var raw = Math.max(1, max / 4), mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var tick = [1, 2, 5, 10].map(function (m) { return m * mag; }).filter(function (t) { return t >= raw; })[0];
    tick = Math.max(1, Math.ceil(tick));
    var top = tick * 4;
    var x = function (i) { return L + (days.length <= 1 ? (W - L - R) / 2 : i * (W - L - R) / (days.length - 1)); };
    var y = function (v) { return T + (H - T - B) * (1 - v / top); };
    var totals = {};
    var root = svg("svg", { id: "analytics-chart", "data-testid": "analytics-chart", viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "Sends, views, clicks, new and lost subscribers per day" });
    for (var g = 0; g <= 4; g++) {
      var v = top * g / 4, yy = y(v);
      root.appendChild(svg("line", { x1: L, x2: W - R, y1: yy, y2: yy, stroke: "#e1e4ea" }));
      root.appendChild(svg("text", { x: L - 6, y: yy + 4, "text-anchor": "end", "font-size": 11, fill: "#6b7385" }, v));
    }
    var every = Math.max(1, Math.ceil(days.length / 10));
    days.forEach(function (d, i) {
      if (i % every === 0 || i === days.length - 1) {
        root.appendChild(svg("text", { x: x(i), y: H - B + 18, "text-anchor": "middle", "font-size": 11, fill: "#6b7385" }, d.slice(5)));
      }
    });
    SERIES.forEach(function (s) {
      var pts = rows.map(function (r, i) { return x(i).toFixed(1) + "," + y(num(r[s.key])).toFixed(1); });
      totals[s.key] = rows.reduce(function (a, r) { return a + num(r[s.key]); }, 0);
      var path = svg("path", { d: "M" + pts.join(" L"), fill: "none", stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dash || "none", "class": "series", "data-series": s.key, "data-total": totals[s.key] });
      root.appendChild(path);
      rows.forEach(function (r, i) {
        if (num(r[s.key]) > 0) {
          var dot = svg("circle", { cx: x(i), cy: y(num(r[s.key])), r: 3, fill: s.color });
          dot.appendChild(svg("title", {}, days[i] + ": " + num(r[s.key]) + " " + s.label));
          root.appendChild(dot);
        }
      });
    });
    SERIES.forEach(function (s) { root.setAttribute("data-total-" + s.key.replace(/_/g, "-"), totals[s.key]); });
    return root;
  }
  function viewAnalytics() {
    if (!has("summary")) { fill("chart-wrap", empty("This emulator has no summary operation.")); return Promise.resolve(); }
    var range = chartRange();
    if (range.from > range.to) { fill("chart-wrap", empty("From is after To.")); return Promise.resolve(); }
    return admin("summary", { from: range.from, to: range.to, group_by: "day" }).then(function (answer) {
      var got = entriesOf(answer).entries;
      if (!changed("analytics", [range, got])) return;
      var byDate = {};
      got.forEach(function (r) { byDate[String(r.date).slice(0, 10)] = r; });
      var days = [], rows = [];
      for (var t = Date.parse(range.from + "T00:00:00Z"); t <= Date.parse(range.to + "T00:00:00Z") && days.length < 1000; t += 86400000) {
        var d = isoDate(new Date(t));
        days.push(d);
        rows.push(byDate[d] || { date: d });
      }
      fill("chart-legend", SERIES.map(function (s) { return el("span", null, el("i", { style: "background:" + s.color }), s.label); }));
      fill("chart-wrap", drawChart(days, rows));
      var shown = rows.filter(function (r) { return SERIES.some(function (s) { return num(r[s.key]) > 0; }); });
      fill("chart-table-wrap", shown.length ? el("table", { "data-testid": "analytics-table" },
        el("thead", null, el("tr", null, [el("th", null, "date")].concat(SERIES.map(function (s) { return el("th", { class: "num" }, s.label); })))),
        el("tbody", null, shown.slice().reverse().map(function (r) {
          return el("tr", null, [el("td", null, String(r.date).slice(0, 10))].concat(SERIES.map(function (s) { return el("td", { class: "num" }, String(num(r[s.key]))); })));
        }))) : el("p", { class: "muted" }, "Nothing in this range."));
    });
  }

  // ---- faults -------------------------------------------------------------------------
  function viewFaults() {
    return Promise.all([
      has("fault_stats") ? admin("fault_stats") : Promise.resolve({}),
      newestPage("requests", {}, 500)
    ]).then(function (out) {
      var stats = out[0] || {}, faulted = out[1].entries.filter(function (r) { return r.fault; });
      if (!changed("faults", [stats, faulted])) return;
      var kinds = Object.keys(stats);
      fill("fault-stats", kinds.length ? el("div", { class: "stats" }, kinds.map(function (k) { return stat(k, stats[k], "fault-stat"); }))
        : el("p", { class: "muted" }, "No random fault injected."));
      fill("faulted-wrap", faulted.length ? el("table", { "data-testid": "faulted-table" },
        el("thead", null, el("tr", null, ["time", "method", "path", "status", "fault"].map(function (h) { return el("th", null, h); }))),
        el("tbody", null, faulted.map(function (r) {
          return el("tr", null, el("td", null, fmtTime(r.received_at)), el("td", null, r.method), el("td", { class: "mono" }, r.path),
            el("td", { class: "http-" + String(r.status).charAt(0) }, String(r.status)), el("td", { class: "fault" }, compact(r.fault)));
        }))) : el("p", { class: "muted" }, "No request in the log met a fault."));
    });
  }
  $("fault-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var args = { path: $("fault-path").value.trim(), method: $("fault-method").value,
      times: Number($("fault-times").value || 1), processed: $("fault-processed").checked };
    var drop = $("fault-drop").value;
    if (drop) args.drop = drop;
    else if ($("fault-status").value) args.status = Number($("fault-status").value);
    if ($("fault-retry-after").value) args.retry_after = Number($("fault-retry-after").value);
    if ($("fault-delay").value) args.delay = Number($("fault-delay").value);
    admin("inject_fault", args).then(function () {
      $("fault-result").textContent = "Injected: the next " + plural(args.times, "request") + " to " + args.path + " will fail.";
      refresh();
    }, function (e) { $("fault-result").textContent = e.message; });
  });
  $("faults-clear").addEventListener("click", function () {
    admin("clear_faults").then(function () { $("fault-result").textContent = "Every fault cleared."; refresh(); },
      function (e) { $("fault-result").textContent = e.message; });
  });

  // ---- header: sites, clock, retention ------------------------------------------------
  function renderClock() {
    if (!state.now) return;
    var t = Date.parse(state.now);
    if (!state.frozen) t += Date.now() - state.nowAt;
    $("clock").textContent = fmtTime(new Date(t).toISOString());
    $("clock-frozen").hidden = !state.frozen;
    $("freeze-toggle").textContent = state.frozen ? "Unfreeze" : "Freeze";
    $("freeze-toggle").setAttribute("aria-pressed", state.frozen ? "true" : "false");
  }
  // A tab's count beside its name, left out where the emulator does not tell it.
  function tabCount(tab, n) {
    $("count-" + tab).textContent = typeof n === "number" ? count(n) : "";
  }
  function refreshHeader() {
    return Promise.all([
      admin("now"),
      has("sites") ? admin("sites") : Promise.resolve(null)
    ]).then(function (out) {
      var before = state.now, beforeAt = state.nowAt;
      state.now = out[0].now;
      state.nowAt = Date.now();
      if (typeof out[0].frozen === "boolean") state.frozen = out[0].frozen;
      // An emulator that does not say whether its clock is frozen: a clock that stood still
      // while a second passed is.
      else if (before && state.nowAt - beforeAt >= 1000) state.frozen = before === state.now;
      renderClock();
      var sites = out[1];
      if (sites) {
        state.sites = sites;
        var def = sites.filter(function (s) { return s.default; })[0] || sites[0];
        state.defaultSite = def ? def.site_id : null;
        if (state.site === null || !sites.some(function (s) { return s.site_id === state.site; })) state.site = state.defaultSite;
        var shown = sites.filter(function (s) { return s.site_id === state.site; })[0] || {};
        tabCount("subscribers", shown.subscribers);
        tabCount("broadcasts", shown.broadcasts);
        tabCount("campaigns", shown.campaigns);
        if (changed("sites", [sites, state.site])) {
          var select = $("site-select");
          fill(select, sites.map(function (s) {
            return el("option", { value: s.site_id, selected: s.site_id === state.site },
              "site " + s.site_id + (s.key_hint && s.key_hint !== "site " + s.site_id ? " · key " + s.key_hint : "") + " · " + plural(num(s.subscribers), "subscriber") + (s.default ? " (default)" : ""));
          }));
          select.value = String(state.site);
        }
      } else if (changed("sites", "none")) {
        fill("site-select", el("option", { value: "" }, "default site"));
      }
      return has("retention") ? admin("retention") : null;
    }).then(function (r) {
      if (r) {
        tabCount("requests", (r.requests || {}).kept);
        tabCount("events", (r.events || {}).kept);
      }
      if (!r || !changed("retention", r)) return;
      var req = r.requests || {}, ev = r.events || {};
      fill("retention", [
        r.retention ? "Retention: the last " + r.retention + " requests and events of each site are kept. " : "Retention: everything is kept. ",
        el("span", { "data-testid": "retention-requests" }, "Requests " + num(req.kept) + " kept, " + num(req.pruned) + " pruned"), "; ",
        el("span", { "data-testid": "retention-events" }, "events of this site " + num(ev.kept) + " kept, " + num(ev.pruned) + " pruned"), "."
      ]);
    });
  }
  $("site-select").addEventListener("change", function (ev) {
    var v = ev.target.value;
    state.site = v === "" ? null : Number(v);
    state.subscriber = null;
    state.broadcastPage = 0;
    state.subscriberPage = 0;
    rendered = {};
    refresh();
  });
  ["advance-1m", "advance-1h", "advance-1d"].forEach(function (id) {
    $(id).addEventListener("click", function () {
      admin("advance", { seconds: Number($(id).getAttribute("data-seconds")) }).then(refresh, function (e) { showError(e.message); });
    });
  });
  $("freeze-toggle").addEventListener("click", function () {
    admin("freeze_clock", { frozen: !state.frozen }).then(function (r) {
      state.frozen = typeof r.frozen === "boolean" ? r.frozen : !state.frozen;
      refresh();
    }, function (e) { showError(e.message); });
  });
  $("reset").addEventListener("click", function () {
    if (!window.confirm("Reset the emulator? Every site's data, the faults and the clock go back to a fresh start.")) return;
    admin("reset").then(function () {
      state.site = null; state.subscriber = null; state.frozen = false; rendered = {};
      refresh();
    }, function (e) { showError(e.message); });
  });

  // ---- views, refresh, live -----------------------------------------------------------
  var VIEWS = { broadcasts: viewBroadcasts, campaigns: viewCampaigns, subscribers: viewSubscribers,
    events: viewEvents, requests: viewRequests, analytics: viewAnalytics, faults: viewFaults };
  function showTab(tab) {
    if (!VIEWS[tab]) tab = "broadcasts";
    state.tab = tab;
    Array.prototype.forEach.call(document.querySelectorAll("nav#nav button"), function (b) {
      b.setAttribute("aria-selected", b.getAttribute("data-tab") === tab ? "true" : "false");
    });
    Array.prototype.forEach.call(document.querySelectorAll("main section[data-view]"), function (s) {
      s.hidden = s.getAttribute("data-view") !== tab;
    });
    if (location.hash !== "#" + tab) history.replaceState(null, "", "#" + tab);
    refresh();
  }
  Array.prototype.forEach.call(document.querySelectorAll("nav#nav button"), function (b) {
    b.addEventListener("click", function () {
      if (b.getAttribute("data-tab") === "subscribers") state.subscriber = null;
      showTab(b.getAttribute("data-tab"));
    });
  });

  var busy = false, again = false;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    again = false;
    var ready = state.ops ? Promise.resolve() : admin("operations").then(function (ops) {
      state.ops = Array.isArray(ops) ? ops : (ops && ops.operations) || null;
    }, function () { state.ops = null; });
    ready.then(refreshHeader).then(function () { return VIEWS[state.tab](); }).then(hideError, function (e) {
      // The page keeps what it showed; the banner says why it is stale.
      showError(e.message);
    }).then(function () {
      busy = false;
      if (again) refresh();
    });
  }

  var debounce = null;
  function onChange() {
    if (debounce) return;
    debounce = setTimeout(function () { debounce = null; refresh(); }, 60);
  }
  // ---- live: one stream for every tab of this emulator ------------------------------------
  // A browser keeps at most six connections to a host over HTTP/1.1, and a stream holds one
  // for as long as its page is open: a stream per tab would leave the sixth tab waiting for
  // a connection it never gets. So one tab holds the stream (the holder of a Web Lock, taken
  // over by another when it closes) and passes each change to the others on a
  // BroadcastChannel; every tab then reads again for itself. Where the browser has no Web
  // Locks (a page served over plain HTTP from a host other than this machine is no secure
  // context), each tab keeps a stream of its own.
  function connect() {
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

  // While the clock runs, scheduled broadcasts and drip steps come due with time alone.
  setInterval(function () { if (!state.frozen && !document.hidden) refresh(); }, 5000);
  setInterval(renderClock, 1000);
  $("req-path").addEventListener("input", function () { rendered.requests = null; onChange(); });
  $("req-status").addEventListener("input", function () { rendered.requests = null; onChange(); });
  $("req-clear-filters").addEventListener("click", function () { $("req-path").value = ""; $("req-status").value = ""; rendered.requests = null; refresh(); });
  $("chart-from").addEventListener("change", function () { refresh(); });
  $("chart-to").addEventListener("change", function () { refresh(); });
  $("chart-last30").addEventListener("click", function () { $("chart-from").value = ""; $("chart-to").value = ""; refresh(); });

  showTab((location.hash || "").slice(1) || "broadcasts");
  connect();
})();
