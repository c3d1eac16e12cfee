// Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource): a signed decimal number and
// an optional suffix — binary SI (Ki Mi Gi Ti Pi Ei), decimal SI (n u m k M G T P E) or a decimal
// exponent (e3, E-2). Values are kept as exact fractions of bigints, so `500m` == `0.5` and `1Gi` >
// `1G` compare exactly, with no float rounding at the edges of a cap.

export interface Quantity {
  /** As written, for messages. */
  text: string;
  /** value = num / den, den > 0. */
  num: bigint;
  den: bigint;
}

const BINARY: Record<string, bigint> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const SHAPE = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;
/** Longer strings are not quantities anyone means; the bound also keeps bigint work small. */
const MAX_LENGTH = 64;
/** Decimal exponents beyond this are refused rather than expanded into huge bigints. */
const MAX_EXPONENT = 100;

/** Parses a quantity (a string, or a JSON number as the API accepts for int-or-string); null if invalid. */
export function parseQuantity(input: string | number): Quantity | null {
  const text = typeof input === 'number' ? (Number.isFinite(input) ? String(input) : '') : input;
  if (text.length === 0 || text.length > MAX_LENGTH) return null;
  const match = SHAPE.exec(text);
  if (!match) return null;
  const [, sign, number, suffix = ''] = match;
  const [whole, fraction = ''] = number.split('.');
  let num = BigInt(`${whole}${fraction}` || '0');
  let den = 10n ** BigInt(fraction.length);
  let exponent = 0;
  if (suffix in BINARY) num *= BINARY[suffix];
  else if (suffix in DECIMAL) exponent = DECIMAL[suffix];
  else exponent = Number(suffix.slice(1));
  if (Math.abs(exponent) > MAX_EXPONENT) return null;
  if (exponent >= 0) num *= 10n ** BigInt(exponent);
  else den *= 10n ** BigInt(-exponent);
  return { text, num: sign === '-' ? -num : num, den };
}

/** -1, 0 or 1 as a is less than, equal to or greater than b. */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  const left = a.num * b.den;
  const right = b.num * a.den;
  return left < right ? -1 : left > right ? 1 : 0;
}
