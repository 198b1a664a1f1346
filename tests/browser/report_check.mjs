#!/usr/bin/env node
// report_check.mjs: opens a ktrack HTML report (ktrackctl export --format
// html) in headless Chromium and checks what a person would look at.
//
//   node tests/browser/report_check.mjs --report R.html
//        [--hist-func H.json] [--hist-probe H.json]
//        [--flame stacks|calls] [--frame NAME]...
//        [--expect-lost] [--expect-objects N]
//        [--shots DIR --name PREFIX] [--chromium PATH]
//
// Prints TAP (one "ok N - ..." or "not ok N - ..." line a check, "# " lines
// with the reason, the plan "1..N" last) and exits 1 if any check failed,
// 2 on bad usage.  Chromium is Debian's /usr/bin/chromium unless --chromium
// or $KTRACK_CHROMIUM says otherwise; playwright-core drives it (npm ci in
// this folder installs it).
//
// --hist-func/--hist-probe take what 'ktrackctl hist --json -k func|probe'
// prints (JSON lines; lines without "key" and "buckets", such as lost-record
// lines, are not groups).  --shots writes PREFIX-header.png, -flame.png,
// -flame-zoomed.png, -hist.png, -scatter.png, -timeline.png and
// -objects.png into DIR, for each section that has data.

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const USAGE = 'usage: node report_check.mjs --report R.html [--hist-func H.json] [--hist-probe H.json] ' +
  '[--frame NAME]... [--flame stacks|calls] [--expect-lost] [--expect-objects N] [--shots DIR --name PREFIX] ' +
  '[--chromium PATH]';

function usage(msg) {
  if (msg) console.error(`report_check: ${msg}`);
  console.error(USAGE);
  process.exit(2);
}

const opt = { frames: [], hist: {}, chromium: process.env.KTRACK_CHROMIUM || '/usr/bin/chromium', name: 'report' };
{
  const a = process.argv.slice(2);
  const val = (i) => {
    if (i + 1 >= a.length) usage(`${a[i]} needs a value`);
    return a[i + 1];
  };
  for (let i = 0; i < a.length; i++) {
    switch (a[i]) {
      case '--report': opt.report = val(i); i++; break;
      case '--hist-func': opt.hist.func = val(i); i++; break;
      case '--hist-probe': opt.hist.probe = val(i); i++; break;
      case '--frame': opt.frames.push(val(i)); i++; break;
      case '--flame': opt.flame = val(i); i++; break;
      case '--expect-lost': opt.expectLost = true; break;
      case '--expect-objects': opt.expectObjects = Number(val(i)); i++; break;
      case '--shots': opt.shots = val(i); i++; break;
      case '--name': opt.name = val(i); i++; break;
      case '--chromium': opt.chromium = val(i); i++; break;
      case '-h': case '--help': console.log(USAGE); process.exit(0); break;
      default: usage(`unknown argument ${a[i]}`);
    }
  }
  if (!opt.report) usage('--report is required');
  if (opt.flame && !['stacks', 'calls'].includes(opt.flame)) usage('--flame is stacks or calls');
  if (opt.expectObjects !== undefined && !(Number.isInteger(opt.expectObjects) && opt.expectObjects >= 0))
    usage('--expect-objects takes a count');
  if (!existsSync(opt.report)) usage(`no such report: ${opt.report}`);
}

// ---- TAP ------------------------------------------------------------------
let n = 0, failed = 0;
function ok(cond, name, why) {
  n++;
  if (cond) {
    console.log(`ok ${n} - ${name}`);
  } else {
    failed++;
    console.log(`not ok ${n} - ${name}`);
    for (const line of String(why ?? 'failed').split('\n').slice(0, 20)) console.log(`# ${line}`);
  }
  return cond;
}
function finish() {
  console.log(`1..${n}`);
  console.log(`# ${n - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

// Groups of a 'hist --json' output: the objects with "key" and "buckets".
function readGroups(file) {
  const groups = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let o;
    try { o = JSON.parse(line); } catch { continue; }
    if (o && typeof o === 'object' && 'key' in o && Array.isArray(o.buckets)) groups.push(o);
  }
  return groups;
}

let pw;
try {
  pw = await import('playwright-core');
} catch (e) {
  console.log('not ok 1 - playwright-core loads');
  console.log(`# ${e.message.split('\n')[0]}`);
  console.log('# run "npm ci" in tests/browser first');
  console.log('1..1');
  process.exit(1);
}

const errors = [], requests = [];
let browser;
try {
  browser = await pw.chromium.launch({ executablePath: opt.chromium, args: ['--no-sandbox'], headless: true });
} catch (e) {
  ok(false, `chromium starts (${opt.chromium})`, e.message);
  finish();
}

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => { if (!/^(file|data|about):/.test(r.url())) requests.push(r.url()); });

  const url = pathToFileURL(resolve(opt.report)).href;
  let loaded = true;
  try {
    const t0 = Date.now();
    await page.goto(url, { waitUntil: 'load' });
    // A number to read, not a check: timing tests flake on shared hosts.
    console.log(`# ${url.split('/').pop()}: loaded and drawn in ${Date.now() - t0} ms`);
  } catch (e) {
    loaded = false;
    ok(false, `the report loads from ${url}`, e.message);
  }
  if (!loaded) { await browser.close(); finish(); }
  const data = await page.evaluate(() => (window.ktrackReport && typeof window.ktrackReport === 'object' ? window.ktrackReport : null));
  const clean = () => errors.length === 0 && requests.length === 0;
  ok(data !== null && clean(), 'the report loads from file:// with its data, no console error and no network request',
    [data === null ? 'window.ktrackReport is not an object' : '', ...errors, ...requests.map((r) => `request: ${r}`)].filter(Boolean).join('\n'));
  if (data === null) { await browser.close(); finish(); }

  const kernel = String(data.header?.kernel ?? '');
  const headerText = await page.locator('#header').innerText();
  // Every file ktrackctl writes names its kernel (record, objtrace -o).
  ok(kernel !== '' && headerText.includes(kernel), `the header shows the kernel (${kernel || 'none in the data'})`,
    `#header text: ${headerText.slice(0, 300)}`);

  // ---- flame graph --------------------------------------------------------
  const rootBox = () => page.evaluate(() => {
    const r = document.querySelector('#flame .frame[data-depth="0"]');
    return r ? { w: r.getBoundingClientRect().width, name: r.dataset.name } : null;
  });
  // The widest frame at depth >= 1 that is not already full width (the
  // widest of all when every one is).
  const widest = () => page.evaluate(() => {
    const root = document.querySelector('#flame .frame[data-depth="0"]');
    const rw = root.getBoundingClientRect().width;
    let best = null, bestFull = null;
    for (const f of document.querySelectorAll('#flame .frame')) {
      const d = +f.dataset.depth, w = f.getBoundingClientRect().width;
      if (d < 1) continue;
      const c = { name: f.dataset.name, depth: d, value: f.dataset.value, w };
      if (w < rw - 1 && (!best || w > best.w)) best = c;
      if (!bestFull || w > bestFull.w) bestFull = c;
    }
    return best || bestFull;
  });
  const findFrame = (f) => page.evaluate((f) => {
    for (const el of document.querySelectorAll(`#flame .frame[data-depth="${f.depth}"]`))
      if (el.dataset.name === f.name && el.dataset.value === f.value) {
        const r = el.getBoundingClientRect();
        return { w: r.width, x: r.x + r.width / 2, y: r.y + r.height / 2 };
      }
    return null;
  }, f);

  if (opt.flame) {
    const mode = opt.flame;
    const modes = await page.evaluate(() => [...document.querySelectorAll('#flame-mode option')].map((o) => o.value));
    if (ok(modes.includes(mode), `flame: #flame-mode offers ${mode}`, `options: ${JSON.stringify(modes)}`)) {
      await page.selectOption('#flame-mode', mode);
      const count = await page.locator('#flame .frame').count();
      const root = await rootBox();
      ok(count > 0 && root && root.name === 'all', `flame ${mode}: ${count} frames drawn, the root is "all"`,
        root ? `root: ${JSON.stringify(root)}` : 'no frame with data-depth="0"');
      for (const name of opt.frames) {
        const found = await page.evaluate((name) => [...document.querySelectorAll('#flame .frame')].some((f) => f.dataset.name === name), name);
        const inData = await page.evaluate(([mode, name]) => window.ktrackReport.strings.includes(name), [mode, name]);
        ok(found, `flame ${mode}: frame ${name} is drawn`,
          inData ? `${name} is in the data's strings but no frame of that name is drawn (narrower than 0.5 px, or not in this tree)`
            : `${name} is not in the data's strings at all`);
      }
      // Widths: every child of the root drawn in proportion to its
      // max-corrected value (max(v, sum of the children's)).
      const prop = await page.evaluate((mode) => {
        const D = window.ktrackReport, tree = D.flame[mode], S = D.strings;
        const eff = (node) => {  // iterative post-order
          const out = new Map(), st = [[node, false]];
          while (st.length) {
            const [x, done] = st.pop();
            if (done || !x.c || !x.c.length) {
              let s = 0;
              for (const c of x.c || []) s += out.get(c);
              out.set(x, Math.max(x.v || 0, s));
            } else {
              st.push([x, true]);
              for (const c of x.c) st.push([c, false]);
            }
          }
          return out;
        };
        const e = eff(tree), rootEl = document.querySelector('#flame .frame[data-depth="0"]');
        const rw = rootEl.getBoundingClientRect().width, bad = [];
        let checked = 0;
        for (const c of tree.c || []) {
          const want = (e.get(c) / e.get(tree)) * rw;
          const el = [...document.querySelectorAll('#flame .frame[data-depth="1"]')].find((f) => f.dataset.name === S[c.n]);
          if (want < 0.5) { if (el) bad.push(`${S[c.n]}: drawn at ${want.toFixed(2)} px`); continue; }
          checked++;
          if (!el) { bad.push(`${S[c.n]}: not drawn (want ${want.toFixed(1)} px)`); continue; }
          const w = el.getBoundingClientRect().width;
          if (Math.abs(w - want) > 2) bad.push(`${S[c.n]}: ${w.toFixed(1)} px, want ${want.toFixed(1)} px`);
        }
        return { checked, bad, rw };
      }, mode);
      ok(prop.checked > 0 && prop.bad.length === 0,
        `flame ${mode}: the root's ${prop.checked} children are as wide as their values (within 2 px of ${prop.rw.toFixed(0)} px)`,
        prop.bad.join('\n') || 'no child of the root drawn');
      // Zoom on the widest frame at depth >= 1, then reset.
      const target = await widest();
      if (ok(target, `flame ${mode}: a frame at depth >= 1 to zoom`)) {
        const before = await findFrame(target);
        await page.mouse.click(before.x, before.y);
        const rw = (await rootBox()).w;
        const after = await findFrame(target);
        const anc = await page.evaluate((d) => [...document.querySelectorAll('#flame .frame')]
          .filter((f) => +f.dataset.depth < d).map((f) => ({ name: f.dataset.name, depth: +f.dataset.depth, w: f.getBoundingClientRect().width })), target.depth);
        const ancBad = anc.filter((a) => Math.abs(a.w - rw) > 1);
        ok(after && Math.abs(after.w - rw) <= 1 && anc.length === target.depth && ancBad.length === 0,
          `flame ${mode}: clicking ${target.name} (depth ${target.depth}, ${target.w.toFixed(1)} px) makes it and its ${target.depth} ancestors full width`,
          `root ${rw} px, frame ${after ? after.w : 'gone'} px, ancestors ${JSON.stringify(anc)}`);
        await page.click('#flame-reset');
        const reset = await findFrame(target);
        const rw2 = (await rootBox()).w;
        ok(reset && Math.abs(reset.w - before.w) <= 1 && Math.abs(rw2 - rw) <= 1,
          `flame ${mode}: #flame-reset gives ${target.name} its width back`,
          `before ${before.w} px, after reset ${reset ? reset.w : 'gone'} px`);
      }
      if (opt.frames.length) {
        const q = opt.frames[0];
        await page.fill('#flame-search', q);
        const matches = await page.locator('#flame .frame.match').count();
        const text = (await page.locator('#flame-match').innerText()).trim();
        ok(matches >= 1 && /^\d+ frames match \(\d+(\.\d+)?%\)$/.test(text),
          `flame ${mode}: searching "${q}" highlights ${matches} frame(s): "${text}"`,
          `.match: ${matches}, #flame-match: "${text}"`);
        await page.fill('#flame-search', '');
      }
    }
  }

  // ---- histograms ------------------------------------------------------
  for (const kind of ['func', 'probe']) {
    const file = opt.hist[kind];
    if (!file) continue;
    let groups;
    try {
      groups = readGroups(file);
    } catch (e) {
      ok(false, `hist ${kind}: ${file} reads`, e.message);
      continue;
    }
    const options = await page.evaluate(() => [...document.querySelectorAll('#hist-group option')].map((o) => o.value));
    if (!ok(groups.length > 0 && options.includes(kind), `hist ${kind}: ${groups.length} groups in ${file}, #hist-group offers ${kind}`,
      `#hist-group options ${JSON.stringify(options)}`)) continue;
    await page.selectOption('#hist-group', kind);
    const keys = await page.evaluate(() => [...document.querySelectorAll('#hist-key option')].map((o) => o.value));
    const want = groups.map((g) => g.key);
    ok(keys.length === want.length && want.every((k) => keys.includes(k)), `hist ${kind}: #hist-key offers the ${want.length} keys of the file`,
      `page: ${JSON.stringify(keys.slice(0, 20))}\nfile: ${JSON.stringify(want.slice(0, 20))}`);
    for (const g of groups) {
      if (!keys.includes(g.key)) continue;
      await page.selectOption('#hist-key', g.key);
      const got = {};
      for (const scale of ['log2', 'linear']) {
        await page.selectOption('#hist-scale', scale);
        got[scale] = await page.evaluate(() => {
          let s = 0;
          const bars = document.querySelectorAll('#hist .bar');
          for (const b of bars) s += Number(b.dataset.count);
          return { sum: s, bars: bars.length, total: document.querySelector('#hist-total')?.textContent.trim() };
        });
      }
      await page.selectOption('#hist-scale', 'log2');
      const c = g.count;
      ok(got.log2.sum === c && got.linear.sum === c && got.log2.total === String(c) && got.linear.total === String(c),
        `hist ${kind} ${g.key}: ${got.log2.bars} log2 bars and ${got.linear.bars} linear bars sum to ${c}, #hist-total ${c}`,
        `log2 ${JSON.stringify(got.log2)}, linear ${JSON.stringify(got.linear)}, count ${c}`);
      const sc = await page.evaluate(([kind, key]) => {
        const s = window.ktrackReport.scatter?.[kind]?.[key];
        return { drawn: Number(document.querySelector('#scatter').dataset.points), want: s ? s.points.length : 0 };
      }, [kind, g.key]);
      ok(sc.drawn === sc.want, `scatter ${kind} ${g.key}: ${sc.drawn} points drawn as in the data`, JSON.stringify(sc));
    }
  }

  // ---- lost records, objects --------------------------------------------
  if (opt.expectLost) {
    const r = await page.evaluate(() => {
      let s = 0;
      const m = document.querySelectorAll('#timeline .lost-marker');
      for (const x of m) s += Number(x.dataset.count);
      return { markers: m.length, sum: s, lost: window.ktrackReport.header?.lost };
    });
    ok(r.markers >= 1 && r.lost > 0 && r.sum === r.lost, `timeline: ${r.markers} lost markers add up to the header's ${r.lost} lost records`,
      JSON.stringify(r));
  }
  if (opt.expectObjects !== undefined) {
    const lanes = await page.locator('#objects .obj-lane').count();
    ok(lanes === opt.expectObjects, `objects: ${lanes} lives drawn, want ${opt.expectObjects}`);
  }

  // ---- screenshots ---------------------------------------------------
  if (opt.shots) {
    mkdirSync(opt.shots, { recursive: true });
    const has = await page.evaluate(() => ({
      flame: document.querySelectorAll('#flame .frame').length > 0,
      hist: document.querySelectorAll('#hist .bar').length > 0,
      scatter: Number(document.querySelector('#scatter').dataset.points) > 0,
      timeline: document.querySelectorAll('#timeline .lane').length > 0,
      objects: document.querySelectorAll('#objects .obj-lane').length > 0,
    }));
    const wrote = [];
    const shot = async (sel, suffix) => {
      const path = join(opt.shots, `${opt.name}-${suffix}.png`);
      // A tall section (hundreds of object lives) is cut to its first
      // 1,000 px: a picture of the view, not a poster.
      const el = page.locator(sel);
      await el.scrollIntoViewIfNeeded();
      const box = await page.evaluate((q) => {
        const r = document.querySelector(q).getBoundingClientRect();
        return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height };
      }, sel);
      if (box.height > 1000) await page.screenshot({ path, fullPage: true, clip: { ...box, height: 1000 } });
      else await el.screenshot({ path });
      wrote.push(path);
    };
    let why = '';
    try {
      await page.mouse.move(0, 0);
      await shot('#header', 'header');
      if (has.flame) {
        await shot('#flame', 'flame');
        const t = await widest();
        const f = t && (await findFrame(t));
        if (f) {
          await page.mouse.click(f.x, f.y);
          await page.mouse.move(0, 0);
          await shot('#flame', 'flame-zoomed');
          await page.click('#flame-reset');
        }
      }
      for (const s of ['hist', 'scatter', 'timeline', 'objects']) if (has[s]) await shot(`#${s}`, s);
    } catch (e) {
      why = e.message;
    }
    ok(!why, `screenshots: ${wrote.length} written to ${opt.shots}`, why);
  }

  ok(clean(), 'no console error, page error or request other than file:, data: or about: during the checks',
    [...errors, ...requests.map((r) => `request: ${r}`)].join('\n'));
} catch (e) {
  ok(false, 'the checks ran to the end', e.stack || String(e));
} finally {
  await browser.close().catch(() => {});
}
finish();
