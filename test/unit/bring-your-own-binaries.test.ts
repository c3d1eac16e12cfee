// The NEOSET_* variables that bring one's own Knative Serving, Traefik and kn (dev/cluster/
// binaries.ts), and the same path for Eventing and CoreDNS: a directory or program named is used as
// it is when it is complete, refused naming what it lacks otherwise, and never built over. The build
// scripts themselves (taken when no variable is set) are not run here: they take minutes.

import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  KNATIVE_SERVING_COMMANDS,
  resolveCoreDns,
  resolveKn,
  resolveKnativeEventing,
  resolveKnativeServing,
  resolveTraefik,
} from '../../dev/cluster/binaries.ts';

const root = mkdtempSync(join(tmpdir(), 'neoset-byo-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function program(path: string, executable = true): string {
  writeFileSync(path, '#!/bin/sh\n');
  chmodSync(path, executable ? 0o755 : 0o644);
  return path;
}

/** A directory laid out as build-serving.sh's, but for the binaries and config/ directories named. */
function servingDir(name: string, { without = [] as string[] } = {}): string {
  const dir = join(root, name);
  mkdirSync(dir);
  for (const bin of KNATIVE_SERVING_COMMANDS) if (!without.includes(bin)) program(join(dir, bin));
  if (!without.includes('config/core')) mkdirSync(join(dir, 'config', 'core'), { recursive: true });
  return dir;
}

describe('NEOSET_KNATIVE_SERVING', () => {
  it('is used as it is when it holds the five components and config/core', async () => {
    const dir = servingDir('complete');
    await expect(resolveKnativeServing({ NEOSET_KNATIVE_SERVING: dir })).resolves.toBe(dir);
  });

  it('is refused naming each missing component and config directory', async () => {
    const dir = servingDir('partial', { without: ['queue', 'activator', 'config/core'] });
    await expect(resolveKnativeServing({ NEOSET_KNATIVE_SERVING: dir })).rejects.toThrow(
      `NEOSET_KNATIVE_SERVING=${dir} lacks activator, queue, config/core`,
    );
  });

  it('counts a component that is not executable as missing', async () => {
    const dir = servingDir('not-executable');
    chmodSync(join(dir, 'queue'), 0o644);
    await expect(resolveKnativeServing({ NEOSET_KNATIVE_SERVING: dir })).rejects.toThrow(`${dir} lacks queue`);
  });

  it("is not taken for Eventing's directory", async () => {
    const dir = servingDir('serving-as-eventing');
    await expect(resolveKnativeEventing({ NEOSET_KNATIVE_EVENTING: dir })).rejects.toThrow(
      /NEOSET_KNATIVE_EVENTING=.* lacks jobsink, requestreply, auth_proxy, mtping, apiserver_receive_adapter, mtchannel_broker, ingress, filter, channel_controller, channel_dispatcher, config\/channels\/in-memory-channel, config\/brokers\/mt-channel-broker$/,
    );
  });
});

describe.each([
  ['NEOSET_TRAEFIK', 'traefik', resolveTraefik],
  ['NEOSET_KN', 'kn', resolveKn],
  ['NEOSET_COREDNS', 'coredns', resolveCoreDns],
] as const)('%s', (variable, file, resolve) => {
  it('is used as it is when it names an executable', async () => {
    const path = program(join(root, `${file}-ok`));
    await expect(resolve({ [variable]: path })).resolves.toBe(path);
  });

  it('is refused when it names a file that is not executable, or nothing', async () => {
    const path = program(join(root, `${file}-plain`), false);
    await expect(resolve({ [variable]: path })).rejects.toThrow(`${variable}=${path} is not an executable file`);
    await expect(resolve({ [variable]: join(root, 'absent') })).rejects.toThrow('is not an executable file');
  });
});
