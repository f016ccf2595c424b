// The attention explorer: a head view (tokens in two columns joined by lines weighted by attention), a model
// view (every layer x head as a small picture) and the model's guesses for each [MASK], for BERT's
// bidirectional mask and for a causal one side by side. Everything is drawn from the embedded data.
"use strict";

const DATA = readData();
// The layer and head numbers the page holds: all of the model's, or those chosen with --layer and --head.
// The state and the weights count them by position in these lists; the labels show their numbers.
const LAYERS = DATA.model.layers;
const HEADS = DATA.model.heads;
const ROW = 20; // pixels per token in the head view
const WIDTH = 400, LEFT = 150, RIGHT = 250; // the head view: its width, and where the two columns end and start
const HIDDEN_BELOW = 2; // weights under 2/255 draw no line: invisible anyway, and fewer elements to draw

// What the student has picked; every drawing is a function of this and the data.
const state = {sentence: 0, layer: 0, heads: new Set([0]), focus: null, gridView: DATA.views[0]};
const decoded = new Map(); // "sentence/view" -> Uint8Array of layers*heads*S*S weights times 255

/** The weights of one sentence under one mask, decoded from base64 on first use. */
function weightsOf(sentenceIndex, view) {
  const key = `${sentenceIndex}/${view}`;
  if (!decoded.has(key)) {
    const text = atob(DATA.sentences[sentenceIndex].views[view].weights);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    decoded.set(key, bytes);
  }
  return decoded.get(key);
}

/** Where the head at positions (layer, head) starts in the weights: its weight from token i to token j is
 * at + i * size + j. */
function headOffset(layer, head, size) {
  return (layer * HEADS.length + head) * size * size;
}

function sentence() {
  return DATA.sentences[state.sentence];
}

// ---- the sentence switcher and the notes ----

function drawSentenceButtons() {
  const box = document.getElementById("sentences");
  box.replaceChildren();
  if (DATA.sentences.length < 2) return;
  DATA.sentences.forEach((item, index) => {
    box.append(el("button", {class: index === state.sentence ? "on" : "", title: item.text,
      onclick: () => { state.sentence = index; state.focus = null; drawAll(); }},
    item.text.length > 48 ? item.text.slice(0, 46) + "…" : item.text));
  });
}

function drawNotes() {
  document.getElementById("model-note").textContent = DATA.model.note;
  const box = document.getElementById("sentence-notes");
  box.replaceChildren(...sentence().notes.map(text => el("p", {class: "warning"}, text)));
}

// ---- the layer and head controls ----

function drawControls() {
  const box = document.getElementById("controls");
  const layer = el("select", {id: "layer", onchange: event => { state.layer = Number(event.target.value); drawAll(); }},
    LAYERS.map((number, l) => el("option", {value: l}, `layer ${number}`)));
  layer.value = String(state.layer);
  const heads = HEADS.map((number, h) => el("button", {
    class: state.heads.has(h) ? "on head" : "head", "data-head": number,
    style: state.heads.has(h) ? `background:${hue(h, HEADS.length)};border-color:${hue(h, HEADS.length)}` : "",
    onclick: () => { toggleHead(h); drawAll(); }}, `head ${number}`));
  const all = el("button", {onclick: () => { state.heads = new Set(HEADS.keys()); drawAll(); }}, "all heads");
  box.replaceChildren(el("label", {}, ["Layer ", layer]), " ", ...heads, " ", all);
}

function toggleHead(head) {
  if (state.heads.has(head) && state.heads.size > 1) state.heads.delete(head);
  else state.heads.add(head);
}

// ---- the head view ----

function drawHeadViews() {
  const box = document.getElementById("head-views");
  box.replaceChildren(...DATA.views.map(view => {
    const panel = el("div", {class: "panel", id: `panel-${view}`}, [el("h3", {}, `${view} attention`)]);
    panel.append(headView(view), guesses(view));
    return panel;
  }));
  drawLines();
}

function headView(view) {
  const tokens = sentence().tokens;
  const height = tokens.length * ROW + 10;
  const svg = svgEl("svg", {class: "headview", id: `headview-${view}`, "data-view": view, width: WIDTH, height,
    viewBox: `0 0 ${WIDTH} ${height}`});
  svg.append(svgEl("g", {class: "lines"}));
  const masked = new Set(sentence().masks);
  tokens.forEach((token, index) => {
    for (const side of ["from", "to"]) {
      const x = side === "from" ? LEFT : RIGHT;
      svg.append(svgEl("text", {x, y: rowY(index) + 4, "text-anchor": side === "from" ? "end" : "start",
        "data-side": side, "data-index": index, class: masked.has(index) ? "masked" : ""}, token));
      svg.append(svgEl("rect", {class: "hover", "data-side": side, "data-index": index,
        x: side === "from" ? 0 : RIGHT - 4, y: rowY(index) - ROW / 2, width: LEFT + 4, height: ROW,
        onmouseenter: () => { state.focus = {side, index}; drawLines(); },
        onmouseleave: () => { state.focus = null; drawLines(); }}));
    }
  });
  return svg;
}

function rowY(index) {
  return 5 + ROW * index + ROW / 2;
}

/** The lines of every head view, for the chosen layer and heads and the hovered token (if any). */
function drawLines() {
  const tokens = sentence().tokens;
  const size = tokens.length;
  const focus = state.focus;
  for (const view of DATA.views) {
    const svg = document.getElementById(`headview-${view}`);
    const weights = weightsOf(state.sentence, view);
    const group = svg.querySelector("g.lines");
    group.replaceChildren();
    for (const head of state.heads) {
      const base = headOffset(state.layer, head, size);
      for (let i = 0; i < size; i++) {
        if (focus && focus.side === "from" && focus.index !== i) continue;
        for (let j = 0; j < size; j++) {
          if (focus && focus.side === "to" && focus.index !== j) continue;
          const weight = weights[base + i * size + j];
          if (weight < HIDDEN_BELOW) continue;
          group.append(svgEl("line", {x1: LEFT + 4, y1: rowY(i), x2: RIGHT - 4, y2: rowY(j),
            stroke: hue(head, HEADS.length), "stroke-width": 2, "stroke-opacity": (weight / 255).toFixed(3)}));
        }
      }
    }
    svg.setAttribute("data-lines", group.childElementCount);
    // With a causal mask a token cannot look at what comes after it: grey those while it is hovered.
    for (const text of svg.querySelectorAll('text[data-side="to"]')) {
      const unseen = view === "causal" && focus && focus.side === "from" && Number(text.dataset.index) > focus.index;
      text.classList.toggle("unseen", Boolean(unseen));
    }
  }
}

// ---- the guesses for each [MASK] ----

function guesses(view) {
  const box = el("div", {class: "guesses"}, [el("h3", {}, "the model's guesses")]);
  const item = sentence();
  const found = item.views[view].guesses;
  if (!item.masks.length) {
    box.append(el("p", {class: "note"}, "No [MASK] in this sentence: write [MASK] where the model should guess a word."));
  } else if (found === null) {
    box.append(el("p", {class: "note"}, DATA.model.has_mlm ? "–" : "This model has no masked-LM head, so it cannot guess; the attention is its own."));
  } else {
    item.masks.forEach((position, number) => {
      const rows = found[number].map(([token, probability]) => el("tr", {}, [
        el("td", {class: "token"}, token), el("td", {class: "number"}, percent(probability)),
        el("td", {}, el("span", {class: "bar", style: `width:${Math.round(120 * probability)}px`}))]));
      const where = `[MASK] ${number + 1} of ${item.masks.length}, after "${item.tokens[position - 1]}"`;
      box.append(el("table", {}, [el("caption", {}, where), ...rows]));
    });
  }
  return box;
}

// ---- the model view ----

function drawGridControls() {
  const box = document.getElementById("grid-controls");
  box.replaceChildren(...DATA.views.map(view => el("button", {class: view === state.gridView ? "on" : "",
    onclick: () => { state.gridView = view; drawModelView(); drawGridControls(); }}, view)));
}

function drawModelView() {
  const box = document.getElementById("model-view");
  const item = sentence();
  const size = item.tokens.length;
  const weights = weightsOf(state.sentence, state.gridView);
  const kinds = item.views[state.gridView].kinds;
  const grid = el("div", {class: "grid", style: `grid-template-columns: 60px repeat(${HEADS.length}, 80px)`});
  grid.append(el("div", {}, ""), ...HEADS.map(number => el("div", {class: "cell"}, `head ${number}`)));
  for (let layer = 0; layer < LAYERS.length; layer++) {
    grid.append(el("div", {class: "cell"}, `layer ${LAYERS[layer]}`));
    for (let head = 0; head < HEADS.length; head++) {
      const canvas = el("canvas", {width: size, height: size});
      paintHead(canvas, weights, headOffset(layer, head, size), size);
      const chosen = layer === state.layer && state.heads.has(head);
      grid.append(el("div", {class: chosen ? "cell chosen" : "cell", "data-layer": LAYERS[layer],
        "data-head": HEADS[head], title: `layer ${LAYERS[layer]}, head ${HEADS[head]}: click to open in the head view`,
        onclick: () => { state.layer = layer; state.heads = new Set([head]); state.focus = null; drawAll();
          document.getElementById("head-views").scrollIntoView({behavior: "smooth"}); }},
      [canvas, el("div", {class: "kind"}, kinds[layer][head] || "\u00a0")]));
    }
  }
  box.replaceChildren(grid);
}

/** One head's (S, S) weights as an image: one pixel per cell, darker is more (scaled up by CSS). */
function paintHead(canvas, weights, base, size) {
  const context = canvas.getContext("2d");
  const image = context.createImageData(size, size);
  for (let cell = 0; cell < size * size; cell++) { // written in place: no array made per pixel
    const shade = 255 - weights[base + cell];
    image.data[4 * cell] = image.data[4 * cell + 1] = shade;
    image.data[4 * cell + 2] = 255 - (255 - shade) * 0.45;
    image.data[4 * cell + 3] = 255;
  }
  context.putImageData(image, 0, 0);
}

function drawAll() {
  drawSentenceButtons();
  drawNotes();
  drawControls();
  drawHeadViews();
  drawGridControls();
  drawModelView();
}

drawAll();
