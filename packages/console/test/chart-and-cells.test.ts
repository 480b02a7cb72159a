import { cellText, duplicateNames, jsonExport } from '../src/browser/cells';
import {
  addSample,
  chartSpan,
  CHART_MIN_SPAN_MS,
  CHART_WINDOW_MS,
  polylinePoints,
  queriesPerInterval,
} from '../src/browser/chart';

describe('the statistics chart', () => {
  it('keeps the samples of the window only', () => {
    let samples = addSample([], { at: 0, totalQueries: 0, hitRate: 0 });
    samples = addSample(samples, { at: CHART_WINDOW_MS, totalQueries: 5, hitRate: 50 });
    samples = addSample(samples, { at: CHART_WINDOW_MS + 1, totalQueries: 6, hitRate: 50 });
    expect(samples.map((sample) => sample.at)).toEqual([CHART_WINDOW_MS, CHART_WINDOW_MS + 1]);
  });

  it('counts statements per interval, starting again when a counter went down', () => {
    const counts = queriesPerInterval([
      { at: 1, totalQueries: 10, hitRate: 0 },
      { at: 2, totalQueries: 15, hitRate: 0 },
      { at: 3, totalQueries: 4, hitRate: 0 },
    ]);
    expect(counts).toEqual([
      { at: 2, count: 5 },
      { at: 3, count: 4 },
    ]);
  });

  it('places time right to left from now over the span, and values bottom to top', () => {
    const now = CHART_WINDOW_MS;
    expect(
      polylinePoints(
        [
          { at: 0, value: 0 },
          { at: now, value: 50 },
          { at: now, value: 200 },
        ],
        now,
        CHART_WINDOW_MS,
        100,
        600,
        120,
      ),
    ).toBe('0,120 600,60 600,0');
    expect(polylinePoints([{ at: now, value: 3 }], now, CHART_WINDOW_MS, 0, 600, 120)).toBe(
      '600,0',
    );
    expect(polylinePoints([{ at: now - 30_000, value: 0 }], now, 60_000, 1, 600, 120)).toBe(
      '300,120',
    );
  });

  it('spans the samples it has, from a minute to the whole window', () => {
    const at = (ms: number) => ({ at: ms, totalQueries: 0, hitRate: 0 });
    expect(chartSpan([], 5_000)).toBe(CHART_MIN_SPAN_MS);
    expect(chartSpan([at(0)], 5_000)).toBe(CHART_MIN_SPAN_MS);
    expect(chartSpan([at(0)], 200_000)).toBe(200_000);
    expect(chartSpan([at(0)], 2 * CHART_WINDOW_MS)).toBe(CHART_WINDOW_MS);
  });
});

describe('cells', () => {
  it('shows values as sqlgate sent them, and NULL as no text', () => {
    expect(cellText(null)).toBeNull();
    expect(cellText('')).toBe('');
    expect(cellText('NULL')).toBe('NULL');
    expect(cellText(-0)).toBe('-0');
    expect(cellText(true)).toBe('true');
    expect(cellText({ json: '{"a":1.10}' })).toBe('{"a":1.10}');
    expect(cellText([1, null])).toBe('[1,null]');
  });

  it('exports rows as JSON without losing json digits, as objects or arrays', () => {
    const fields = [{ name: 'id' }, { name: 'doc' }, { name: 'id' }];
    const rows = [[1, { json: '{"n":12345678901234567890}' }, 2]];
    expect(jsonExport(fields, rows, 'array')).toBe('[[1,{"n":12345678901234567890},2]]\n');
    // A repeated name keeps the later column, as the API's object rows do.
    expect(jsonExport(fields, rows, 'object')).toBe(
      '[{"id":2,"doc":{"n":12345678901234567890}}]\n',
    );
    expect(JSON.parse(jsonExport(fields, [[null, null, 'x']], 'object'))).toEqual([
      { id: 'x', doc: null },
    ]);
  });
});

describe('duplicateNames', () => {
  it('names each column name that appears more than once, once', () => {
    expect(duplicateNames([{ name: 'a' }, { name: 'b' }, { name: 'a' }, { name: 'a' }])).toEqual([
      'a',
    ]);
    expect(duplicateNames([{ name: 'a' }, { name: 'b' }])).toEqual([]);
  });

  it('keeps a float -0 as -0 in the JSON export', () => {
    expect(jsonExport([{ name: 'z' }], [[-0]], 'array')).toBe('[[-0]]\n');
  });
});
