/**
 * Cloudflare's workerd (the npm package's binary) serving one worker of ES modules on 127.0.0.1,
 * as a child process: its config, written to a temporary directory with copies of the modules,
 * lets the worker's fetch reach private and local addresses (sqlgate on 127.0.0.1), which a
 * worker's default outbound refuses.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findFreePort, untilServing } from '@sqlgate/testing';

export const WORKERD = path.join(__dirname, '..', '..', '..', 'node_modules', '.bin', 'workerd');

/** workerd refuses a compatibility date later than its own release. */
const COMPATIBILITY_DATE = '2026-11-17';
const START_ATTEMPTS = 3;
/** How long workerd may take to exit on SIGTERM before it is killed. */
const STOP_GRACE_MS = 5_000;

export interface WorkerdProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** The worker's ES modules. */
export interface WorkerModules {
  /** The one of `files` whose default export handles fetch. */
  main: string;
  /** Each module's name, by which the others import it, and the file it is copied from. */
  files: Record<string, string>;
}

function configText(modules: WorkerModules, port: number): string {
  const names = [
    modules.main,
    ...Object.keys(modules.files).filter((name) => name !== modules.main),
  ];
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [${names.map((name) => `(name = "${name}", esModule = embed "${name}")`).join(', ')}],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  globalOutbound = "internet",
);
`;
}

async function launch(directory: string, port: number): Promise<ChildProcess> {
  const child = spawn(WORKERD, ['serve', path.join(directory, 'config.capnp')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await untilServing(
      child,
      () =>
        fetch(url).then(
          (response) => response.ok,
          () => false,
        ),
      { name: 'workerd', notReady: `workerd did not answer at ${url}` },
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return child;
}

/** Starts workerd with the worker; resolves once it answers. Fails when workerd cannot start. */
export async function startWorkerd(modules: WorkerModules): Promise<WorkerdProcess> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'sqlgate-workerd-'));
  for (const [name, file] of Object.entries(modules.files)) {
    copyFileSync(file, path.join(directory, name));
  }
  for (let attempt = 1; ; attempt++) {
    // A free port now may be taken before workerd binds it: then another one.
    const port = await findFreePort();
    writeFileSync(path.join(directory, 'config.capnp'), configText(modules, port));
    let child: ChildProcess;
    try {
      child = await launch(directory, port);
    } catch (error) {
      if (attempt < START_ATTEMPTS) continue;
      rmSync(directory, { recursive: true, force: true });
      throw error;
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    return {
      url: `http://127.0.0.1:${port}`,
      pid: child.pid as number,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        const forced = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(forced);
        rmSync(directory, { recursive: true, force: true });
      },
    };
  }
}
