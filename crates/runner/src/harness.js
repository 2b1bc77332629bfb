// monform's harness for BROWSER, MULTI_STEP and PLAYWRIGHT checks and for
// setup/teardown scripts: runs Playwright code with playwright-core against
// the system Chromium. `@playwright/test` is served by a small shim (test,
// expect) so only playwright-core (no browser download) is needed.
//
// node harness.js MODE FILE   (MODE: script | suite | setup | teardown)
// Environment: MONFORM_CHROMIUM (the browser), MONFORM_RESULT_FILE (where
// the JSON result goes), NODE_PATH (where playwright-core is),
// MONFORM_ARTIFACTS (if set: a folder for a failed test's screenshot and
// Playwright trace).
'use strict';
const fs = require('fs');
const path = require('path');
const util = require('util');
const Module = require('module');

const [mode, target] = process.argv.slice(2);
const result = { tests: [], error: null, artifacts: [], at: null };
const ARTIFACTS = process.env.MONFORM_ARTIFACTS || '';
// A script runs as the body of an AsyncFunction: its line 1 is line 4 there
// (the function's header, its parameters' closing line, and our `{`).
const SCRIPT_LINE_OFFSET = 3;
let finished = false;

function fail(message) {
  if (!result.error) result.error = message;
  process.exitCode = 1;
}
process.on('exit', () => {
  if (!finished && !result.error && mode !== 'script') fail('the script ended before its tests finished');
  fs.writeFileSync(process.env.MONFORM_RESULT_FILE, JSON.stringify(result));
});
process.on('unhandledRejection', (e) => { fail(describe(e)); process.exit(1); });
process.on('uncaughtException', (e) => { fail(describe(e)); process.exit(1); });

// Where in the user's code a failure happened: the first frame of a script
// (an `eval at runScript` frame) or of a suite's file, from the expect()
// call site when there is one (its own stack has only the harness's frames).
function where(e) {
  const stacks = [e && e.site, e && e.stack].filter(Boolean).join('\n').split('\n');
  for (const frame of stacks) {
    const script = /eval at runScript .*<anonymous>:(\d+):(\d+)\)/.exec(frame);
    if (script && mode === 'script') {
      return { file, line: Number(script[1]) - SCRIPT_LINE_OFFSET, column: Number(script[2]) };
    }
    if (mode === 'suite') {
      const m = /\(?([^\s()]+):(\d+):(\d+)\)?$/.exec(frame.trim());
      if (m && m[1].startsWith(path.resolve(target) + path.sep)) {
        return { file: path.relative(target, m[1]), line: Number(m[2]), column: Number(m[3]) };
      }
    }
  }
  return null;
}

function describe(e) {
  if (e && e.message) return String(e.message).replace(/\x1b\[[0-9;]*m/g, '').split('\n').slice(0, 6).join('\n').trim();
  return String(e);
}

// Setup and teardown scripts need no browser, nor playwright-core.
const browserMode = mode === 'script' || mode === 'suite';
const core = browserMode ? require('playwright-core') : { chromium: {}, request: {} };
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];
if (browserMode) {
  const launch = core.chromium.launch.bind(core.chromium);
  // Every launch uses the system Chromium, headless, whatever the script asks.
  core.chromium.launch = (options = {}) => launch({
    ...options, headless: true, executablePath: process.env.MONFORM_CHROMIUM,
    args: [...ARGS, ...(options.args || [])],
  });
}

// --- expect -----------------------------------------------------------------
const POLL_MS = 5000;
class ExpectError extends Error {}

function isPage(v) { return v && typeof v.goto === 'function' && typeof v.title === 'function'; }
function isLocator(v) { return v && typeof v.waitFor === 'function' && typeof v.textContent === 'function'; }
function matches(actual, expected) {
  return expected instanceof RegExp ? expected.test(actual) : actual === expected;
}
function show(v) { return util.inspect(v, { depth: 3, breakLength: Infinity }); }

// Page and locator matchers poll, as Playwright's do.
async function poll(read, ok, describeFailure, negate, site) {
  const deadline = Date.now() + POLL_MS;
  let actual;
  for (;;) {
    actual = await read();
    if (Boolean(ok(actual)) !== negate) return;
    if (Date.now() > deadline) throw Object.assign(new ExpectError(describeFailure(actual)), { site });
    await new Promise((r) => setTimeout(r, 100));
  }
}

function expect(actual) {
  const site = new Error().stack;
  const failed = (message) => Object.assign(new ExpectError(message), { site });
  const build = (negate) => {
    const not = negate ? 'not ' : '';
    const check = (ok, message) => {
      if (Boolean(ok) === negate) throw failed(message);
    };
    return {
      toBe: (e) => check(Object.is(actual, e), `expected ${show(actual)} ${not}to be ${show(e)}`),
      toEqual: (e) => check(util.isDeepStrictEqual(actual, e), `expected ${show(actual)} ${not}to equal ${show(e)}`),
      toStrictEqual: (e) => check(util.isDeepStrictEqual(actual, e), `expected ${show(actual)} ${not}to equal ${show(e)}`),
      toBeTruthy: () => check(actual, `expected ${show(actual)} ${not}to be truthy`),
      toBeFalsy: () => check(!actual, `expected ${show(actual)} ${not}to be falsy`),
      toBeDefined: () => check(actual !== undefined, `expected ${show(actual)} ${not}to be defined`),
      toBeNull: () => check(actual === null, `expected ${show(actual)} ${not}to be null`),
      toContain: (e) => check(actual != null && actual.includes(e), `expected ${show(actual)} ${not}to contain ${show(e)}`),
      toMatch: (e) => check(matches(String(actual), e instanceof RegExp ? e : new RegExp(e)), `expected ${show(actual)} ${not}to match ${e}`),
      toHaveLength: (n) => check(actual != null && actual.length === n, `expected length ${actual && actual.length} ${not}to be ${n}`),
      toBeGreaterThan: (n) => check(actual > n, `expected ${show(actual)} ${not}to be greater than ${n}`),
      toBeLessThan: (n) => check(actual < n, `expected ${show(actual)} ${not}to be less than ${n}`),
      toBeOK: async () => check(actual.ok(), `expected response ${actual.url()} ${not}to be OK, got status ${actual.status()}`),
      toHaveTitle: (e) => poll(() => actual.title(), (t) => matches(t, e),
        (t) => `expected page title ${not}to be ${show(e)}, got ${show(t)}`, negate, site),
      toHaveURL: (e) => poll(async () => actual.url(), (u) => matches(u, e),
        (u) => `expected page URL ${not}to be ${show(e)}, got ${show(u)}`, negate, site),
      toBeVisible: () => poll(() => actual.isVisible(), (v) => v,
        () => `expected ${actual} ${not}to be visible`, negate, site),
      toHaveText: (e) => poll(() => actual.textContent(), (t) => matches((t || '').trim(), e),
        (t) => `expected ${actual} text ${not}to be ${show(e)}, got ${show(t)}`, negate, site),
      toContainText: (e) => poll(() => actual.textContent(), (t) => (e instanceof RegExp ? e.test(t || '') : (t || '').includes(e)),
        (t) => `expected ${actual} text ${not}to contain ${show(e)}, got ${show(t)}`, negate, site),
      toHaveCount: (n) => poll(() => actual.count(), (c) => c === n,
        (c) => `expected ${actual} ${not}to have count ${n}, got ${c}`, negate, site),
    };
  };
  const positive = build(false);
  positive.not = build(true);
  return positive;
}

// --- test -------------------------------------------------------------------
const tests = [];
const hooks = { beforeEach: [], afterEach: [], beforeAll: [], afterAll: [] };
let prefix = [];
let file = '';
function test(name, fn) { tests.push({ name: [...prefix, name].join(' › '), fn, file }); }
test.describe = (name, fn) => {
  if (typeof name === 'function') return name();
  prefix.push(name);
  try { fn(); } finally { prefix.pop(); }
};
test.describe.serial = test.describe;
test.describe.parallel = test.describe;
test.describe.configure = () => {};
test.only = test;
test.skip = () => {};
test.fixme = () => {};
test.slow = () => {};
test.use = () => {};
test.setTimeout = () => {};
test.step = async (_name, fn) => fn();
for (const hook of Object.keys(hooks)) test[hook] = (fn) => hooks[hook].push(fn);
test.expect = expect;

const shim = { ...core, test, expect };
const original = Module.prototype.require;
Module.prototype.require = function require(id) {
  if (id === '@playwright/test' || id === 'playwright' || id === 'playwright-core' || id === 'playwright/test') return shim;
  return original.apply(this, arguments);
};

let browser = null;
async function fixtures() {
  browser = browser || await core.chromium.launch();
  const context = await browser.newContext();
  // Recorded for every test, kept only for a failed one (keep()).
  if (ARTIFACTS) await context.tracing.start({ screenshots: true, snapshots: true }).catch(() => {});
  const page = await context.newPage();
  const request = await core.request.newContext();
  return { browser, context, page, request, baseURL: undefined };
}
// A failed test's screenshot and trace, into MONFORM_ARTIFACTS.
async function keep(f, e) {
  if (!result.at) result.at = where(e);
  if (!ARTIFACTS || !f.context) return;
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const n = result.artifacts.length / 2 + 1;
  const shot = path.join(ARTIFACTS, `screenshot-${n}.png`);
  const trace = path.join(ARTIFACTS, `trace-${n}.zip`);
  if (f.page && await f.page.screenshot({ path: shot, fullPage: true }).then(() => true, () => false)) {
    result.artifacts.push({ kind: 'screenshot', path: shot });
  }
  if (await f.context.tracing.stop({ path: trace }).then(() => true, () => false)) {
    result.artifacts.push({ kind: 'trace', path: trace });
  }
}

async function release(f) {
  await f.context.close().catch(() => {});
  await f.request.dispose().catch(() => {});
}

async function runTests() {
  for (const fn of hooks.beforeAll) await fn({});
  for (const t of tests) {
    const started = Date.now();
    const f = await fixtures();
    try {
      for (const fn of hooks.beforeEach) await fn(f);
      await t.fn(f, { title: t.name });
      for (const fn of hooks.afterEach) await fn(f);
      result.tests.push({ name: t.name, file: t.file, passed: true, ms: Date.now() - started });
    } catch (e) {
      await keep(f, e);
      result.tests.push({ name: t.name, file: t.file, passed: false, error: describe(e), ms: Date.now() - started });
      fail(`test '${t.name}': ${describe(e)}`);
    } finally {
      await release(f);
    }
  }
  for (const fn of hooks.afterAll) await fn({});
}

const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
// A script is the body of an async function: top-level await works, and
// `page`, `request` and `expect` are there as the service provides them.
async function runScript(scriptPath, extra) {
  // In a block of its own, the script may declare `test`, `expect`... again.
  const source = `{\n${fs.readFileSync(scriptPath, 'utf8')}\n}`;
  file = path.basename(scriptPath);
  const local = Module.createRequire(scriptPath);
  const shimmed = (id) => (['@playwright/test', 'playwright', 'playwright-core'].includes(id) ? shim : local(id));
  const module = { exports: {} };
  const common = { require: shimmed, module, exports: module.exports, __filename: scriptPath, __dirname: path.dirname(scriptPath), test, expect };
  if (extra) {
    // Setup and teardown scripts: `request` (and `response`) are the API check's.
    const scope = { ...common, ...extra };
    await new AsyncFunction(...Object.keys(scope), source)(...Object.values(scope));
    return;
  }
  const needsPage = /\b(page|context|browser)\b/.test(source) && !/require\(['"]playwright(-core)?['"]\)/.test(source);
  const f = needsPage ? await fixtures() : { request: await core.request.newContext() };
  const scope = { ...common, page: f.page, context: f.context, browser: f.browser, request: f.request };
  try {
    await new AsyncFunction(...Object.keys(scope), source)(...Object.values(scope));
  } catch (e) {
    await keep(f, e);
    throw e;
  } finally {
    if (f.context) await release(f); else await f.request.dispose();
  }
}

function testFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(full));
    else if (/\.(spec|test)\.(c?js)$/.test(entry.name)) out.push(full);
  }
  return out.sort();
}

(async () => {
  try {
    if (mode === 'suite') {
      const files = testFiles(target);
      if (files.length === 0) throw new Error(`no test files (*.spec.js, *.test.js) in ${target}`);
      for (const f of files) { file = path.relative(target, f); require(f); }
    } else if (mode === 'setup' || mode === 'teardown') {
      const io = JSON.parse(fs.readFileSync(process.env.MONFORM_IO_FILE, 'utf8'));
      // Scripts see headers and query parameters as objects, as the service gives them.
      const pairs = ['headers', 'queryParameters'];
      for (const key of pairs) {
        const list = io.request[key] || [];
        if (Array.isArray(list)) io.request[key] = Object.fromEntries(list.map((h) => [h.key, h.value]));
      }
      await runScript(target, io);
      for (const key of pairs) {
        const map = io.request[key];
        if (map && !Array.isArray(map)) io.request[key] = Object.entries(map).map(([k, v]) => ({ key: k, value: String(v) }));
      }
      result.io = io;
    } else {
      await runScript(target, null);
    }
    await runTests();
    if ((mode === 'suite') && result.tests.length === 0) fail('the suite has no tests');
  } catch (e) {
    fail(describe(e));
  } finally {
    finished = true;
    if (browser) await browser.close().catch(() => {});
  }
})();
