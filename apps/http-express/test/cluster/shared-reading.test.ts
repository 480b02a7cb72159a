import { SharedReading } from '../../src/cluster/shared-reading';

describe('SharedReading', () => {
  it('gives every caller the reading in progress, and reuses it for reuseMs after it ended', async () => {
    let now = 0;
    let reads = 0;
    let finish!: (value: number) => void;
    const reading = new SharedReading(
      () => {
        reads += 1;
        return new Promise<number>((resolve) => (finish = resolve));
      },
      1000,
      () => now,
    );

    const first = reading.get();
    now = 5000; // a slow reading: still shared while it runs
    const second = reading.get();
    finish(7);
    expect(await Promise.all([first, second])).toEqual([7, 7]);
    now = 5999;
    expect(await reading.get()).toBe(7);
    expect(reads).toBe(1);

    now = 6000;
    const third = reading.get();
    finish(8);
    expect(await third).toBe(8);
    expect(reads).toBe(2);
  });

  it('does not reuse a failed reading', async () => {
    let attempt = 0;
    const reading = new SharedReading(
      () => (++attempt === 1 ? Promise.reject(new Error('gone')) : Promise.resolve(attempt)),
      1000,
      () => 0,
    );

    await expect(reading.get()).rejects.toThrow('gone');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await reading.get()).toBe(2);
  });
});
