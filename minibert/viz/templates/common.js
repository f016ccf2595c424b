// Helpers both pages use: read the embedded data, build elements, format numbers.
// Nothing here spreads data into an argument list (Math.max(...values)): a browser takes only so many
// arguments, and a long run has more points than that.
"use strict";

/** The page's data: the JSON in <script id="data" type="application/json">. */
function readData() {
  return JSON.parse(document.getElementById("data").textContent);
}

/** An HTML element: el("td", {class: "number"}, "0.5") or el("div", {}, [child, "text", ...]). */
function el(tag, attributes, children) {
  return fill(document.createElement(tag), attributes, children);
}

/** An SVG element, made in SVG's namespace so that the browser draws it. */
function svgEl(tag, attributes, children) {
  return fill(document.createElementNS("http://www.w3.org/2000/svg", tag), attributes, children);
}

function fill(node, attributes, children) {
  for (const [name, value] of Object.entries(attributes || {})) {
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  for (const child of [].concat(children === undefined ? [] : children)) {
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** 0.4567 -> "45.7%"; null -> "–". */
function percent(value, digits = 1) {
  return value === null || value === undefined ? "–" : (100 * value).toFixed(digits) + "%";
}

/** A number short enough for a table cell or an axis: 3 significant digits. */
function short(value) {
  if (value === null || value === undefined) return "–";
  if (value !== 0 && (Math.abs(value) >= 1e5 || Math.abs(value) < 1e-3)) return value.toExponential(2);
  return String(Number(value.toPrecision(3)));
}

/** The colour of series or head `index` of `count`: hues spread around the wheel. */
function hue(index, count) {
  return `hsl(${Math.round((360 * index) / Math.max(count, 1))}, 70%, 42%)`;
}

/** [smallest, largest] of an array of numbers, in one loop; [Infinity, -Infinity] for none. */
function extent(values) {
  let low = Infinity, high = -Infinity;
  for (const value of values) {
    if (value < low) low = value;
    if (value > high) high = value;
  }
  return [low, high];
}
