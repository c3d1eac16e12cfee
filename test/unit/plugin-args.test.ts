// `kubectl neoset` command lines: what each parses to, and that every bad argument is a usage error
// (exit 2) whose message names it.
import { describe, expect, it } from 'vitest';
import { parseInvocation } from '../../bin/neoset/args.ts';
import { CliError, EXIT_USAGE } from '../../bin/neoset/errors.ts';
import { parseDuration, formatDuration } from '../../shared/core/duration.ts';
import { helpText } from '../../bin/neoset/help.ts';

const parse = (line: string) => parseInvocation(line.split(' ').filter(Boolean));

function usageError(line: string): CliError {
  try {
    parse(line);
  } catch (err) {
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(EXIT_USAGE);
    return err as CliError;
  }
  throw new Error(`"${line}" parsed without error`);
}

describe('parseInvocation', () => {
  it('parses every command with its flags', () => {
    expect(parse('rollout status mysql --timeout=1m30s -n db')).toEqual({
      kind: 'run',
      topic: 'rollout status',
      cluster: { namespace: 'db' },
      command: { name: 'status', neoset: 'mysql', watch: true, timeoutMs: 90_000 },
    });
    expect(parse('rollout status mysql --watch=false')).toMatchObject({ command: { watch: false, timeoutMs: 0 } });
    expect(parse('rollout status mysql -w=false')).toMatchObject({ command: { watch: false } });
    expect(parse('rollout history neo/mysql --revision=2')).toMatchObject({ command: { name: 'history', neoset: 'mysql', revision: 2 } });
    expect(parse('rollout history neosets.neo.io/mysql')).toMatchObject({ command: { name: 'history', neoset: 'mysql', revision: undefined } });
    expect(parse('rollout undo neoset mysql')).toMatchObject({ command: { name: 'undo', neoset: 'mysql' } });
    expect(parse('rollout status neo')).toMatchObject({ command: { name: 'status', neoset: 'neo' } });
    expect(parse('rollout undo mysql --to-revision=1')).toMatchObject({ command: { name: 'undo', toRevision: 1 } });
    expect(parse('rollout undo mysql --to-revision=0')).toMatchObject({ command: { name: 'undo', toRevision: undefined, dryRun: false, acceptDataFormatDowngrade: false } });
    // SPEC §4.7: the dry run (kubectl's --dry-run=server spelling too) and the acknowledgement.
    for (const flag of ['--dry-run', '--dry-run=server', '--dry-run=true']) expect(parse(`rollout undo mysql ${flag}`), flag).toMatchObject({ command: { dryRun: true } });
    expect(parse('rollout undo mysql --dry-run=none')).toMatchObject({ command: { dryRun: false } });
    expect(parse('rollout undo mysql --accept-data-format-downgrade')).toMatchObject({ command: { dryRun: false, acceptDataFormatDowngrade: true } });
    expect(parse('rollout pause mysql')).toMatchObject({ command: { name: 'pause', neoset: 'mysql' } });
    expect(parse('rollout resume mysql')).toMatchObject({ command: { name: 'resume', neoset: 'mysql' } });
    expect(parse('rollout promote mysql')).toMatchObject({ command: { name: 'promote', full: false } });
    expect(parse('rollout promote mysql --full')).toMatchObject({ command: { name: 'promote', full: true } });
    expect(parse('rollout promote mysql --full=true')).toMatchObject({ command: { name: 'promote', full: true } });
    expect(parse('get')).toMatchObject({ command: { name: 'get', neoset: undefined } });
    expect(parse('--context kind -n=db --kubeconfig /tmp/k get mysql')).toEqual({
      kind: 'run',
      topic: 'get',
      cluster: { context: 'kind', namespace: 'db', kubeconfig: '/tmp/k' },
      command: { name: 'get', neoset: 'mysql' },
    });
  });

  it('answers --help on every command and bare groups with help', () => {
    for (const topic of ['', 'rollout', 'get', 'rollout status', 'rollout history', 'rollout undo', 'rollout pause', 'rollout resume', 'rollout promote', 'version']) {
      expect(parse(`${topic} --help`)).toEqual({ kind: 'help', topic });
      expect(parse(`${topic} -h mysql`)).toEqual({ kind: 'help', topic });
      expect(helpText(topic)).toMatch(/Usage:\n {2}kubectl neoset/);
    }
    expect(parse('')).toEqual({ kind: 'help', topic: '' });
    expect(parse('rollout')).toEqual({ kind: 'help', topic: 'rollout' });
  });

  it.each([
    ['frob', /unknown command "frob" for "kubectl neoset"/],
    ['rollout frob mysql', /unknown command "frob" for "kubectl neoset rollout"/],
    ['rollout status', /needs a NeoSet name/],
    ['rollout status a b', /takes one NeoSet name, got 2: a b/],
    ['rollout status Mysql', /invalid NeoSet name "Mysql"/],
    ['rollout status deployment/mysql', /"deployment\/mysql" is not a NeoSet/],
    ['rollout status mysql --timeout=30', /invalid value "30" for --timeout/],
    ['rollout status mysql --timeout=-1s', /invalid value "-1s" for --timeout/],
    ['rollout status mysql --watch=yes', /invalid value "yes" for --watch/],
    ['rollout status mysql --full', /unknown flag --full for "kubectl neoset rollout status"/],
    ['rollout promote mysql --revision=1', /unknown flag --revision/],
    ['rollout history mysql --revision=0', /invalid value "0" for --revision/],
    ['rollout history mysql --revision=two', /invalid value "two" for --revision/],
    ['rollout undo mysql --to-revision=-1', /invalid value "-1" for --to-revision/],
    ['rollout undo mysql --dry-run=client', /--dry-run=client is not supported: use --dry-run=server/],
    ['rollout undo mysql --dry-run=maybe', /invalid value "maybe" for --dry-run/],
    ['rollout pause mysql --accept-data-format-downgrade', /unknown flag --accept-data-format-downgrade/],
    ['get --bogus', /unknown flag: --bogus/],
    ['get -n Bad_NS', /invalid --namespace "Bad_NS"/],
    ['get -n a.b', /invalid --namespace "a.b"/],
    ['rollout status mysql --timeout', /--timeout/],
  ])('%s → exit 2: %s', (line, message) => {
    expect(usageError(line).message).toMatch(message);
  });

  it('points a usage error at the help of the command it was for', () => {
    expect(usageError('rollout undo mysql --to-revision=x').topic).toBe('rollout undo');
  });
});

describe('Go durations (--timeout)', () => {
  it.each([
    ['0', 0],
    ['30s', 30_000],
    ['1m30s', 90_000],
    ['1.5h', 5_400_000],
    ['500ms', 500],
    ['2h0m1s', 7_201_000],
  ])('%s = %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));
  it.each(['', '30', '1 m', '1d', 's', '-5s', '5sm'])('refuses %j', (text) => expect(parseDuration(text)).toBeUndefined());
  it('prints as Go does', () => {
    expect([formatDuration(90_000), formatDuration(2_000), formatDuration(3_600_000), formatDuration(250)]).toEqual(['1m30s', '2s', '1h0m0s', '250ms']);
  });
});
