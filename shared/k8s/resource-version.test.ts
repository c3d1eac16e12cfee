import { describe, expect, it } from 'vitest';
import { isComparable, isNewer, newest } from './resource-version.ts';

describe('resourceVersion comparison (KEP-5504)', () => {
  it('compares decimal integers by length, then digit by digit', () => {
    expect(isNewer('10', '9')).toBe(true);
    expect(isNewer('9', '10')).toBe(false);
    expect(isNewer('123', '123')).toBe(false);
    expect(isNewer('124', '123')).toBe(true);
    expect(isNewer('99999999999999999999', '99999999999999999998')).toBe(true); // beyond Number's precision
  });
  it('does not compare what is not a comparable resourceVersion', () => {
    expect(isNewer('0', '5')).toBeNull();
    expect(isNewer('012', '5')).toBeNull();
    expect(isNewer('abc', '5')).toBeNull();
    expect(isNewer('', '5')).toBeNull();
  });
  it('isComparable: a positive decimal integer without leading zeros', () => {
    expect(['1', '42', '18446744073709551615'].map(isComparable)).toEqual([true, true, true]);
    expect(['0', '', '007', '1e3', '-1', ' 5', 'abc'].map(isComparable)).toEqual([false, false, false, false, false, false, false]);
  });
  it('newest keeps the first when the second is absent, older or not comparable', () => {
    expect(newest('5', undefined)).toBe('5');
    expect(newest('5', '4')).toBe('5');
    expect(newest('5', '6')).toBe('6');
    expect(newest('5', 'x')).toBe('5');
  });
});
