// Written by monform beside a Playwright project's own config for one run
// (issue 49): the project's config as it is, every project run headless in
// the system Chromium (MONFORM_CHROMIUM; never a browser Playwright would
// download), a JSON report for monform, traces and screenshots of failed
// tests in MONFORM_PLAYWRIGHT_OUTPUT. Projects of another browser (Firefox,
// WebKit) are left out: only Chromium is there.
import loaded from '__CONFIG__';

const base: any = (loaded as any) || {};
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];

function inChromium(use: any): boolean {
  return !use || !use.browserName || use.browserName === 'chromium';
}

function patch(use: any): any {
  // A channel (chrome, msedge) would look for a browser installed for it.
  const { channel, ...rest } = use || {};
  const launchOptions = rest.launchOptions || {};
  return {
    ...rest,
    headless: true,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      ...launchOptions,
      executablePath: process.env.MONFORM_CHROMIUM,
      args: [...ARGS, ...(launchOptions.args || [])],
    },
  };
}

const config: any = {
  ...base,
  use: patch(base.use),
  reporter: [['json', { outputFile: process.env.MONFORM_PLAYWRIGHT_REPORT }], ['line']],
  outputDir: process.env.MONFORM_PLAYWRIGHT_OUTPUT,
  preserveOutput: 'failures-only',
};
if (Array.isArray(base.projects)) {
  const kept = base.projects.filter((p: any) => inChromium({ ...(base.use || {}), ...(p.use || {}) }));
  // A project's `use` is laid over the config's: its launchOptions too.
  const launchOptions = (p: any) => ({ ...((base.use || {}).launchOptions || {}), ...((p.use || {}).launchOptions || {}) });
  config.projects = kept.map((p: any) => ({ ...p, use: patch({ ...(p.use || {}), launchOptions: launchOptions(p) }) }));
}
export default config;
