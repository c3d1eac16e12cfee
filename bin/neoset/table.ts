// Tables as kubectl prints them: Go's tabwriter with kubectl's settings (minwidth 6, padding 3,
// the last column unpadded), and AGE as apimachinery's duration.HumanDuration.

export function formatTable(rows: string[][]): string {
  const widths = rows[0].map((_, col) => Math.max(6, ...rows.map((r) => (r[col] ?? '').length + 3)));
  return rows.map((r) => r.map((cell, col) => (col === r.length - 1 ? cell : cell.padEnd(widths[col]))).join('')).join('\n') + '\n';
}

/** duration.HumanDuration: 45s, 5m3s, 2h10m, 3d4h, 2y3d … */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000); // Go: int(d.Seconds()) truncates toward zero
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${hours / 24}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 2) return `${days}d`;
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${days / 365}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}
