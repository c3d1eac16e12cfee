// The command lines of this host's processes (/proc/<pid>/cmdline, NULs as spaces) that `keep`
// selects: what an "after the stack stops" test looks for, to say nothing outlived its pod.
import { readdirSync, readFileSync } from 'node:fs';

export function hostCommandLines(keep: (commandLine: string) => boolean): string[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      } catch {
        return ''; // gone since the listing
      }
    })
    .filter((commandLine) => commandLine !== '' && keep(commandLine));
}
