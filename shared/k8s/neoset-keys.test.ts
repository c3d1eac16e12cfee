// Naming the NeoSets a page at a time, metadata only (neoset-keys.ts), against a fake client that
// answers as kube-apiserver pages a list: the request each page makes, and what is taken of the answer.
import { describe, expect, it } from 'vitest';
import { ApiError, type KubeClient, type RequestOptions } from './client.ts';
import { listNeoSetKeys, METADATA_LIST_ACCEPT, neosetKeyPages } from './neoset-keys.ts';

const item = (namespace: string, name: string) => ({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { namespace, name } });

/** Serves `all` in pages of the asked `limit`, continue tokens "@<index>"; `expire` answers 410 to that token once. */
function paging(all: { kind: string; metadata: { namespace: string; name: string } }[], expire?: string) {
  const asked: { path: string; opts: RequestOptions }[] = [];
  const client: KubeClient = {
    request: async <T,>(verb: string, path: string, opts: RequestOptions = {}): Promise<T> => {
      asked.push({ path, opts });
      const token = opts.query?.continue as string | undefined;
      if (token !== undefined && token === expire) {
        expire = undefined;
        throw new ApiError(verb, path, 410, 'Expired', 'The provided continue parameter is too old');
      }
      const from = token === undefined ? 0 : Number(token.slice(1));
      const limit = Number(opts.query?.limit);
      const next = from + limit < all.length ? `@${from + limit}` : undefined;
      return { kind: 'PartialObjectMetadataList', metadata: { resourceVersion: '7', ...(next ? { continue: next } : {}) }, items: all.slice(from, from + limit) } as T;
    },
  };
  return { client, asked };
}

describe('naming the NeoSets (neoset-keys.ts)', () => {
  it('lists them a page at a time, metadata only', async () => {
    const all = Array.from({ length: 5 }, (_, i) => item(`ns${i % 2}`, `n${i}`));
    const { client, asked } = paging(all);
    const pages: string[][] = [];
    for await (const page of neosetKeyPages(client, undefined, 2)) pages.push(page.map((k) => `${k.namespace}/${k.name}`));
    expect(pages).toEqual([['ns0/n0', 'ns1/n1'], ['ns0/n2', 'ns1/n3'], ['ns0/n4']]);
    expect(asked.map((a) => [a.path, a.opts.query, a.opts.accept])).toEqual([
      ['/apis/neo.io/v1alpha1/neosets', { limit: 2, continue: undefined }, METADATA_LIST_ACCEPT],
      ['/apis/neo.io/v1alpha1/neosets', { limit: 2, continue: '@2' }, METADATA_LIST_ACCEPT],
      ['/apis/neo.io/v1alpha1/neosets', { limit: 2, continue: '@4' }, METADATA_LIST_ACCEPT],
    ]);
  });

  it('starts over once when a continue token has expired (410), and fails on a second', async () => {
    const all = Array.from({ length: 3 }, (_, i) => item('ns', `n${i}`));
    const { client } = paging(all, '@2');
    const pages: string[][] = [];
    for await (const page of neosetKeyPages(client, 'ns', 2)) pages.push(page.map((k) => k.name));
    expect(pages).toEqual([['n0', 'n1'], ['n0', 'n1'], ['n2']]);
    const always: KubeClient = {
      request: async <T,>(verb: string, path: string, opts: RequestOptions = {}): Promise<T> => {
        if (opts.query?.continue) throw new ApiError(verb, path, 410, 'Expired', 'too old');
        return { metadata: { continue: '@1' }, items: [item('ns', 'n0')] } as T;
      },
    };
    await expect(listNeoSetKeys(always, 'ns')).rejects.toThrow(/too old/);
  });

  it('takes whole objects too (a server that cannot answer metadata only), and skips items without a name', async () => {
    const client: KubeClient = {
      request: async <T,>(): Promise<T> => ({ items: [{ apiVersion: 'neo.io/v1alpha1', kind: 'NeoSet', metadata: { name: 'db' }, spec: {} }, { metadata: {} }, null, { metadata: { name: 7 } }] }) as T,
    };
    expect(await listNeoSetKeys(client, 'prod')).toEqual([{ namespace: 'prod', name: 'db' }]);
  });
});
