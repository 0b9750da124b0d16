// A notification as a browser shows it: its site, title, message, icon, image and actions,
// and where a click on it (or on each action) leads.
import { el, hostOf, image, safeUrl } from "./dom.js";

export function preview(n) {
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
