#!/usr/bin/env node
// make_fixture.mjs: fills the HTML report template with a synthetic data set
// that follows user/lib/analysis/report/SCHEMA.md, so the viewer can be
// checked without a recording (and without ktrackctl).
//
//   node tests/browser/make_fixture.mjs [OUTDIR] [--big|--empty] [--template PATH]
//
// Writes into OUTDIR (default build/browser at the top of the tree):
//   fixture.html             the filled report
//   fixture-hist-func.json   the func groups as 'ktrackctl hist --json -k func'
//   fixture-hist-probe.json  prints them (one object a line, then a lost line)
//   fixture.json             the data object alone
// and prints the report_check.mjs arguments that match the data.
//
// The data: a kernel-stack tree and a call tree (with a parent whose value
// is below its children's sum, as when an exit was lost), two function
// groups and one probe group with log2 and linear buckets, latency-over-time
// points (one group sampled), a 2-CPU timeline with 2 lost-record markers
// and 2 user markers, and two objtrace lives.  --big makes it large instead
// (a 50k-node flame tree, 4096 bins x 64 CPUs, 40 groups x 2000 points) to
// see that the page stays fast; --empty writes fixture-empty.html, a
// recording with no records, where every section says it has no data.
// The same seed gives the same files.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const top = resolve(here, '..', '..');
const PLACEHOLDER = '@KTRACK_' + 'DATA@';

const argv = process.argv.slice(2);
let outdir = join(top, 'build', 'browser');
let template = join(top, 'user', 'lib', 'analysis', 'report', 'report.html');
let big = false, empty = false;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--big') big = true;
  else if (a === '--empty') empty = true;
  else if (a === '--template') template = argv[++i];
  else if (a === '-h' || a === '--help') {
    console.log('usage: node make_fixture.mjs [OUTDIR] [--big|--empty] [--template PATH]');
    process.exit(0);
  } else if (a.startsWith('-')) {
    console.error(`make_fixture: unknown option ${a}`);
    process.exit(2);
  } else outdir = resolve(a);
}

// A small seeded generator (mulberry32): the same files every run.
let seed = 0x6b747261;
function rnd() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const randInt = (n) => Math.floor(rnd() * n);
// Log-normal-ish latencies around median ns.
const latency = (median, spread) => Math.max(0, Math.round(median * Math.exp(spread * gauss())));
function gauss() {
  let u = 0;
  while (u === 0) u = rnd();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd());
}

const FIRST_TS = 5_000_000_000;
const DURATION = big ? 2_000_000_000 : 50_000_000;
const CPUS = big ? 64 : 2;

// ---- flame trees ---------------------------------------------------------
const strings = ['all'];
const ids = new Map([['all', 0]]);
const sid = (s) => {
  if (!ids.has(s)) { ids.set(s, strings.length); strings.push(s); }
  return ids.get(s);
};
// Folded lines "a;b;c" with a value and hits into a {n,v,k,c} tree.
function tree(lines) {
  const root = { n: 0, v: 0, k: 0, c: [], m: new Map() };
  for (const [path, v, k] of lines) {
    let node = root;
    root.v += v;
    root.k += k;
    for (const name of path.split(';')) {
      let ch = node.m.get(name);
      if (!ch) {
        ch = { n: sid(name), v: 0, k: 0, c: [], m: new Map() };
        node.m.set(name, ch);
        node.c.push(ch);
      }
      ch.v += v;
      ch.k += k;
      node = ch;
    }
  }
  const strip = (n) => {
    delete n.m;
    n.c.forEach(strip);
    if (!n.c.length) delete n.c;
    return n;
  };
  return strip(root);
}
function smallStacks() {
  const sys = 'entry_SYSCALL_64_after_hwframe;do_syscall_64';
  return [
    [`${sys};__x64_sys_read;ksys_read;vfs_read;ext4_file_read_iter;filemap_read;copy_page_to_iter`, 38, 38],
    [`${sys};__x64_sys_read;ksys_read;vfs_read;ext4_file_read_iter;filemap_read;filemap_get_pages`, 21, 21],
    [`${sys};__x64_sys_read;ksys_read;vfs_read;seq_read_iter;proc_pid_status`, 9, 9],
    [`${sys};__x64_sys_write;ksys_write;vfs_write;ext4_buffered_write_iter;generic_perform_write`, 26, 26],
    [`${sys};__x64_sys_write;ksys_write;vfs_write;pipe_write;__wake_up_sync_key`, 11, 11],
    [`${sys};__x64_sys_openat;do_sys_openat2;do_filp_open;path_openat;link_path_walk`, 14, 14],
    ['asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;__sysvec_apic_timer_interrupt;hrtimer_interrupt', 6, 6],
    ['ret_from_fork_asm;ret_from_fork;kthread;worker_thread;process_one_work;wb_workfn', 4, 4],
    ['ret_from_fork_asm;ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;handle_softirqs', 2, 2],
    ['secondary_startup_64_no_verify;cpu_startup_entry;do_idle;cpuidle_idle_call', 1, 1],
  ];
}
function smallCalls() {
  // Inclusive time per call path, calls; vfs_read's own value is set
  // below its children's sum after the tree is built (a lost exit).
  return tree([
    ['ksys_read;vfs_read;rw_verify_area', 180_000, 300],
    ['ksys_read;vfs_read;ext4_file_read_iter', 5_400_000, 280],
    ['ksys_read;vfs_read;seq_read', 900_000, 20],
    ['ksys_write;vfs_write;rw_verify_area', 120_000, 200],
    ['ksys_write;vfs_write;ext4_buffered_write_iter', 7_800_000, 190],
    ['ksys_write;vfs_write;pipe_write', 1_100_000, 10],
    ['do_sys_openat2;do_filp_open', 2_300_000, 120],
    // Calls whose callers were not probed: a root child under 1 px and
    // one under 0.5 px (not drawn).
    ['vfs_read', 12_000, 2],
    ['vfs_write', 3_000, 1],
  ]);
}
function bigTree(target) {
  // About target nodes: a random tree with a heavy tail of small stacks.
  const lines = [];
  const names = Array.from({ length: 3000 }, (_, i) => `kfunc_${i.toString(36)}_${['read', 'write', 'lock', 'irq', 'sched', 'mm'][i % 6]}`);
  let nodes = 0;
  while (nodes < target) {
    const depth = 4 + randInt(24), path = [];
    for (let d = 0; d < depth; d++) path.push(names[d < 3 ? randInt(4 + d * 3) : randInt(names.length)]);
    const v = 1 + Math.floor(1000 * Math.pow(rnd(), 6));
    lines.push([path.join(';'), v, v]);
    nodes += depth - 2;
  }
  return tree(lines);
}
const countNodes = (n) => 1 + (n.c || []).reduce((s, c) => s + countNodes(c), 0);
let stacks, calls;
if (big) {
  stacks = bigTree(50_000);
  calls = bigTree(20_000);
} else {
  stacks = tree(smallStacks());
  calls = smallCalls();
  const vfsRead = calls.c.find((c) => strings[c.n] === 'ksys_read').c[0];
  vfsRead.v = 4_000_000;  // its exit was lost in part: below its children's sum
}

// ---- histograms and points ---------------------------------------------
function si(v) {  // hist.cpp's power-of-two labels: 1K = 1024
  const units = ['', 'K', 'M', 'G', 'T', 'P', 'E'];
  let u = 0;
  while (v >= 1024 && v % 1024 === 0 && u < 6) { v /= 1024; u++; }
  return `${v}${units[u]}`;
}
function log2Buckets(values) {
  const neg = values.filter((v) => v < 0).length;
  const counts = [];
  for (const v of values) {
    if (v < 0) continue;
    const i = v === 0 ? 0 : Math.floor(Math.log2(v)) + 1;
    counts[i] = (counts[i] || 0) + 1;
  }
  const all = [{ label: '(..., 0)', low: null, high: 0, count: neg }];
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i] || 0;
    if (i === 0) all.push({ label: '[0]', low: 0, high: 1, count: c });
    else if (i === 1) all.push({ label: '[1]', low: 1, high: 2, count: c });
    else all.push({ label: `[${si(2 ** (i - 1))}, ${si(2 ** i)})`, low: 2 ** (i - 1), high: 2 ** i, count: c });
  }
  let first = 0, last = all.length;
  while (first < all.length && !all[first].count) first++;
  while (last > first && !all[last - 1].count) last--;
  return all.slice(first, last);
}
function linearBuckets(values, min, max, n = 40) {
  const step = Math.max(1, (max - min) / n), out = [];
  for (let i = 0; i < n; i++) {
    const low = Math.round(min + i * step), high = i === n - 1 ? max : Math.round(min + (i + 1) * step);
    out.push({ label: i === n - 1 ? `[${low}, ${high}]` : `[${low}, ${high})`, low, high, count: 0 });
  }
  for (const v of values) out[Math.min(n - 1, Math.floor((v - min) / step))].count++;
  return out;
}
function group(key, samples) {  // samples: [ts, value] in time order
  const values = samples.map((s) => s[1]);
  const sorted = [...values].sort((a, b) => a - b), n = sorted.length;
  const rank = (p) => sorted[Math.max(0, Math.ceil((p / 100) * n) - 1)];
  const min = sorted[0], max = sorted[n - 1];
  const g = {
    key, value: '$duration', count: n, min,
    avg: +(values.reduce((s, v) => s + v, 0) / n).toFixed(3),
    p50: rank(50), p90: rank(90), p99: rank(99), max, buckets: log2Buckets(values),
  };
  const stride = Math.ceil(n / 2000), points = [];
  for (let i = 0; i < n; i += stride) points.push([samples[i][0] - FIRST_TS, samples[i][1]]);
  return { g, linear: linearBuckets(values, min, max), scatter: { total: n, points } };
}
function series(n, median, spread, slowdown) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const ts = FIRST_TS + Math.round(((i + rnd()) / n) * DURATION);
    // A slow phase in the middle third shows in the latency-over-time plot.
    const slow = slowdown && i > n / 3 && i < (2 * n) / 3 ? slowdown : 1;
    out.push([ts, latency(median * slow, spread)]);
  }
  return out;
}
const funcSpecs = big
  ? Array.from({ length: 40 }, (_, i) => [`kfunc_${i}`, 2000 + randInt(4000), 500 + randInt(50_000), 0.4 + rnd(), i % 3 ? 0 : 3])
  : [['vfs_read', 3000, 1800, 0.6, 4], ['vfs_write', 1200, 7500, 0.8, 0]];
const probeSpecs = big ? [['vfs_rw', 6000, 3000, 0.9, 0]] : [['fs_rw', 800, 2600, 1.1, 0]];
const hist = { func: [], probe: [], func_linear: {}, probe_linear: {} };
const scatter = { func: {}, probe: {} };
for (const [kind, specs] of [['func', funcSpecs], ['probe', probeSpecs]]) {
  const made = specs.map(([key, n, median, spread, slow]) => group(key, series(n, median, spread, slow)));
  made.sort((a, b) => b.g.count - a.g.count);  // most values first, as hist prints them
  for (const m of made) {
    hist[kind].push(m.g);
    hist[`${kind}_linear`][m.g.key] = m.linear;
    scatter[kind][m.g.key] = m.scatter;
  }
}

// ---- timeline ------------------------------------------------------------
const bins = big ? 4096 : 500, binNs = Math.ceil(DURATION / bins);
const cpus = [];
let records = 0;
for (let c = 0; c < CPUS; c++) {
  const counts = [];
  for (let b = 0; b < bins; b++) {
    const wave = 0.5 + 0.5 * Math.sin((b / bins) * Math.PI * (3 + c) + c);
    const busy = b > bins * 0.3 && b < bins * 0.65 ? 3 : 1;
    const v = rnd() < 0.04 ? 0 : Math.round(busy * (4 + 20 * wave * rnd()));
    counts.push(v);
    records += v;
  }
  cpus.push({ cpu: c, counts });
}
const lostMarks = big
  ? Array.from({ length: 300 }, (_, i) => {
    const ts = FIRST_TS + Math.round(((i + 0.5) / 300) * DURATION);
    return { ts, cpu: i % CPUS, count: 1 + randInt(500), first: ts - 40_000, last: ts - 1000 };
  })
  : [
    { ts: FIRST_TS + 17_400_000, cpu: 0, count: 42, first: FIRST_TS + 15_100_000, last: FIRST_TS + 17_300_000 },
    { ts: FIRST_TS + 31_900_000, cpu: 1, count: 7, first: FIRST_TS + 31_800_000, last: FIRST_TS + 31_850_000 },
  ];
const userMarks = big
  ? Array.from({ length: 200 }, (_, i) => ({ ts: FIRST_TS + Math.round(((i + 0.2) / 200) * DURATION), cpu: (i * 7) % CPUS, pid: 1000 + i, comm: 'bench', text: `step ${i}` }))
  : [
    { ts: FIRST_TS + 12_000_000, cpu: 1, pid: 4242, comm: 'bash', text: 'begin <dd workload>' },
    { ts: FIRST_TS + 38_500_000, cpu: 0, pid: 4242, comm: 'bash', text: 'end "dd" & sync' },
  ];
const lostTotal = lostMarks.reduce((s, l) => s + l.count, 0);
const lostPerCpu = [];
for (const l of lostMarks) {
  const e = lostPerCpu.find((x) => x.cpu === l.cpu);
  if (e) e.lost += l.count; else lostPerCpu.push({ cpu: l.cpu, lost: l.count });
}
lostPerCpu.sort((a, b) => a.cpu - b.cpu);

// ---- objtrace lives ------------------------------------------------------
const t = (us) => FIRST_TS + Math.round(us * 1000);
const objects = {
  lives: [
    {
      life: 1, obj: '0xffff8880123a4000', tracked: true, source: 'retval', source_function: 'ktrack_test_obj_alloc',
      parent_life: 0, ts: t(1000), cpu: 0, pid: 311, values: { mode: 16, refs: 1 },
      hits: [
        { hit: 1, ts: t(1002.5), cpu: 0, pid: 311, function: 'ktrack_test_obj_step1', caller: 'ktrack_test_run', arg: 1, changed: false, values: { mode: 16, refs: 1 } },
        { hit: 2, ts: t(1010), cpu: 0, pid: 311, function: 'ktrack_test_obj_get', caller: 'ktrack_test_run', arg: 1, changed: true, values: { mode: 16, refs: 2 } },
        { hit: 3, ts: t(1400), cpu: 1, pid: 0, function: 'ktrack_test_obj_step2', caller: 'process_one_work', arg: 1, changed: true, values: { mode: 48, refs: 2 }, last_unchanged: { function: 'ktrack_test_obj_get', cpu: 0, ts: t(1010) } },
        { hit: 4, ts: t(1425), cpu: 1, pid: 0, function: 'ktrack_test_obj_put', caller: 'process_one_work', arg: 1, changed: true, values: { mode: 48, refs: 1 } },
      ],
      end: { reason: 'free', function: 'kmem_cache_free', caller: 'ktrack_test_obj_free', ts: t(1500), hits: 4 },
    },
    {
      life: 2, obj: '0xffff8880123a4100', tracked: true, source: 'derived', source_function: 'ktrack_test_obj_step2',
      parent_life: 1, ts: t(1401), cpu: 1, pid: 0, values: { mode: 0, refs: 1 },
      hits: [
        { hit: 1, ts: t(1450), cpu: 1, pid: 0, function: 'ktrack_test_obj_step1', caller: 'process_one_work', arg: 2, changed: false, values: { mode: 0, refs: 1 } },
        { hit: 2, ts: t(2100), cpu: 0, pid: 312, function: 'ktrack_test_obj_step2', caller: 'ktrack_test_run', arg: 2, changed: true, values: { mode: null, refs: 1 } },
      ],
      end: null,
    },
  ],
};

// ---- the data object -------------------------------------------------------
const counts = { entry: 0, exit: 0, point: 0, stack: 0, marker: userMarks.length, lost_markers: lostMarks.length, other: 0 };
for (const g of hist.func) { counts.entry += g.count; counts.exit += g.count; }
counts.stack = stacks.k;
counts.point = Math.max(0, records - counts.entry - counts.exit - counts.stack - counts.marker - counts.lost_markers);
const data = {
  version: 1,
  generator: 'make_fixture.mjs (synthetic data)',
  header: {
    file: big ? 'fixture-big.ktr' : 'fixture.ktr', host: 'fixture-vm', kernel: '6.12.57+deb13-amd64',
    cpus: CPUS, clock: 'mono', session: 'fixture',
    probes: ['vfs_read', 'vfs_write', 'fs_rw', 'sched:sched_switch', 'stack:vfs_read'],
    first_ts: FIRST_TS, last_ts: FIRST_TS + DURATION, duration_ns: DURATION,
    records, counts, lost: lostTotal, lost_per_cpu: lostPerCpu,
    unmatched_entries: 3, orphan_exits: 1,
    notes: [
      'synthetic data from tests/browser/make_fixture.mjs, not a recording',
      `latency over time: at most 2000 points per group, evenly strided (vfs_read: ${scatter.func.vfs_read ? scatter.func.vfs_read.points.length : 0} of ${scatter.func.vfs_read ? scatter.func.vfs_read.total : 0})`,
      `timeline: ${bins} bins of ${binNs} ns`,
    ],
  },
  strings,
  flame: { stacks, calls },
  hist,
  scatter,
  timeline: { start: FIRST_TS, bin_ns: binNs, bins, cpus, lost: lostMarks, markers: userMarks, markers_dropped: 0 },
  objects: big ? null : objects,
};

if (empty) {  // what a recording without records gives
  Object.assign(data.header, {
    file: 'empty.ktr', probes: [], first_ts: 0, last_ts: 0, duration_ns: 0, records: 0, lost: 0, lost_per_cpu: [],
    unmatched_entries: 0, orphan_exits: 0, notes: [],
    counts: { entry: 0, exit: 0, point: 0, stack: 0, marker: 0, lost_markers: 0, other: 0 },
  });
  Object.assign(data, {
    strings: ['all'], flame: { stacks: null, calls: null }, hist: { func: [], probe: [], func_linear: {}, probe_linear: {} },
    scatter: { func: {}, probe: {} }, objects: null,
    timeline: { start: 0, bin_ns: 1024, bins: 0, cpus: [], lost: [], markers: [], markers_dropped: 0 },
  });
}

// As ktrackctl writes it: every '<' escaped so the data cannot end its script.
const json = JSON.stringify(data).replace(/</g, '\\u003c');
const page = readFileSync(template, 'utf8');
const parts = page.split(PLACEHOLDER);
if (parts.length !== 2) {
  console.error(`make_fixture: ${template} has the placeholder ${parts.length - 1} times, not once`);
  process.exit(1);
}
mkdirSync(outdir, { recursive: true });
const base = big ? 'fixture-big' : empty ? 'fixture-empty' : 'fixture';
writeFileSync(join(outdir, `${base}.html`), parts[0] + json + parts[1]);
writeFileSync(join(outdir, `${base}.json`), JSON.stringify(data, null, big ? 0 : 1) + '\n');
// hist --json output: the groups, then the lost-record lines (not groups).
const lostLines = data.header.lost_per_cpu.map((l) => JSON.stringify({ lost: `lost ${l.lost} records on CPU ${l.cpu}` }));
for (const kind of ['func', 'probe']) {
  const lines = data.hist[kind].map((g) => JSON.stringify(g)).concat(lostLines);
  writeFileSync(join(outdir, `${base}-hist-${kind}.json`), lines.join('\n') + '\n');
}
const out = (f) => join(outdir, f);
let check = `node tests/browser/report_check.mjs --report ${out(base + '.html')}`;
if (!empty) {
  const frames = big ? [strings[stacks.c[0].n]] : ['vfs_read', 'filemap_read', 'ksys_write'];
  check += ` --hist-func ${out(base + '-hist-func.json')} --hist-probe ${out(base + '-hist-probe.json')}` +
    ` --flame stacks ${frames.map((f) => '--frame ' + f).join(' ')} --expect-lost` + (big ? '' : ' --expect-objects 2');
}
process.stdout.write(`wrote ${out(base + '.html')} (${data.flame.stacks ? countNodes(data.flame.stacks) : 0} stack nodes, ` +
  `${data.flame.calls ? countNodes(data.flame.calls) : 0} call nodes, ${data.header.records} records, ${data.header.lost} lost)\n` +
  `check with: ${check}\n`);
