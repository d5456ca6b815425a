import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { SnapshotStore } from './store';

export interface S3StoreOptions {
  bucket: string;
  /** key prefix inside the bucket ('' or ending without '/') */
  prefix?: string;
  /** an S3-compatible server (MinIO, moto, Ceph…); unset: AWS itself */
  endpoint?: string;
  region?: string;
  /** credentials: unset = the SDK's default chain (AWS_ACCESS_KEY_ID…, profiles, instance roles) */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** Snapshots in any S3-compatible object store (AWS SDK v3). Path-style when an endpoint is given. */
export class S3SnapshotStore implements SnapshotStore {
  readonly kind = 's3';
  readonly location: string;
  private readonly client: S3Client;
  private readonly prefix: string;

  constructor(private readonly o: S3StoreOptions) {
    this.prefix = o.prefix ? `${o.prefix.replace(/\/+$/, '')}/` : '';
    this.location = `s3://${o.bucket}/${this.prefix}`;
    this.client = new S3Client({
      region: o.region ?? 'us-east-1',
      ...(o.endpoint ? { endpoint: o.endpoint, forcePathStyle: true } : {}),
      ...(o.credentials ? { credentials: o.credentials } : {}),
    });
  }

  async put(key: string, body: Buffer): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.o.bucket, Key: this.prefix + key, Body: body }));
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.o.bucket, Key: this.prefix + key }));
      return r.Body ? Buffer.from(await r.Body.transformToByteArray()) : Buffer.alloc(0);
    } catch (err) {
      if (err instanceof NoSuchKey || (err as { name?: string }).name === 'NoSuchKey') return null;
      throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const r = await this.client.send(new ListObjectsV2Command({ Bucket: this.o.bucket, Prefix: this.prefix + prefix, ContinuationToken: token }));
      for (const c of r.Contents ?? []) if (c.Key) out.push(c.Key.slice(this.prefix.length));
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    return out.sort();
  }

  async remove(keys: string[]): Promise<void> {
    // DeleteObjects takes at most 1,000 keys; deleting a missing key is success in S3
    for (let i = 0; i < keys.length; i += 1000) {
      const Objects = keys.slice(i, i + 1000).map((k) => ({ Key: this.prefix + k }));
      const r = await this.client.send(new DeleteObjectsCommand({ Bucket: this.o.bucket, Delete: { Objects, Quiet: true } }));
      if (r.Errors?.length) throw new Error(`deleting snapshot objects in ${this.location}: ${r.Errors[0].Key}: ${r.Errors[0].Message ?? r.Errors[0].Code}`);
    }
  }

  close(): void {
    this.client.destroy();
  }
}
