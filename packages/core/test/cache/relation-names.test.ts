import { readsAnyWritten, relationPart } from '../../src/cache/relation-names';

describe('relation names', () => {
  it('takes the relation part of a qualified name', () => {
    expect(relationPart('t')).toBe('t');
    expect(relationPart('public.t')).toBe('t');
    expect(relationPart('db.sales.orders')).toBe('orders');
  });

  it('matches names that may denote the same relation under an unknown search_path', () => {
    expect(readsAnyWritten(['t'], ['public.t'])).toBe(true);
    expect(readsAnyWritten(['public.t'], ['t'])).toBe(true);
    expect(readsAnyWritten(['s.t'], ['t'])).toBe(true);
    expect(readsAnyWritten(['a', 'b'], ['c', 'b'])).toBe(true);
  });

  it('does not match different relations, or nothing', () => {
    expect(readsAnyWritten(['t'], ['u'])).toBe(false);
    expect(readsAnyWritten(['t'], ['T'])).toBe(false);
    expect(readsAnyWritten([], ['t'])).toBe(false);
    expect(readsAnyWritten(['t'], [])).toBe(false);
  });
});
