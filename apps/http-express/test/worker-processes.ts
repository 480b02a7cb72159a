/**
 * Telling the workers of a WORKERS=n server apart from outside, through Linux's /proc: which
 * processes the primary forked, and which of them owns a TCP connection to PostgreSQL. A request
 * that asks PostgreSQL for `inet_client_port()` thus names the worker that ran it, without the
 * server exposing anything for tests.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The pids of `pid`'s children. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter((each) => each !== '')
      .map(Number);
  } catch {
    return [];
  }
}

/** Whether a process exists (a zombie not yet reaped counts as gone). */
export function isRunning(pid: number): boolean {
  try {
    const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return state !== undefined && state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Socket inodes of every local TCP port, from /proc/net/tcp and tcp6. */
function inodesByLocalPort(): Map<number, string> {
  const byPort = new Map<number, string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      const inode = fields[9];
      if (local === undefined || inode === undefined || inode === '0') continue;
      byPort.set(parseInt(local.slice(local.lastIndexOf(':') + 1), 16), inode);
    }
  }
  return byPort;
}

function socketInodesOf(pid: number): Set<string> {
  const inodes = new Set<string>();
  let descriptors: string[];
  try {
    descriptors = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const fd of descriptors) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      if (socket) inodes.add(socket);
    } catch {
      // Closed meanwhile.
    }
  }
  return inodes;
}

/** Which of `pids` owns the TCP connection whose local port is `port`; undefined if none. */
export function ownerOfLocalPort(port: number, pids: readonly number[]): number | undefined {
  const inode = inodesByLocalPort().get(port);
  if (inode === undefined) return undefined;
  return pids.find((pid) => socketInodesOf(pid).has(inode));
}
