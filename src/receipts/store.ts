import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, DeleteObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { randomToken } from '../lib/crypto.js';

/** Where uploaded receipts live. Keys are random: a stored name says nothing about its content. */
export interface FileStore {
  /** Stores the stream under a new random key; resolves with the key once it is durable. */
  put(content: Readable, contentType: string): Promise<string>;
  get(key: string): Promise<Readable>;
  delete(key: string): Promise<void>;
}

export function newStorageKey(): string {
  const token = randomToken('', 24);
  // Two levels of fan-out keep directories small on the local store.
  return `${token.slice(0, 2)}/${token}`;
}

/** Receipts in a local directory (default: `$KASSIR_DATA_DIR/receipts`). */
export class LocalFileStore implements FileStore {
  constructor(private readonly root: string) {}

  async put(content: Readable): Promise<string> {
    const key = newStorageKey();
    const path = this.path(key);
    await mkdir(join(path, '..'), { recursive: true });
    try {
      await pipeline(content, createWriteStream(path, { flags: 'wx', mode: 0o640 }));
    } catch (err) {
      await rm(path, { force: true });
      throw err;
    }
    return key;
  }

  async get(key: string): Promise<Readable> {
    const path = this.path(key);
    await stat(path);
    return createReadStream(path);
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  private path(key: string): string {
    if (!/^[A-Za-z0-9_-]{2}\/[A-Za-z0-9_-]{32}$/.test(key)) throw new Error('invalid storage key');
    return join(this.root, key);
  }
}

export interface S3Settings {
  bucket: string;
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  prefix: string;
}

/** Receipts in an S3-compatible bucket (AWS S3, MinIO, Ceph, …), uploaded as a stream. */
export class S3FileStore implements FileStore {
  private readonly client: S3Client;

  constructor(private readonly settings: S3Settings) {
    this.client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      credentials: settings.accessKeyId && settings.secretAccessKey
        ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey }
        : undefined,
    });
  }

  async put(content: Readable, contentType: string): Promise<string> {
    const key = newStorageKey();
    // lib-storage uploads in parts as the stream arrives: the file is never held in memory whole.
    // pipeline, not pipe: a source that fails mid-way must fail (and abort) the upload, not stall it.
    const body = new PassThrough();
    pipeline(content, body).catch(() => undefined);
    await new Upload({
      client: this.client,
      params: { Bucket: this.settings.bucket, Key: this.settings.prefix + key, Body: body, ContentType: contentType },
    }).done();
    return key;
  }

  async get(key: string): Promise<Readable> {
    const result = await this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.settings.prefix + key }));
    return result.Body as Readable;
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.settings.prefix + key }));
  }
}
