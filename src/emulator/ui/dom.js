// Building the page's elements and writing its values: user data only ever becomes text
// nodes or attribute values, never markup.

export function $(id) { return document.getElementById(id); }

export function el(tag, attrs) {
  var e = document.createElement(tag);
  if (attrs) {
    Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = String(v);
      // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
      else if (k === "style") e.style.cssText = String(v);
      else if (k.slice(0, 2) === "on" && typeof v === "function") e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    });
  }
  for (var i = 2; i < arguments.length; i++) append(e, arguments[i]);
  return e;
}
export function append(parent, kid) {
  if (kid === null || kid === undefined || kid === false) return;
  if (Array.isArray(kid)) { kid.forEach(function (k) { append(parent, k); }); return; }
  parent.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
}
export function fill(target, content) {
  var node = typeof target === "string" ? $(target) : target;
  while (node.firstChild) node.removeChild(node.firstChild);
  append(node, content);
}
export function safeUrl(u) {
  return typeof u === "string" && /^https?:\/\//i.test(u.trim()) ? u.trim() : null;
}
function safeImage(u) {
  if (typeof u !== "string") return null;
  var t = u.trim();
  return /^https?:\/\//i.test(t) || /^data:image\//i.test(t) ? t : null;
}
export function image(src, cls, alt) {
  var u = safeImage(src);
  if (!u) return null;
  var img = el("img", { class: cls, alt: alt || "", referrerpolicy: "no-referrer" });
  // A missing image hides itself rather than showing a broken icon.
  img.addEventListener("error", function () { img.hidden = true; });
  img.src = u;
  return img;
}
export function hostOf(u) {
  if (!u) return "";
  try { return new URL(u).host || u; } catch (e) { return u; }
}
function pad(n) { return n < 10 ? "0" + n : String(n); }
export function fmtTime(iso) {
  if (!iso) return "";
  var d = new Date(iso);
  if (isNaN(d.getTime())) return String(iso);
  return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " +
    pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds()) + " UTC";
}
export function isoDate(d) { return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()); }
export function num(v) { return typeof v === "number" ? v : (v ? Number(v) || 0 : 0); }
export function duration(minutes) {
  if (minutes % 1440 === 0) return plural(minutes / 1440, "day");
  if (minutes % 60 === 0) return plural(minutes / 60, "hour");
  return plural(minutes, "minute");
}
// A count as the reader's locale writes it: 10,000,000 reads at a glance, 10000000 does not.
export function count(v) { return num(v).toLocaleString(); }
export function plural(n, one, many) { return count(n) + " " + (n === 1 ? one : (many || one + "s")); }
export function compact(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  try { return JSON.stringify(v); } catch (e) { return String(v); }
}
export function empty(text) { return el("div", { class: "empty" }, text); }
export function badge(status, extra, testid) {
  return el("span", { class: "badge status-" + String(status || "").replace(/[^a-z_-]/gi, ""), "data-testid": testid || "status" },
    String(status || "") + (extra || ""));
}
export function stat(label, value, testid) {
  return el("div", { class: "stat", "data-testid": testid }, el("b", null, count(value)), el("span", null, label));
}
// A header row of plain column names.
export function headings(names) {
  return el("thead", null, el("tr", null, names.map(function (h) { return el("th", null, h); })));
}
