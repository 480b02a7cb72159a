import { ScopeWriteLog } from '../../src/cache/scope-write-log';

describe('ScopeWriteLog', () => {
  it('reports a write to the scope after the mark, and none before it', () => {
    const log = new ScopeWriteLog();
    log.recordWrite('a');
    const mark = log.mark();

    expect(log.writtenSince('a', mark)).toBe(false);
    log.recordWrite('a');
    expect(log.writtenSince('a', mark)).toBe(true);
  });

  it('keeps scopes apart', () => {
    const log = new ScopeWriteLog();
    const mark = log.mark();
    log.recordWrite('b');

    expect(log.writtenSince('a', mark)).toBe(false);
  });

  it('errs towards "written" for scopes it had to forget', () => {
    const log = new ScopeWriteLog(2);
    const mark = log.mark();
    log.recordWrite('a');
    log.recordWrite('b');
    log.recordWrite('c'); // forgets a

    expect(log.writtenSince('a', mark)).toBe(true);
    expect(log.writtenSince('never-written', mark)).toBe(true);
    expect(log.writtenSince('never-written', log.mark())).toBe(false);
  });
});
