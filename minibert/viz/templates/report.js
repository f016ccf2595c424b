// A run's report: curves from the run's log, drawn as SVG line charts with a hover read-out, and tables
// (the guesses for held-out blanks, the confusion matrix, the settings). report.json holds the same data.
"use strict";

const DATA = readData();
const CHART = {width: 540, height: 250, left: 58, right: 12, top: 26, bottom: 34};
const EPOCH_ROWS = 50; // epochs listed in the table at most; the chart draws every one

/** Points [[x, y], ...] of `field` in `rows`, leaving out rows without a number there. */
function points(rows, xField, field) {
  return rows.filter(row => typeof row[field] === "number" && typeof row[xField] === "number")
    .map(row => [row[xField], row[field]]);
}

/** Tick values for an axis from `low` to `high`: about five round numbers. */
function ticks(low, high, whole = false) {
  const span = high - low || Math.abs(high) || 1;
  const step0 = Math.pow(10, Math.floor(Math.log10(span / 5)));
  const step = Math.max([1, 2, 5, 10].map(m => m * step0).find(s => span / s <= 6), whole ? 1 : 0);
  const values = [];
  for (let v = Math.ceil(low / step) * step; v <= high + step * 1e-9; v += step) values.push(Number(v.toPrecision(12)));
  return values;
}

/**
 * A line chart: `series` is [{name, points, dashed}], `baselines` is [{name, value}] drawn as flat lines.
 * Hovering shows a rule at the nearest x and each series' value there.
 */
function lineChart(title, yLabel, series, baselines = [], xLabel = "step") {
  series = series.filter(s => s.points.length);
  const box = el("div", {class: "chart", style: "position:relative"});
  if (!series.length) return box;
  const {width, height, left, right, top, bottom} = CHART;
  const xs = series.flatMap(s => s.points.map(p => p[0]));
  const ys = series.flatMap(s => s.points.map(p => p[1])).concat(baselines.map(b => b.value));
  let [xLow, xHigh] = extent(xs);
  let [yLow, yHigh] = extent(ys);
  if (xLow === xHigh) { xLow -= 1; xHigh += 1; }
  if (yLow === yHigh) { yLow -= Math.abs(yLow) * 0.1 || 1; yHigh += Math.abs(yHigh) * 0.1 || 1; }
  const pad = (yHigh - yLow) * 0.05;
  [yLow, yHigh] = [yLow - pad, yHigh + pad];
  const x = v => left + ((v - xLow) / (xHigh - xLow)) * (width - left - right);
  const y = v => top + (1 - (v - yLow) / (yHigh - yLow)) * (height - top - bottom);
  const svg = svgEl("svg", {class: "chart", width, height, viewBox: `0 0 ${width} ${height}`, "data-title": title});
  svg.append(svgEl("text", {x: left, y: 16, "font-weight": 600}, title));
  for (const v of ticks(yLow, yHigh)) {
    svg.append(svgEl("line", {class: "grid", x1: left, x2: width - right, y1: y(v), y2: y(v)}));
    svg.append(svgEl("text", {x: left - 4, y: y(v) + 4, "text-anchor": "end"}, short(v)));
  }
  for (const v of ticks(xLow, xHigh, xLabel === "epoch")) {
    svg.append(svgEl("text", {x: x(v), y: height - bottom + 14, "text-anchor": "middle"}, short(v)));
  }
  svg.append(svgEl("line", {class: "axis", x1: left, x2: width - right, y1: height - bottom, y2: height - bottom}));
  svg.append(svgEl("line", {class: "axis", x1: left, x2: left, y1: top, y2: height - bottom}));
  svg.append(svgEl("text", {x: (left + width - right) / 2, y: height - 4, "text-anchor": "middle"}, xLabel));
  svg.append(svgEl("text", {x: 12, y: (top + height - bottom) / 2, "text-anchor": "middle",
    transform: `rotate(-90 12 ${(top + height - bottom) / 2})`}, yLabel));
  const legend = [];
  baselines.forEach(b => {
    svg.append(svgEl("line", {x1: left, x2: width - right, y1: y(b.value), y2: y(b.value), stroke: "#888",
      "stroke-dasharray": "6 4", "stroke-width": 1.5}));
    legend.push(el("span", {style: "color:#666;margin-right:12px"}, `- - ${b.name} ${short(b.value)}`));
  });
  series.forEach((s, index) => {
    const colour = hue(index, series.length + 1);
    const path = s.points.map(([px, py]) => `${x(px).toFixed(1)},${y(py).toFixed(1)}`).join(" ");
    svg.append(svgEl("polyline", {points: path, fill: "none", stroke: colour, "stroke-width": 2,
      "stroke-dasharray": s.dashed ? "5 3" : ""}));
    if (s.points.length < 40) {
      for (const [px, py] of s.points) svg.append(svgEl("circle", {cx: x(px), cy: y(py), r: 2.5, fill: colour}));
    }
    legend.push(el("span", {style: `color:${colour};margin-right:12px`}, `— ${s.name}`));
  });
  const rule = svgEl("line", {class: "rule", y1: top, y2: height - bottom, visibility: "hidden"});
  svg.append(rule);
  const tip = el("div", {class: "tooltip", style: "display:none"});
  svg.addEventListener("mousemove", event => {
    const bounds = svg.getBoundingClientRect();
    const at = xLow + ((event.clientX - bounds.left - left) / (width - left - right)) * (xHigh - xLow);
    const nearest = xs.reduce((best, v) => (Math.abs(v - at) < Math.abs(best - at) ? v : best), xs[0]);
    rule.setAttribute("x1", x(nearest));
    rule.setAttribute("x2", x(nearest));
    rule.setAttribute("visibility", "visible");
    const lines = series.map(s => {
      const point = s.points.reduce((best, p) => (Math.abs(p[0] - nearest) < Math.abs(best[0] - nearest) ? p : best));
      return `${s.name}: ${short(point[1])} (${xLabel} ${point[0]})`;
    });
    tip.textContent = lines.join("\n");
    tip.style.display = "block";
    tip.style.left = `${Math.min(x(nearest) + 10, width - 160)}px`;
    tip.style.top = `${top}px`;
  });
  svg.addEventListener("mouseleave", () => { rule.setAttribute("visibility", "hidden"); tip.style.display = "none"; });
  box.append(svg, tip, el("div", {style: "font-size:12px"}, legend));
  return box;
}

/** A table; `header` null for none. Cells are text or <td>/<th> elements. */
function table(header, rows) {
  return el("table", {}, [...(header ? [el("tr", {}, header.map(cell => el("th", {}, cell)))] : []),
    ...rows.map(row => el("tr", {}, row.map(cell => (cell instanceof Node ? cell : el("td", {}, cell)))))]);
}

/** The settings of a run as a two-column table. */
function settingsTable(settings) {
  return table(["setting", "value"], Object.entries(settings || {}).map(([key, value]) =>
    [el("td", {class: "token"}, key), el("td", {}, typeof value === "object" ? JSON.stringify(value) : String(value))]));
}

// ---- pretraining ----

function pretrainReport(report) {
  const run = report.run;
  const unigram = report.unigram;
  const nspChance = [{name: "chance", value: 0.5}];
  const status = run.status === "running" ? `running: step ${run.step} of ${run.total_steps ?? "?"}` :
    `${run.status} at step ${run.step} of ${run.total_steps ?? "?"}`;
  document.getElementById("status").textContent = `${status}. This page is rewritten at each evaluation; reload to see the latest.`;
  const charts = el("div", {class: "chart-grid"}, [
    lineChart("masked-LM loss", "loss (nats)", [
      {name: "train", points: points(report.train, "step", "mlm_loss")},
      {name: "held-out", points: points(report.eval, "step", "mlm_loss")}],
    unigram ? [{name: "unigram baseline", value: unigram.loss}] : []),
    lineChart("masked-LM accuracy", "accuracy", [
      {name: "train", points: points(report.train, "step", "mlm_accuracy")},
      {name: "held-out", points: points(report.eval, "step", "mlm_accuracy")}],
    unigram ? [{name: `unigram baseline (always "${unigram.token}")`, value: unigram.accuracy}] : []),
    lineChart("next-sentence accuracy", "accuracy", [
      {name: "train", points: points(report.train, "step", "nsp_accuracy")},
      {name: "held-out", points: points(report.eval, "step", "nsp_accuracy")}], nspChance),
    lineChart("learning rate", "learning rate", [{name: "lr", points: points(report.train, "step", "lr")}]),
    lineChart("gradient norm (before clipping)", "norm", [{name: "gradient norm", points: points(report.train, "step", "grad_norm")}]),
    lineChart("speed", "tokens per second", [{name: "tokens/s", points: points(report.train, "step", "tokens_per_second")}]),
  ]);
  const box = document.getElementById("report");
  box.append(el("h2", {}, "Curves"), el("p", {class: "note"}, "Training figures are averages over each logging interval; held-out ones are the evaluations. Hover a chart to read its values."), charts);
  box.append(el("h2", {}, "What the model guesses"), guessesTables(report.guesses));
  box.append(el("h2", {}, "The run"), runTable(report), el("h3", {}, "configuration"), settingsTable(report.config),
    el("h3", {}, "model"), settingsTable(report.model));
}

/** For each held-out example: a row per evaluation, a column per blank, the top guess coloured right or wrong. */
function guessesTables(evaluations) {
  const box = el("div", {});
  if (!evaluations.length) {
    box.append(el("p", {class: "note"}, "No evaluation yet: the table fills in at the first one."));
    return box;
  }
  box.append(el("p", {class: "note"}, "The same held-out sentences at every evaluation, each blank's top guess (green when it is the answer); hover a cell for the top 3."));
  evaluations[0].examples.forEach((example, index) => {
    const header = ["step", ...example.blanks.map((blank, number) => `blank ${number + 1} (answer: ${blank.answer})`)];
    const rows = evaluations.map(evaluation => {
      const blanks = evaluation.examples[index] ? evaluation.examples[index].blanks : [];
      return [el("td", {class: "number"}, evaluation.step), ...blanks.map(blank => {
        const [token, probability] = blank.guesses[0];
        return el("td", {class: token === blank.answer ? "cell-right token" : "cell-wrong token",
          title: blank.guesses.map(([t, p]) => `${t} ${percent(p)}`).join(", ")}, `${token} ${percent(probability, 0)}`);
      })];
    });
    box.append(el("h3", {}, example.text), table(header, rows));
  });
  return box;
}

function runTable(report) {
  const run = report.run;
  const rows = [["folder", run.folder], ["CPU", run.cpu], ["parameters", run.parameters === null || run.parameters === undefined ? "–" : run.parameters.toLocaleString("en")]];
  for (const session of run.sessions) {
    rows.push([`${session.kind} (step ${session.step})`, `${session.time ?? "–"}`]);
    rows.push(["command", el("td", {class: "token"}, session.command ?? "–")]);
  }
  rows.push(["ended", run.ended ?? "not yet"]);
  return table(null, rows);
}

// ---- fine-tuning ----

function finetuneReport(report) {
  const run = report.run;
  document.getElementById("status").textContent = run.status !== "running" ? `${run.status}: best epoch ${report.best_epoch} of ${report.epochs.length}` :
    `running: epoch ${report.epochs.length} done. This page is rewritten after each epoch; reload to see the latest.`;
  const metrics = report.epochs.length ? Object.keys(report.epochs[0].dev) : [];
  const perEpoch = report.epochs.map(entry => ({epoch: entry.epoch, train_loss: entry.train_loss, ...entry.dev}));
  const box = document.getElementById("report");
  box.append(el("h2", {}, "Dev set, per epoch"), el("div", {class: "chart-grid"}, [
    lineChart(`dev ${report.main_metric} and the other dev metrics`, "metric",
      metrics.map(name => ({name, points: points(perEpoch, "epoch", name)})), report.chance === null ? [] : [{name: report.chance_label, value: report.chance}], "epoch"),
    lineChart("training loss", "loss", [{name: "loss", points: points(report.train, "step", "loss")}]),
  ]));
  const listed = epochsToList(perEpoch.length, perEpoch.findIndex(entry => entry.epoch === report.best_epoch));
  if (listed.length < perEpoch.length) {
    box.append(el("p", {class: "note"}, `${listed.length} of the ${perEpoch.length} epochs listed, evenly ` +
      "spaced, with the best and the last (the chart and report.json hold them all)."));
  }
  box.append(table(["epoch", "train loss", ...metrics], listed.map(index => perEpoch[index]).map(entry =>
    [el("td", {class: "number"}, entry.epoch), el("td", {class: "number"}, short(entry.train_loss)),
      ...metrics.map(name => el("td", {class: "number"}, short(entry[name])))])));
  box.append(el("h2", {}, `Confusion matrix (epoch ${report.predictions_epoch ?? "–"})`), confusion(report.confusion));
  box.append(el("h2", {}, "Some dev examples it gets wrong"), mistakes(report.mistakes));
  box.append(el("h2", {}, "The run"), runTable(report), el("h3", {}, "settings"), settingsTable(report.settings));
}

/** The rows of a table of `count` epochs to list: all of them up to EPOCH_ROWS, else evenly spaced ones with
 * the first, the `best` and the last, so that a run of any length gives a table a reader can scan. */
function epochsToList(count, best) {
  if (count <= EPOCH_ROWS) return Array.from({length: count}, (_, index) => index);
  const step = Math.ceil(count / (EPOCH_ROWS - 2));
  const listed = new Set([count - 1, best]);
  for (let index = 0; index < count; index += step) listed.add(index);
  return [...listed].filter(index => index >= 0).sort((a, b) => a - b);
}

function confusion(matrix) {
  if (!matrix) return el("p", {class: "note"}, "This task has no labels to confuse (a regression, or spans).");
  const largest = Math.max(1, extent(matrix.counts.flat())[1]);
  const last = matrix.labels.length - 1; // with others left out, the row and column that sum them
  const right = (row, column) => row === column && !(matrix.others && row === last);
  const rows = matrix.labels.map((label, row) => [el("th", {}, `true ${label}`), ...matrix.counts[row].map((count, column) =>
    el("td", {class: "number", style: `background: rgba(31, 78, 140, ${(0.8 * count / largest).toFixed(3)});` +
      (count / largest > 0.65 ? "color: white" : "")}, `${right(row, column) ? "✓ " : ""}${count}`))]);
  const box = el("div", {class: "matrix"}, table(["", ...matrix.labels.map(label => `predicted ${label}`)], rows));
  if (matrix.others) {
    box.prepend(el("p", {class: "note"}, `The ${last} labels with the most dev examples, true or predicted; the ` +
      `other ${matrix.others} are counted together in the last row and column (report.json has the same).`));
  }
  return box;
}

function mistakes(items) {
  if (!items || !items.length) return el("p", {class: "note"}, items ? "None: every dev example is right." : "–");
  return table(["text", "answer", "model", "its confidence"], items.map(item =>
    [item.text, el("td", {class: "right"}, item.label), el("td", {class: "wrong"}, item.predicted),
      el("td", {class: "number"}, percent(item.confidence))]));
}

if (DATA.kind === "pretrain") pretrainReport(DATA);
else finetuneReport(DATA);
