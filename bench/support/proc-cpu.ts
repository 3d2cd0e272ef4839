/**
 * CPU time of this process and every process under it (the local GitHub's git helper and its git
 * processes, the runner's agents), from Linux's /proc: each live process's own user + system time
 * plus what it collected from the children it reaped. A child that ended was reaped by a parent of
 * the tree, so its time is in that parent's figure. Read twice, the difference is the tree's CPU in
 * between (a process that ended in between and had started before counts whole: a small excess).
 * Null where /proc cannot be read.
 */
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on Linux

interface Stat {
  ppid: number;
  ticks: number;
}

function stat(pid: string): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ")".
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // After the name: state(3) ppid(4) … utime(14) stime(15) cutime(16) cstime(17); f[0] is field 3.
    const n = (field: number) => Number(f[field - 3]);
    return { ppid: n(4), ticks: n(14) + n(15) + n(16) + n(17) };
  } catch {
    return null;
  }
}

/** CPU milliseconds used so far by this process and its live descendants (with what they reaped). */
export function processTreeCpuMs(root = process.pid): number | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  } catch {
    return null;
  }
  const stats = new Map<number, Stat>();
  for (const p of pids) {
    const s = stat(p);
    if (s) stats.set(Number(p), s);
  }
  if (!stats.has(root)) return null;
  const inTree = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
      if (p === root) return true;
      p = stats.get(p)?.ppid ?? 0;
    }
    return false;
  };
  let ticks = 0;
  for (const [pid, s] of stats) if (inTree(pid)) ticks += s.ticks;
  return (ticks * 1000) / TICKS_PER_SECOND;
}
