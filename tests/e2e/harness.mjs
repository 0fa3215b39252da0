// The real desktop for end-to-end tests of the real app: an Xvfb display, a
// PulseAudio virtual microphone, tauri-driver + WebKitWebDriver driving the
// app binary, xdotool for keys, zenity as the app being dictated into.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, chmodSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, homedir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { createHash } from 'node:crypto';
import { remote } from 'webdriverio';

export const APP_BIN =
  process.env.UTTER_APP_BIN ??
  join(process.env.CARGO_TARGET_DIR ?? join(homedir(), '.cache/utter/target'), 'debug/utter-app');
export const MODELS_DIR = process.env.UTTER_MODELS_DIR || join(homedir(), '.local/share/utter/models');
export const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';

const children = [];
/** Stops every process the tests started (Xvfb, PulseAudio, drivers, apps). */
export function stopAll() {
  for (const c of children.splice(0)) {
    try {
      // Drivers run in their own process group: take the group (driver, WebKitWebDriver, app).
      if (c.spawnargs[0] === 'tauri-driver') process.kill(-c.pid, 'SIGKILL');
      else c.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
}
process.on('exit', stopAll);
// Killed from outside (a CI step's timeout, Ctrl-C): 'exit' alone does not run on a signal.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    stopAll();
    process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1));
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(what, fn, timeoutMs = 15000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what} (last: ${last})`);
}

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function start(cmd, args, env, opts = {}) {
  const child = spawn(cmd, args, { env: opts.env ?? env, stdio: opts.stdio ?? 'ignore' });
  children.push(child);
  return child;
}

/** Reference transcript of each LibriVox clip, by clip id. */
export function librivoxTruth() {
  const truth = {};
  for (const line of readFileSync(join(LIBRIVOX, 'transcription'), 'utf8').split('\n')) {
    const m = line.match(/^(.*) \(([^)]+)\)$/);
    if (m) truth[m[2]] = m[1].replace(/<\/?s>/g, '').trim();
  }
  return truth;
}

export function wordErrorRate(reference, hypothesis) {
  const norm = (s) => s.toLowerCase().replace(/[^a-z0-9' ]/g, ' ').split(/\s+/).filter(Boolean);
  const r = norm(reference);
  const h = norm(hypothesis);
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  for (let i = 1; i <= r.length; i++) {
    const cur = [i];
    for (let j = 1; j <= h.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r[i - 1] === h[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[h.length] / Math.max(r.length, 1);
}

/** One X display + PulseAudio virtual mic for the whole test file. */
export async function desktop() {
  const root = mkdtempSync(join(tmpdir(), 'utter-e2e-'));
  const runtime = join(root, 'runtime');
  mkdirSync(runtime);
  chmodSync(runtime, 0o700);
  let n = 120 + (process.pid % 200);
  while (existsSync(`/tmp/.X${n}-lock`) || existsSync(`/tmp/.X11-unix/X${n}`)) n++;
  const display = `:${n}`;
  const env = { ...process.env, DISPLAY: display, XDG_RUNTIME_DIR: runtime };
  start('Xvfb', [display, '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], env);
  await waitFor('Xvfb', () => spawnSync('xdpyinfo', [], { env, timeout: 5000 }).status === 0);
  start(
    'pulseaudio',
    [
      '--daemonize=no', '--exit-idle-time=-1', '--disallow-exit', '-n',
      '--load=module-native-protocol-unix auth-anonymous=1',
      '--load=module-null-sink sink_name=vspk',
      '--load=module-null-sink sink_name=vmic_sink norewinds=1 rate=48000 channels=1',
      '--load=module-remap-source master=vmic_sink.monitor source_name=vmic',
      '--load=module-always-sink',
    ],
    env,
  );
  await waitFor('PulseAudio', () => spawnSync('pactl', ['info'], { env, timeout: 5000 }).status === 0);
  spawnSync('pactl', ['set-default-source', 'vmic'], { env, timeout: 5000 });
  spawnSync('pactl', ['set-default-sink', 'vspk'], { env, timeout: 5000 });

  // Every tool call is bounded: one that waits (ImageMagick's `import` with no window
  // waits for a mouse click) fails the test instead of hanging the suite.
  const run = (cmd, args, timeoutMs = 60000) => {
    const r = spawnSync(cmd, args, { env, encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL' });
    if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  return {
    root,
    display,
    env,
    run,
    xdotool: (...args) => run('xdotool', args),
    /** Plays a file into the virtual microphone (returns when played). */
    speak: (file) => run('paplay', ['--latency-msec=200', '--device=vmic_sink', file]),
    screenshot: (file) => run('import', ['-window', 'root', file]),
    start: (cmd, args, opts) => start(cmd, args, env, opts),
  };
}

/** A zenity entry window: the app being dictated into. */
export function pasteTarget(d, title) {
  const child = d.start('zenity', ['--entry', `--title=${title}`, '--text=dictate here'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  return {
    /** Waits for the window, gives it the keyboard focus, returns its id. */
    async focus() {
      const window = await waitFor('the zenity window', () => d.xdotool('search', '--name', title).split('\n')[0]);
      await sleep(500);
      d.xdotool('windowfocus', '--sync', window);
      return window;
    },
    /** Presses Return and returns what the entry held. */
    async submit() {
      d.xdotool('key', 'Return');
      await waitFor('zenity to print the entry', () => out.trim().length > 0, 10000);
      return out.trim();
    },
    close: () => child.kill(),
  };
}

/** Fresh app dirs (config, data, cache, XDG homes) under the desktop's root. */
export function appDirs(d, name) {
  const base = join(d.root, name);
  const dirs = {
    config: join(base, 'config'),
    data: join(base, 'data'),
    cache: join(base, 'cache'),
    xdgData: join(base, 'xdg-data'),
    xdgConfig: join(base, 'xdg-config'),
  };
  Object.values(dirs).forEach((p) => mkdirSync(p, { recursive: true }));
  return dirs;
}

/** Processes of the app started with this config dir (read from /proc/PID/environ). */
function appPids(configDir) {
  return procsWith('environ', `UTTER_CONFIG_DIR=${configDir}\0`);
}

/** The app's process tree (the app, its WebKit processes, engine and VAD workers),
 *  found by its config dir, each as { pid, comm }. */
export function appProcesses(configDir) {
  return appPids(configDir).map((pid) => {
    let comm = '';
    try {
      comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      /* gone */
    }
    return { pid, comm };
  }).filter((p) => p.comm);
}

/**
 * The sound server's capture streams (source outputs) opened by any of these processes: what the
 * system's recording indicator shows.
 */
export function captureStreams(d, pids) {
  const outputs = d.run('pactl', ['list', 'source-outputs']);
  return pids.filter((pid) => outputs.includes(`application.process.id = "${pid}"`)).length;
}

/** A private D-Bus session bus (the single-instance hand-over uses one); returns its address. */
export function sessionBus(d) {
  const bus = spawn('dbus-daemon', ['--session', '--nofork', '--print-address=1'], {
    env: d.env,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(bus);
  return new Promise((resolve, reject) => {
    let out = '';
    bus.stdout.on('data', (b) => {
      out += b;
      if (out.includes('\n')) resolve(out.trim());
    });
    bus.once('exit', (code) => reject(new Error(`dbus-daemon exited (${code})`)));
  });
}

/** Asks an X11 window to close as a window manager's close button does (WM_DELETE_WINDOW). */
export function closeWindow(d, window) {
  d.run('python3', [join(import.meta.dirname, '..', 'support', 'x11_close_window.py'), window]);
}

/** Processes whose /proc/PID/`file` contains `needle`. */
function procsWith(file, needle) {
  const out = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readFileSync(`/proc/${p}/${file}`, 'latin1').includes(needle)) out.push(Number(p));
    } catch {
      /* gone, or not ours */
    }
  }
  return out;
}

function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts tauri-driver on free ports; rejects if it exits before listening. */
async function startDriver(env) {
  const port = await freePort();
  const nativePort = await freePort();
  // Its own process group: a driver shutting down must not signal the next one.
  const driver = spawn('tauri-driver', ['--port', String(port), '--native-port', String(nativePort)], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  children.push(driver);
  const exited = new Promise((resolve) => driver.once('exit', resolve));
  const log = { text: '' };
  driver.stderr.on('data', (b) => (log.text += b));
  const listening = () =>
    new Promise((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(true));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(false)));
    });
  const deadline = Date.now() + 15000;
  while (!(await listening())) {
    if (driver.exitCode !== null) throw new Error(`tauri-driver exited (${driver.exitCode}): ${log.text}`);
    if (Date.now() > deadline) throw new Error(`tauri-driver did not listen on ${port}: ${log.text}`);
    await sleep(100);
  }
  return { driver, exited, port, nativePort, log };
}

/** The tests' models folder: the installed models (linked, not copied) with whisper
 *  tiny.en as the dictation default, the model the tests' expected texts come from (a new
 *  installation dictates with the one recommended for its computer). One per desktop. */
export function testModels(d) {
  const dir = join(d.root, 'models');
  if (existsSync(dir)) return dir;
  mkdirSync(dir);
  for (const f of readdirSync(MODELS_DIR)) {
    if (f !== 'manifest.json') symlinkSync(join(MODELS_DIR, f), join(dir, f));
  }
  const manifest = JSON.parse(readFileSync(join(MODELS_DIR, 'manifest.json'), 'utf8'));
  manifest.default_speech = 'whisper-tiny.en';
  delete manifest.default_files;
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return dir;
}

/** Starts the real app under tauri-driver and connects a WebDriver session. */
export async function launch(d, dirs, { models = testModels(d), env: extraEnv = {} } = {}) {
  const env = {
    ...d.env,
    UTTER_CONFIG_DIR: dirs.config,
    UTTER_DATA_DIR: dirs.data,
    UTTER_CACHE_DIR: dirs.cache,
    UTTER_MODELS_DIR: models,
    XDG_DATA_HOME: dirs.xdgData,
    XDG_CONFIG_HOME: dirs.xdgConfig,
    RUST_LOG: 'info',
    UTTER_UPDATE_CHECK: '0', // tests never reach out to GitHub
    ...extraEnv,
  };
  const started = Date.now();
  // A session can fail to start when the previous app is still shutting down
  // (it was only hidden to the tray); stop everything of this attempt and retry.
  // Once in a CI run three tries within 8 s all failed: five, a little apart.
  const attempts = 5;
  for (let attempt = 1; ; attempt++) {
    let spawned;
    try {
      spawned = await startDriver(env);
    } catch (e) {
      if (attempt === attempts) throw e;
      await sleep(2000);
      continue;
    }
    const stop = () => stopAttempt(dirs, spawned);
    try {
      const browser = await remote({
        hostname: '127.0.0.1',
        port: spawned.port,
        logLevel: 'silent',
        connectionRetryCount: 0,
        capabilities: {
          'tauri:options': { application: APP_BIN },
          'wdio:enforceWebDriverClassic': true,
        },
      });
      return {
        browser,
        env,
        started,
        driverLog: () => spawned.log.text,
        async close() {
          try {
            await browser.deleteSession();
          } catch {
            /* the app may already be gone */
          }
          await stop();
        },
      };
    } catch (e) {
      await stop();
      if (attempt === attempts) throw new Error(`${e.message}; tauri-driver said: ${spawned.log.text.slice(-2000)}`);
      await sleep(2000);
    }
  }
}

/** Stops a launch: the app (which closing its window only hides to the tray),
 *  WebKitWebDriver and tauri-driver. Returns once all are gone: a lingering
 *  instance would hold the global hotkey and make the next app's
 *  single-instance guard exit it at once. */
async function stopAttempt(dirs, { driver, exited, nativePort }) {
  const pids = () =>
    appPids(dirs.config)
      .concat(procsWith('cmdline', `--port=${nativePort}\0`)) // WebKitWebDriver
      .concat(groupAlive(driver.pid) ? [-driver.pid] : []);
  const signal = (sig) =>
    pids().forEach((p) => {
      try {
        process.kill(p, sig);
      } catch {
        /* gone */
      }
    });
  signal('SIGTERM');
  await Promise.race([exited, sleep(3000)]);
  for (let i = 0; i < 50 && pids().length; i++) {
    if (i === 20) signal('SIGKILL');
    await sleep(100);
  }
}

/** Calls a shell command through the app's own IPC bridge, as the drop handler does. */
export function invoke(browser, cmd, args = {}) {
  return browser.executeAsync(
    (cmd, args, done) => {
      window.__TAURI_INTERNALS__
        .invoke(cmd, args)
        .then((v) => done({ ok: v }))
        .catch((e) => done({ err: String(e) }));
    },
    cmd,
    args,
  ).then((r) => {
    if ('err' in r) throw new Error(`${cmd}: ${r.err}`);
    return r.ok;
  });
}

export const byTestId = (browser, id) => browser.$(`[data-testid="${id}"]`);

/** The `attr` attribute of every element matching `selector`. */
export async function attrs(browser, selector, attr) {
  const out = [];
  for (const el of await browser.$$(selector)) out.push(await el.getAttribute(attr));
  return out;
}

/** A loopback model server (the model hub's stand-in): serves `file` at
 *  `/<name>` with HTTP Range support. Returns its base URL and a stop. */
export async function modelServer(file, name) {
  const { createServer: createHttpServer } = await import('node:http');
  const body = readFileSync(file);
  const server = createHttpServer((req, res) => {
    if (req.url !== `/${name}`) {
      res.writeHead(404).end();
      return;
    }
    const m = /bytes=(\d+)-/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    const headers = { 'Content-Length': body.length - start };
    if (start > 0) headers['Content-Range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
    res.writeHead(start > 0 ? 206 : 200, headers);
    res.end(body.subarray(start));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${server.address().port}`, sha256: createHash('sha256').update(body).digest('hex'), size: body.length, stop: () => server.close() };
}
