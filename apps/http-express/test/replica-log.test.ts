/** The log of replicas left out and back (docs/decisions.md 13): transitions only, by pool name. */
import pino from 'pino';
import { replicaStateLog } from '../src/replicas/replica-log';

function logged(): { lines: { level: number; pool: string; msg: string }[]; logger: pino.Logger } {
  const lines: { level: number; pool: string; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { lines, logger };
}

test('a replica that is never well is said to be left out once; back, it is said to serve', () => {
  const { lines, logger } = logged();
  const lag = replicaStateLog(logger);
  for (let check = 0; check < 3; check += 1) lag('app', 0, undefined);
  lag('app', 0, 12);
  lag('app', 0, 0);
  lag('app', 0, undefined);
  expect(lines.map(({ level, pool }) => [level, pool])).toEqual([
    [40, 'app/replica-0'],
    [30, 'app/replica-0'],
    [40, 'app/replica-0'],
  ]);
  expect(lines[0]?.msg).toMatch(/^replica left out/);
});

test('a replica well from its first check logs nothing; each replica is followed on its own', () => {
  const { lines, logger } = logged();
  const lag = replicaStateLog(logger);
  lag('app', 0, 0);
  lag('app', 1, undefined);
  lag('app', 0, 0);
  expect(lines.map(({ pool }) => pool)).toEqual(['app/replica-1']);
});
