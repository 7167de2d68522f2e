// cdsgate analytics front end: pick a mounted dataset (/api/datasets),
// load its CSV (/data/<id>) into perspective (engine in a Web Worker,
// WebAssembly from /static), and offer the analyses a researcher needs:
// the sortable/filterable table, counts by a column, a cross-tab and a
// histogram, and the gate's verdict on the dataset (About this dataset).
// The viewer's own settings panel offers everything else.
import perspective from "/static/perspective/cdn/perspective.js";
import "/static/perspective-viewer/cdn/perspective-viewer.js";
import "/static/perspective-viewer-datagrid/cdn/perspective-viewer-datagrid.js";
import "/static/perspective-viewer-d3fc/cdn/perspective-viewer-d3fc.js";

const $ = (id) => document.getElementById(id);
const viewer = $("viewer");
const state = { worker: null, table: null, meta: null, view: "table",
	datasets: [] };

function status(text, st) {
	$("status").textContent = text;
	if (st) document.body.dataset.state = st;
}

// Tell the backend (it logs one line): how long a dataset took to show.
function report(ev) {
	fetch("/api/event", {
		method: "POST",
		headers: { "Content-Type": "application/json" },
		body: JSON.stringify(ev),
	}).catch(() => {});
}

function fillColumns(cols) {
	for (const id of ["by", "split"]) {
		const sel = $(id);
		sel.replaceChildren(...cols.map((c) => new Option(c, c)));
	}
	if (cols.length > 1) $("split").value = cols[1];
}

// The viewer configuration for each of the quick views.  Counts are a
// column named "count" (1 per record, summed), so axes and tooltips say
// "count", not the grouped column's name.
function config(view) {
	const by = $("by").value, split = $("split").value;
	const all = state.meta.columns;
	const count = { expressions: { count: "1" }, columns: ["count"],
		aggregates: { count: "count" } };
	switch (view) {
	case "counts":
		return { plugin: "Datagrid", group_by: [by], split_by: [],
			...count };
	case "crosstab":
		return { plugin: "Datagrid", group_by: [by], split_by: [split],
			...count };
	case "histogram":
		return { plugin: "Y Bar", group_by: [by], split_by: [],
			...count };
	default:
		return { plugin: "Datagrid", group_by: [], split_by: [],
			columns: all, aggregates: {}, expressions: {}, sort: [],
			filter: [] };
	}
}

// The gate's verdict for this dataset (meta.json "gate"), in the About
// panel: what was generalized, how much was suppressed.  Text only.
function fillAbout(meta) {
	const g = meta.gate, lines = $("about-lines");
	if (!g) {
		$("about-verdict").textContent = "The gate's summary is not " +
			"available for this dataset.";
		lines.replaceChildren();
		return;
	}
	const pct = (x) => `${(100 * x).toFixed(1)} %`;
	const items = [...(g.generalization ?? [])];
	if (g.suppressed_records != null)
		items.push(`Suppressed: ${g.suppressed_records} of ${g.records} ` +
			`records (${pct(g.suppressed_share ?? 0)}), shown as * in ` +
			"every quasi-identifier.");
	$("about-verdict").textContent = `Gate: ${g.verdict}. ${g.headline ?? ""}`;
	lines.replaceChildren(...items.map((t) => {
		const li = document.createElement("li");
		li.textContent = t;
		return li;
	}));
}

function toggleAbout() {
	const open = $("about").hidden;
	$("about").hidden = !open;
	$("about-btn").setAttribute("aria-expanded", String(open));
}

// In the datagrid a "*" cell (a value or a group) says it is suppressed.
const SUPPRESSED = "* (suppressed)";
async function labelSuppressed() {
	const grid = await viewer.getPlugin("Datagrid");
	const rt = grid && grid.regular_table;
	if (!rt || rt.dataset.suppressedLabels) return;
	rt.dataset.suppressedLabels = "1";
	rt.addStyleListener(() => {
		for (const c of rt.querySelectorAll("tbody td, tbody th")) {
			const star = c.textContent === "*" ||
				c.textContent === SUPPRESSED;
			if (star) c.textContent = SUPPRESSED;
			c.title = star ? "suppressed by the de-identification gate" :
				"";
			c.style.color = star ? "#6b7079" : "";
		}
	});
	await viewer.flush();
}

async function show(view) {
	state.view = view;
	for (const b of document.querySelectorAll("#views button"))
		b.setAttribute("aria-pressed", String(b.dataset.view === view));
	if (!state.table) return;
	await viewer.restore(config(view));
	await viewer.flush();
	if (view !== "histogram") await labelSuppressed();
}

async function load(meta) {
	const t0 = performance.now();
	status(`loading ${meta.name}…`, "loading");
	const resp = await fetch(`/data/${encodeURIComponent(meta.id)}`);
	if (!resp.ok) throw new Error(`${meta.id}: HTTP ${resp.status}`);
	const csv = await resp.text();
	const old = state.table;
	state.table = await state.worker.table(csv);
	state.meta = meta;
	fillAbout(meta);
	fillColumns(meta.columns);
	await viewer.load(state.table);
	await show(state.view);
	if (old) await old.delete().catch(() => {});
	const rows = await state.table.size();
	const ms = Math.round(performance.now() - t0);
	document.body.dataset.rows = String(rows);
	document.body.dataset.ms = String(ms);
	status(`${meta.name} v${meta.version ?? "?"}: ${rows} records`,
		"rendered");
	report({ event: "rendered", dataset: meta.id, rows, ms });
}

// The picker's options from a listing; keeps the current choice.  With
// nothing shown, a placeholder comes first so any choice is a change.
function fillPicker(datasets) {
	const sel = $("dataset"), cur = state.meta ? state.meta.id : "";
	const opts = datasets.map((d) => new Option(
		`${d.name} (${d.records ?? "?"} records)`, d.id));
	if (!cur) opts.unshift(new Option("choose a dataset…", ""));
	sel.replaceChildren(...opts);
	sel.value = datasets.some((d) => d.id === cur) ? cur : "";
}

async function listing() {
	const resp = await fetch("/api/datasets");
	if (!resp.ok) throw new Error(`datasets: HTTP ${resp.status}`);
	return (await resp.json()).datasets;
}

// Datasets come and go (mount, unmount): follow the mount dir, and drop
// the one shown as soon as it is unmounted.
async function follow() {
	const datasets = await listing();
	state.datasets = datasets;
	fillPicker(datasets);
	if (state.meta && !datasets.some((d) => d.id === state.meta.id)) {
		await viewer.eject();
		if (state.table) await state.table.delete().catch(() => {});
		state.table = null;
		status(`${state.meta.name} was unmounted`, "unmounted");
		state.meta = null;
		fillPicker(datasets);
	}
}

async function main() {
	state.worker = await perspective.worker();
	state.datasets = await listing();
	const sel = $("dataset");
	fillPicker(state.datasets);
	const pick = () => {
		const d = state.datasets.find((x) => x.id === sel.value);
		return d ? load(d) : Promise.resolve();
	};
	sel.addEventListener("change", () => pick().catch(fail));
	for (const b of document.querySelectorAll("#views button"))
		b.addEventListener("click", () => show(b.dataset.view).catch(fail));
	for (const id of ["by", "split"])
		$(id).addEventListener("change", () => show(state.view).catch(fail));
	$("about-btn").addEventListener("click", toggleAbout);
	setInterval(() => follow().catch(() => {}), 5000);
	if (!state.datasets.length) {
		status("no dataset is mounted", "empty");
		return;
	}
	const want = new URLSearchParams(location.search).get("dataset");
	sel.value = want && state.datasets.some((d) => d.id === want) ? want :
		state.datasets[0].id;
	await pick();
}

function fail(e) {
	status(`error: ${e.message ?? e}`, "error");
	report({ event: "error" });
}

main().catch(fail);
