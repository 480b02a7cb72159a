import { visibleName } from '../src/browser/visible-text';

describe('names as lists show them', () => {
  it('write bidirectional formatting characters as escapes, so the text cannot be reordered', () => {
    expect(visibleName('report\u202Egpj.exe')).toBe('report\\u202Egpj.exe');
    expect(visibleName('a\u200Eb\u200Fc\u202Ad\u2066e\u2069f\u061Cg')).toBe(
      'a\\u200Eb\\u200Fc\\u202Ad\\u2066e\\u2069f\\u061Cg',
    );
  });

  it('leave every other name as it is, right-to-left letters included', () => {
    expect(visibleName('Order Items')).toBe('Order Items');
    expect(visibleName('טבלה')).toBe('טבלה');
    expect(visibleName('')).toBe('');
  });
});
