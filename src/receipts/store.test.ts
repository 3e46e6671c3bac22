import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../lib/logger.js';
import { LocalFileStore } from './store.js';

describe('FileStore.discard', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  async function store(): Promise<{ files: LocalFileStore; lines: Array<Record<string, unknown>> }> {
    const dir = await mkdtemp(join(tmpdir(), 'kassir-store-'));
    dirs.push(dir);
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    });
    return { files: new LocalFileStore(dir, createLogger('debug', sink)), lines };
  }

  it('deletes the stored file', async () => {
    const { files } = await store();
    const key = await files.put(Readable.from([Buffer.from('receipt')]));
    await files.discard(key, 'a refused upload');
    await expect(files.get(key)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('logs a file it could not delete, saying what it was stored for, instead of throwing', async () => {
    const { files, lines } = await store();
    await expect(files.discard('not a key', 'a refused upload')).resolves.toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, key: 'not a key' });
    expect(String(lines[0]!.msg)).toContain('a refused upload');
  });
});
