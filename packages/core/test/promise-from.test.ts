import { promiseFrom } from '../src/promise-from';

describe('promiseFrom', () => {
  it('gives the promise the work returns', async () => {
    await expect(promiseFrom(() => Promise.resolve(42))).resolves.toBe(42);
    await expect(promiseFrom(() => Promise.reject(new Error('late')))).rejects.toThrow('late');
  });

  it('turns a throw into a rejection instead of throwing at the caller', async () => {
    let pending: Promise<never> | undefined;
    expect(() => {
      pending = promiseFrom(() => {
        throw new Error('at once');
      });
    }).not.toThrow();
    await expect(pending).rejects.toThrow('at once');
  });
});
