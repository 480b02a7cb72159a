import {
  FREE_BYTES,
  RequestResultBudget,
  SharedResultBudget,
  StreamedRowBudget,
} from '../../src/execution/result-budget';

/** Charges `bytes` as the statement reader does: lowers remainingBytes, or takes what is left. */
function charge(budget: RequestResultBudget, bytes: number): boolean {
  if (bytes > budget.remainingBytes) {
    budget.remainingBytes = 0;
    return false;
  }
  budget.remainingBytes -= bytes;
  return true;
}

describe('RequestResultBudget', () => {
  it('is the request’s own budget alone without a shared one', () => {
    const budget = new RequestResultBudget(1000);
    expect(charge(budget, 600)).toBe(true);
    expect(budget.remainingBytes).toBe(400);
    expect(charge(budget, 500)).toBe(false);
    expect(budget.remainingBytes).toBe(0);
  });

  it('draws on the shared budget only past its free bytes, and gives it back once released', () => {
    const shared = new SharedResultBudget(1000);
    const budget = new RequestResultBudget(10 * FREE_BYTES, shared);
    expect(budget.remainingBytes).toBe(FREE_BYTES + 1000);
    expect(charge(budget, FREE_BYTES)).toBe(true);
    expect(shared.availableBytes).toBe(1000);
    expect(budget.holdsSharedBytes).toBe(false);
    expect(charge(budget, 700)).toBe(true);
    expect(budget.holdsSharedBytes).toBe(true);
    expect(shared.availableBytes).toBe(300);
    expect(budget.remainingBytes).toBe(300);
    expect(charge(budget, 301)).toBe(false);
    expect(shared.availableBytes).toBe(0);
    budget.release();
    budget.release();
    expect(shared.availableBytes).toBe(1000);
  });

  it('keeps small answers whole while large ones hold the shared budget', () => {
    const shared = new SharedResultBudget(1000);
    const large = new RequestResultBudget(10 * FREE_BYTES, shared, 'alice');
    expect(charge(large, FREE_BYTES + 1000)).toBe(true);
    expect(shared.availableBytes).toBe(0);
    const small = new RequestResultBudget(10 * FREE_BYTES, shared, 'bob');
    expect(charge(small, FREE_BYTES)).toBe(true);
    expect(charge(small, 1)).toBe(false);
    expect(small.sharedLimit).toBe('others');
    large.release();
    expect(shared.availableBytes).toBe(1000);
  });

  it('is bounded by its own budget when the shared one has more', () => {
    const shared = new SharedResultBudget(1_000_000);
    const budget = new RequestResultBudget(FREE_BYTES + 10, shared);
    expect(charge(budget, FREE_BYTES + 11)).toBe(false);
    expect(budget.sharedLimit).toBeUndefined();
    budget.release();
    expect(shared.availableBytes).toBe(1_000_000);
  });

  it('gives back bytes of rows returned again (a round trip sent twice)', () => {
    const shared = new SharedResultBudget(1000);
    const budget = new RequestResultBudget(10 * FREE_BYTES, shared);
    charge(budget, FREE_BYTES + 800);
    expect(shared.availableBytes).toBe(200);
    budget.remainingBytes += 500;
    expect(shared.availableBytes).toBe(700);
    budget.release();
    expect(shared.availableBytes).toBe(1000);
  });

  it('charges nothing to the shared budget after release', () => {
    const shared = new SharedResultBudget(1000);
    const budget = new RequestResultBudget(10 * FREE_BYTES, shared);
    charge(budget, FREE_BYTES + 500);
    budget.release();
    charge(budget, 400);
    expect(shared.availableBytes).toBe(1000);
  });

  it('returns to the whole shared budget after any seeded sequence of requests', () => {
    let state = 42;
    const next = (): number => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state / 2 ** 31;
    };
    const shared = new SharedResultBudget(3 * FREE_BYTES);
    const open: RequestResultBudget[] = [];
    for (let step = 0; step < 20_000; step++) {
      const roll = next();
      if (roll < 0.2 || open.length === 0) {
        open.push(new RequestResultBudget(Math.floor(next() * 4 * FREE_BYTES), shared));
      } else if (roll < 0.35) {
        open.splice(Math.floor(next() * open.length), 1)[0]?.release();
      } else {
        const budget = open[Math.floor(next() * open.length)] as RequestResultBudget;
        if (roll < 0.4) budget.remainingBytes += Math.floor(next() * 1000);
        else charge(budget, Math.floor(next() * FREE_BYTES));
      }
      expect(shared.availableBytes).toBeGreaterThanOrEqual(0);
    }
    for (const budget of open) budget.release();
    expect(shared.availableBytes).toBe(3 * FREE_BYTES);
  });
});

describe('StreamedRowBudget', () => {
  it('admits rows in flight up to its free bytes and the shared budget, and frees them', () => {
    const shared = new SharedResultBudget(1000);
    const stream = new StreamedRowBudget(shared);
    expect(stream.admit(FREE_BYTES)).toBe(true);
    expect(shared.availableBytes).toBe(1000);
    expect(stream.admit(600)).toBe(true);
    expect(shared.availableBytes).toBe(400);
    expect(stream.holdsSharedBytes).toBe(true);
    // Refused whole: nothing of a row that does not fit is taken.
    expect(stream.admit(401)).toBe(false);
    expect(stream.sharedLimit).toBe('caller');
    expect(shared.availableBytes).toBe(400);
    // The first row was written: the second now fits in the free bytes.
    stream.free(FREE_BYTES);
    expect(shared.availableBytes).toBe(1000);
    expect(stream.holdsSharedBytes).toBe(false);
    expect(stream.admit(FREE_BYTES)).toBe(true);
    expect(shared.availableBytes).toBe(400);
  });

  it('gives everything back when closed, and draws nothing afterwards', () => {
    const shared = new SharedResultBudget(1000);
    const stream = new StreamedRowBudget(shared);
    expect(stream.admit(FREE_BYTES + 1000)).toBe(true);
    expect(shared.availableBytes).toBe(0);
    stream.close();
    stream.close();
    expect(shared.availableBytes).toBe(1000);
    expect(stream.admit(10 * FREE_BYTES)).toBe(true);
    stream.free(10 * FREE_BYTES);
    expect(shared.availableBytes).toBe(1000);
  });

  it('shares the budget with JSON answers', () => {
    const shared = new SharedResultBudget(1000);
    const answer = new RequestResultBudget(10 * FREE_BYTES, shared);
    answer.remainingBytes -= FREE_BYTES + 900;
    const stream = new StreamedRowBudget(shared);
    expect(stream.admit(FREE_BYTES + 101)).toBe(false);
    expect(stream.admit(FREE_BYTES + 100)).toBe(true);
    answer.release();
    expect(shared.availableBytes).toBe(900);
  });

  it('admits every row without a shared budget', () => {
    const stream = new StreamedRowBudget();
    expect(stream.admit(Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(stream.sharedLimit).toBeUndefined();
  });
});

describe('one caller’s share (docs/decisions.md 10.37)', () => {
  const MiB = 1024 * 1024;

  it('lets one caller hold a quarter of the shared budget, and others the rest', () => {
    const shared = new SharedResultBudget(16 * MiB, MiB);
    expect(shared.callerShareBytes).toBe(4 * MiB);
    const idle = [1, 2, 3].map(() => new RequestResultBudget(MiB * 3, shared, 'idle'));
    for (const budget of idle) charge(budget, 3 * MiB);
    // Two whole answers of 3 MiB past their free bytes, and what was left of the share.
    expect(16 * MiB - shared.availableBytes).toBe(4 * MiB);
    expect(idle[2]?.sharedLimit).toBe('caller');
    const other = new RequestResultBudget(4 * MiB, shared, 'other');
    expect(charge(other, 4 * MiB)).toBe(true);
    expect(other.sharedLimit).toBeUndefined();
    for (const budget of idle) budget.release();
    other.release();
    expect(shared.availableBytes).toBe(16 * MiB);
  });

  it('gives a caller one whole answer when that is more than a quarter', () => {
    const shared = new SharedResultBudget(4 * MiB, 3 * MiB);
    expect(shared.callerShareBytes).toBe(3 * MiB);
    const lone = new RequestResultBudget(3 * MiB, shared, 'lone');
    expect(charge(lone, 3 * MiB)).toBe(true);
    expect(new SharedResultBudget(4 * MiB, 64 * MiB).callerShareBytes).toBe(4 * MiB);
  });

  it('counts a held answer as what is written, even past what is left', () => {
    const shared = new SharedResultBudget(1000);
    const answer = new RequestResultBudget(10 * FREE_BYTES, shared, 'a');
    charge(answer, FREE_BYTES + 400);
    answer.holdAs(FREE_BYTES + 1500);
    expect(shared.availableBytes).toBe(-500);
    expect(new RequestResultBudget(10 * FREE_BYTES, shared, 'b').remainingBytes).toBe(FREE_BYTES);
    answer.holdAs(100);
    expect(answer.holdsSharedBytes).toBe(false);
    expect(shared.availableBytes).toBe(1000);
    answer.holdAs(FREE_BYTES + 10);
    answer.release();
    answer.holdAs(FREE_BYTES + 10);
    expect(shared.availableBytes).toBe(1000);
  });

  it('tells each holder once when another request finds the budget held, until released', () => {
    const shared = new SharedResultBudget(1000);
    const told: string[] = [];
    const holder = new RequestResultBudget(10 * FREE_BYTES, shared, 'a');
    const released = new RequestResultBudget(10 * FREE_BYTES, shared, 'b');
    holder.onContended(() => told.push('holder'));
    released.onContended(() => told.push('released'));
    released.release();
    shared.contended();
    shared.contended();
    expect(told).toEqual(['holder']);
  });

  it('tells holders when a stream’s row is refused because others hold the budget', () => {
    const shared = new SharedResultBudget(1000);
    const holder = new RequestResultBudget(10 * FREE_BYTES, shared, 'a');
    charge(holder, FREE_BYTES + 1000);
    let told = false;
    holder.onContended(() => (told = true));
    const stream = new StreamedRowBudget(shared, 'b');
    expect(stream.admit(FREE_BYTES + 1)).toBe(false);
    expect(stream.sharedLimit).toBe('others');
    expect(told).toBe(true);
  });
});
