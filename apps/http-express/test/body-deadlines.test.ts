import { setTimeout as delay } from 'node:timers/promises';
import { eventually, mulberry32 } from '@sqlgate/testing';
import { BodyDeadlines } from '../src/body-deadlines';

describe('BodyDeadlines', () => {
  it('expires each read once its time has passed, in the order the reads began', async () => {
    const deadlines = new BodyDeadlines(60);
    const expired: { name: string; afterMs: number }[] = [];
    const watch = (name: string): void => {
      const since = performance.now();
      deadlines.watch(() => expired.push({ name, afterMs: performance.now() - since }));
    };
    watch('first');
    await delay(20);
    watch('second');
    await delay(20);
    watch('third');
    // Each at its deadline or, on a loaded machine, later; never before.
    await eventually(() =>
      expect(expired.map((e) => e.name)).toEqual(['first', 'second', 'third']),
    );
    for (const { afterMs } of expired) expect(afterMs).toBeGreaterThanOrEqual(60);
  });

  it('never expires a read whose watch was stopped, whatever its place among the others', async () => {
    const deadlines = new BodyDeadlines(40);
    const expired: string[] = [];
    const stops = ['a', 'b', 'c', 'd', 'e'].map((name) =>
      deadlines.watch(() => expired.push(name)),
    );
    // The oldest, one in the middle and the newest end in time; stopping twice changes nothing.
    for (const at of [0, 2, 4, 2]) stops[at]?.();
    await delay(120);
    expect(expired).toEqual(['b', 'd']);
    // Stopping after it expired is harmless, and watching starts again afterwards.
    stops[1]?.();
    deadlines.watch(() => expired.push('f'));
    await delay(120);
    expect(expired).toEqual(['b', 'd', 'f']);
  });

  it.each([1, 2, 3])(
    'with reads beginning and ending at random (seed %i), expires exactly those left waiting',
    async (seed) => {
      const random = mulberry32(seed);
      const timeoutMs = 30;
      const deadlines = new BodyDeadlines(timeoutMs);
      const expiredAfter = new Map<number, number>();
      const stopped = new Set<number>();
      const live: { id: number; stop: () => void }[] = [];
      for (let id = 0; id < 300; id++) {
        const since = performance.now();
        live.push({
          id,
          stop: deadlines.watch(() => {
            expect(expiredAfter.has(id)).toBe(false);
            expiredAfter.set(id, performance.now() - since);
          }),
        });
        // Some reads end at once, some later, some never.
        if (random() < 0.5 && live.length > 0) {
          const [ended] = live.splice(Math.floor(random() * live.length), 1);
          if (ended && !expiredAfter.has(ended.id)) {
            ended.stop();
            stopped.add(ended.id);
          }
        }
        if (random() < 0.1) await delay(Math.floor(random() * 15));
      }
      await delay(timeoutMs + 150);
      for (let id = 0; id < 300; id++) {
        if (stopped.has(id)) expect(expiredAfter.has(id)).toBe(false);
        else expect(expiredAfter.get(id)).toBeGreaterThanOrEqual(timeoutMs);
      }
      expect(expiredAfter.size + stopped.size).toBe(300);
    },
  );

  it('takes a time longer than a Node timer can wait without firing early or spinning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): number => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const deadlines = new BodyDeadlines(2 ** 40);
      const expired: string[] = [];
      const stop = deadlines.watch(() => expired.push('never'));
      await delay(50);
      expect(expired).toEqual([]);
      // A delay past 2^31 - 1 ms would have fired after 1 ms, warned, and been set again.
      expect(warnings).toEqual([]);
      stop();
    } finally {
      process.off('warning', onWarning);
    }
  });
});
