import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { randomToken } from '../lib/crypto.js';
import type { Logger } from '../lib/logger.js';

declare module '../context.js' {
  interface AppContext {
    /** Where uploaded receipts are stored. */
    files: FileStore;
  }
}

/** Where uploaded receipts live. Keys are random: a stored name says nothing about its content. */
export interface FileStore {
  /** Stores the stream under a new random key; resolves with the key once it is durable. */
  put(content: Readable, contentType: string): Promise<string>;
  get(key: string): Promise<Readable>;
  delete(key: string): Promise<void>;
  /**
   * Deletes a file that a refused or failed request stored (`why` says which). A failure to delete
   * is logged, not thrown: the request's own error is what gets answered, and the file only stays
   * in the store with nothing pointing at it.
   */
  discard(key: string, why: string): Promise<void>;
}

/** What both stores share: discarding a file, logging what could not be deleted. */
abstract class LoggingFileStore implements FileStore {
  constructor(protected readonly log: Logger) {}

  abstract put(content: Readable, contentType: string): Promise<string>;
  abstract get(key: string): Promise<Readable>;
  abstract delete(key: string): Promise<void>;

  async discard(key: string, why: string): Promise<void> {
    try {
      await this.delete(key);
    } catch (err) {
      this.log.warn({ err, key }, `could not delete the receipt file stored for ${why}; it stays in the store unreferenced`);
    }
  }
}

export function newStorageKey(): string {
  const token = randomToken('', 24);
  // Two levels of fan-out keep directories small on the local store.
  return `${token.slice(0, 2)}/${token}`;
}

/** Receipts in a local directory (default: `$KASSIR_DATA_DIR/receipts`). */
export class LocalFileStore extends LoggingFileStore {
  constructor(
    private readonly root: string,
    log: Logger,
  ) {
    super(log);
  }

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
export class S3FileStore extends LoggingFileStore {
  private readonly client: S3Client;

  constructor(
    private readonly settings: S3Settings,
    log: Logger,
  ) {
    super(log);
    this.client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      credentials:
        settings.accessKeyId && settings.secretAccessKey ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } : undefined,
    });
  }

  async put(content: Readable, contentType: string): Promise<string> {
    const key = newStorageKey();
    // lib-storage uploads in parts as the stream arrives: the file is never held in memory whole.
    // pipeline, not pipe: a source that fails mid-way must fail (and abort) the upload, not stall it.
    const body = new PassThrough();
    // The source's failure destroys `body` with it and so fails the upload, which put reports.
    pipeline(content, body).catch((err: unknown) => this.log.debug({ err }, 'a receipt stream failed while uploading to S3; the upload fails with it'));
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
