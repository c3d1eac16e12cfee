// Which cluster and namespace `kubectl neoset` talks to, resolved as kubectl resolves them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from '../../bin/neoset/cluster.ts';
import { CliError } from '../../bin/neoset/errors.ts';

const tmp = mkdtempSync(path.join(tmpdir(), 'neoset-kubeconfig-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function kubeconfig(file: string, current: string, contexts: Record<string, string | undefined>): string {
  const p = path.join(tmp, file);
  const ctx = Object.entries(contexts).map(([name, ns]) => `- name: ${name}\n  context: {cluster: c-${file}, user: u${ns ? `, namespace: ${ns}` : ''}}`);
  writeFileSync(
    p,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c-${file}\n  cluster: {server: "https://127.0.0.1:1"}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n${ctx.join('\n')}\ncurrent-context: ${current}\n`,
  );
  return p;
}

const a = kubeconfig('a', 'team', { team: 'team-ns', bare: undefined });
const b = kubeconfig('b', 'other', { other: 'other-ns', team: 'shadowed-ns' });

describe('connect', () => {
  it("takes the current context's namespace, -n over it, and default without either", () => {
    expect(connect({ kubeconfig: a }).namespace).toBe('team-ns');
    expect(connect({ kubeconfig: a, namespace: 'x' }).namespace).toBe('x');
    expect(connect({ kubeconfig: a, context: 'bare' }).namespace).toBe('default');
  });

  it('merges $KUBECONFIG files as kubectl does: the first current-context and the first context of a name win', () => {
    const env = { KUBECONFIG: [path.join(tmp, 'missing'), a, b].join(path.delimiter) };
    expect(connect({}, env).namespace).toBe('team-ns');
    expect(connect({ context: 'other' }, env).namespace).toBe('other-ns');
  });

  it('names the bad flag or the missing file', () => {
    expect(() => connect({ kubeconfig: path.join(tmp, 'nope') })).toThrow(/invalid --kubeconfig ".*nope": no such file/);
    expect(() => connect({ kubeconfig: a, context: 'nope' })).toThrow(/invalid --context "nope": no such context in the kubeconfig \(contexts: team, bare\)/);
    expect(() => connect({}, { KUBECONFIG: path.join(tmp, 'nope') })).toThrow(CliError);
  });
});
