import { describe, expect, it } from 'vitest';
import { floorFrom, isComparable, isNewer, newest } from './resource-version.ts';

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
  it('floorFrom: a recorded version is a floor only when comparable and older than the NeoSet that holds it', () => {
    // Genuine: the lists were read before the status write that made the NeoSet's version.
    expect(floorFrom('120', '130')).toBe('120');
    // No record, or one written by hand (issue 34: `kubectl patch --subresource=status`): the NeoSet's own.
    expect(floorFrom(undefined, '130')).toBe('130');
    expect(floorFrom('x', '130')).toBe('130');
    expect(floorFrom('0', '130')).toBe('130');
    expect(floorFrom('99999999999999999999', '130')).toBe('130');
    expect(floorFrom('131', '130')).toBe('130');
    expect(floorFrom('130', '130')).toBe('130');
    // A NeoSet version that cannot be compared (an API server that is not etcd-backed): it, not the record.
    expect(floorFrom('120', 'abc')).toBe('abc');
    expect(floorFrom(undefined, undefined)).toBeUndefined();
  });
});
