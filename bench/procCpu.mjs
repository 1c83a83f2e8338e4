// CPU-seconds of the headless Chromium this Node process started (browser, GPU process, renderer,
// utilities), read from /proc (Linux). On a software adapter (SwiftShader) every engine's GPU work
// is CPU work in Chromium's GPU process, so CPU-seconds per product measure an engine's cost even
// when other jobs on the machine stretch its wall-clock time. bench/matmul.mjs samples these
// around each engine's timed block.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // getconf missing: Linux's USER_HZ is 100 almost everywhere.
}

/** { pid, ppid, cpu (seconds, user + system, all threads) } or null when the process is gone. */
function stat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "(comm)": state ppid ... utime (14th field) stime (15th).
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / ticksPerSecond };
  } catch {
    return null;
  }
}

/** The command line as one string: Chromium rewrites its children's titles with spaces, not NULs. */
function cmdline(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Whether /proc can be read here (Linux). */
export function procAvailable() {
  return stat(process.pid) !== null;
}

/** Chromium's process type from its command line: browser, gpu-process, renderer, zygote, utility, ... */
function processType(line) {
  return /--type=(\S+)/.exec(line)?.[1] ?? 'browser';
}

/**
 * CPU-seconds so far of every process under this Node process whose program is `executable`
 * (Chromium; Vite's esbuild child is left out), by process: { total, byPid: Map(pid -> {type, cpu}) }.
 */
export function chromiumCpu(executable) {
  const all = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (s) all.push(s);
  }
  const children = new Map();
  for (const s of all) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  const byPid = new Map();
  // Chromium's zygote and renderers are forks of the browser: every descendant of a Chromium child counts.
  const visit = (s) => {
    byPid.set(s.pid, { type: processType(cmdline(s.pid)), cpu: s.cpu });
    for (const c of children.get(s.pid) ?? []) visit(c);
  };
  for (const s of children.get(process.pid) ?? []) if (cmdline(s.pid).startsWith(`${executable} `)) visit(s);
  let total = 0;
  for (const p of byPid.values()) total += p.cpu;
  return { total, byPid };
}

/**
 * CPU-seconds spent between two chromiumCpu samples, in total and per process type. A process
 * that started in between counts from zero; one that ended in between is lost (rare: Chromium
 * keeps its GPU process and renderer for the page's life).
 */
export function cpuBetween(before, after) {
  const byType = {};
  let total = 0;
  for (const [pid, p] of after.byPid) {
    const d = p.cpu - (before.byPid.get(pid)?.cpu ?? 0);
    total += d;
    byType[p.type] = (byType[p.type] ?? 0) + d;
  }
  return { total, byType };
}
