// A percentage as the NeoSet API writes one (SPEC §3: maxUnavailable "25%", a canary step's partition
// "50%"): decimal digits and '%', nothing else. The one reader of it: the decision and admission
// read the same texts as percentages, so what admission accepts is exactly what decide() reads.
const PERCENT = /^(\d{1,10})%$/;

/** The number in `<digits>%`, or null for any other text. */
export function parsePercent(text: string): number | null {
  const m = PERCENT.exec(text);
  return m ? Number(m[1]) : null;
}
