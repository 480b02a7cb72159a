/** Bounded labels (docs/decisions.md 10.25): what a caller sends cannot grow or merge series. */
import { createHash } from 'node:crypto';
import { commandLabel, methodLabel, poolLabel } from '../src/observability/labels';

describe('pool labels', () => {
  it('keep short ids, and cut long ones to 200 characters with a digest of the whole id', () => {
    expect(poolLabel('127.0.0.1:5432:postgres:test')).toBe('127.0.0.1:5432:postgres:test');
    const long = `127.0.0.1:5432:postgres:${'d'.repeat(5000)}`;
    const label = poolLabel(long);
    expect(label.length).toBeLessThanOrEqual(200);
    expect(poolLabel(`${long}x`)).not.toBe(label);
  });

  it('never let a short id spell out the label of a long one', () => {
    const long = `127.0.0.1:5432:postgres:${'d'.repeat(300)}`;
    const digest = createHash('sha256').update(long).digest('hex').slice(0, 16);
    const spelled = `${long.slice(0, 180)}…#${digest}`;
    expect(poolLabel(long)).toBe(spelled);
    expect(poolLabel(spelled)).not.toBe(spelled);
  });
});

describe('keyword and method labels', () => {
  it('show known ones and name the rest OTHER', () => {
    expect(commandLabel('SELECT')).toBe('SELECT');
    expect(commandLabel('HUNTERSECRET')).toBe('OTHER');
    expect(commandLabel('')).toBe('OTHER');
    expect(methodLabel('POST')).toBe('POST');
    expect(methodLabel('PROPFIND')).toBe('OTHER');
    expect(methodLabel(undefined)).toBe('OTHER');
  });
});
