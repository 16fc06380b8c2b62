// An S3-compatible bucket (AWS S3, MinIO, R2, s3rver in the tests), selected by STORAGE=s3.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
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

export class S3Store implements ObjectStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(opts: S3StoreOptions) {
    this.bucket = opts.bucket;
    this.prefix = opts.prefix;
    this.client = new S3Client({
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
      ...(opts.accessKeyId && opts.secretAccessKey
        ? { credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } }
        : {}),
    });
  }

  private key(key: string): string {
    return this.prefix + checkKey(key);
  }

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: this.key(key), Body: data, ContentType: contentType, ContentLength: data.length }),
    );
  }

  /** Small streams are one PUT; larger ones a multipart upload of PART_BYTES parts, aborted if the stream fails. */
  async putStream(key: string, data: AsyncIterable<Buffer | string>, contentType: string): Promise<number> {
    const Key = this.key(key);
    let part: Buffer[] = [];
    let partBytes = 0;
    let total = 0;
    let uploadId: string | undefined;
    const parts: Array<{ ETag: string | undefined; PartNumber: number }> = [];
    const flush = async () => {
      if (!uploadId)
        uploadId = (await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key, ContentType: contentType })))
          .UploadId;
      const body = Buffer.concat(part);
      const PartNumber = parts.length + 1;
      const out = await this.client.send(
        new UploadPartCommand({ Bucket: this.bucket, Key, UploadId: uploadId, PartNumber, Body: body, ContentLength: body.length }),
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
      await this.client.send(
        new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
      );
      return total;
    } catch (error) {
      if (uploadId)
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId: uploadId })).catch(() => {});
      throw error;
    }
  }

  async get(key: string): Promise<Readable | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      return (out.Body as Readable | undefined) ?? null;
    } catch (error) {
      if (error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404)) return null;
      throw error;
    }
  }

  async open(key: string): Promise<StoredObject | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      const body = out.Body as Readable | undefined;
      return body ? { body, size: out.ContentLength ?? null } : null;
    } catch (error) {
      if (error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
  }

  destroy(): void {
    this.client.destroy();
  }
}
