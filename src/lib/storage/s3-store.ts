// An S3-compatible bucket (AWS S3, MinIO, R2, s3rver in the tests), selected by STORAGE=s3.
import type * as S3Sdk from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { checkKey, type ObjectStore, type StoredObject } from './types.ts';

/** S3's smallest part (all but the last); one part is buffered at a time, so memory stays at this size. */
const PART_BYTES = 8 * 1024 * 1024;

export type S3StoreOptions = {
  bucket: string;
  endpoint: string | undefined;
  region: string;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  forcePathStyle: boolean;
  prefix: string;
};

type S3 = typeof S3Sdk;

export class S3Store implements ObjectStore {
  private readonly opts: S3StoreOptions;
  private readonly bucket: string;
  private readonly prefix: string;
  /** The SDK and the client, made on the first call: the SDK takes about 70 ms to load, which start-up need not pay. */
  private sdk: Promise<{ s3: S3; client: S3Client }> | undefined;
  private client: S3Client | undefined;

  constructor(opts: S3StoreOptions) {
    this.opts = opts;
    this.bucket = opts.bucket;
    this.prefix = opts.prefix;
  }

  private s3(): Promise<{ s3: S3; client: S3Client }> {
    this.sdk ??= import('@aws-sdk/client-s3').then((s3) => {
      const opts = this.opts;
      this.client = new s3.S3Client({
        region: opts.region,
        forcePathStyle: opts.forcePathStyle,
        ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
        ...(opts.accessKeyId && opts.secretAccessKey
          ? { credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } }
          : {}),
      });
      return { s3, client: this.client };
    });
    return this.sdk;
  }

  private key(key: string): string {
    return this.prefix + checkKey(key);
  }

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    const { s3, client } = await this.s3();
    await client.send(
      new s3.PutObjectCommand({
        Bucket: this.bucket,
        Key: this.key(key),
        Body: data,
        ContentType: contentType,
        ContentLength: data.length,
      }),
    );
  }

  /** Small streams are one PUT; larger ones a multipart upload of PART_BYTES parts, aborted if the stream fails. */
  async putStream(key: string, data: AsyncIterable<Buffer | string>, contentType: string): Promise<number> {
    const Key = this.key(key);
    const { s3, client } = await this.s3();
    let part: Buffer[] = [];
    let partBytes = 0;
    let total = 0;
    let uploadId: string | undefined;
    const parts: Array<{ ETag: string | undefined; PartNumber: number }> = [];
    const flush = async () => {
      if (!uploadId)
        uploadId = (await client.send(new s3.CreateMultipartUploadCommand({ Bucket: this.bucket, Key, ContentType: contentType })))
          .UploadId;
      const body = Buffer.concat(part);
      const PartNumber = parts.length + 1;
      const out = await client.send(
        new s3.UploadPartCommand({ Bucket: this.bucket, Key, UploadId: uploadId, PartNumber, Body: body, ContentLength: body.length }),
      );
      parts.push({ ETag: out.ETag, PartNumber });
      part = [];
      partBytes = 0;
    };
    try {
      for await (const chunk of data) {
        const b = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
        part.push(b);
        partBytes += b.length;
        total += b.length;
        if (partBytes >= PART_BYTES) await flush();
      }
      if (!uploadId) {
        await this.put(key, Buffer.concat(part), contentType);
        return total;
      }
      if (partBytes > 0) await flush();
      await client.send(
        new s3.CompleteMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
      );
      return total;
    } catch (error) {
      if (uploadId) await client.send(new s3.AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId: uploadId })).catch(() => {});
      throw error;
    }
  }

  async get(key: string): Promise<Readable | null> {
    const { s3, client } = await this.s3();
    try {
      const out = await client.send(new s3.GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      return (out.Body as Readable | undefined) ?? null;
    } catch (error) {
      if (error instanceof s3.S3ServiceException && (error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404)) return null;
      throw error;
    }
  }

  async open(key: string): Promise<StoredObject | null> {
    const { s3, client } = await this.s3();
    try {
      const out = await client.send(new s3.GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      const body = out.Body as Readable | undefined;
      return body ? { body, size: out.ContentLength ?? null } : null;
    } catch (error) {
      if (error instanceof s3.S3ServiceException && (error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const { s3, client } = await this.s3();
    await client.send(new s3.DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
  }

  destroy(): void {
    this.client?.destroy();
  }
}
