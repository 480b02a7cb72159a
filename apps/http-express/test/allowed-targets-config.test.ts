/**
 * ALLOWED_TARGETS that names no target (only empty entries) is a configuration mistake, said at
 * start in one line, instead of a server that refuses every target without a word.
 */
import { spawnSync } from 'node:child_process';
import { ConfigError, loadConfig } from '../src/config';
import { BIN } from './sqlgate-process';

const NAMES_NONE =
  /^ALLOWED_TARGETS must be a comma list of host names, host:port, IP addresses or CIDR ranges: '.*' names no target \(leave it unset to allow every target\)$/;

it.each([',,', ' , ', ',\t,'])('refuses ALLOWED_TARGETS=%j, which names no target', (value) => {
  expect(() => loadConfig({ ALLOWED_TARGETS: value })).toThrow(ConfigError);
  expect(() => loadConfig({ ALLOWED_TARGETS: value })).toThrow(NAMES_NONE);
});

it('takes a list with an empty entry among targets, and an unset or empty variable', () => {
  expect(loadConfig({ ALLOWED_TARGETS: '127.0.0.1,,10.0.0.0/8' }).allowedTargets).toBe(
    '127.0.0.1,,10.0.0.0/8',
  );
  expect(loadConfig({ ALLOWED_TARGETS: '' }).allowedTargets).toBeUndefined();
  expect(loadConfig({}).allowedTargets).toBeUndefined();
});

it('stops the sqlgate command at start with that one line', () => {
  const run = spawnSync(process.execPath, [BIN], {
    env: { ...process.env, ALLOWED_TARGETS: ',,', PORT: '0', LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: 20_000,
  });
  expect(run.status).toBe(1);
  expect(run.stderr.trim().split('\n')).toEqual([
    expect.stringMatching(/^sqlgate: ALLOWED_TARGETS must be .* names no target/),
  ]);
}, 30_000);
