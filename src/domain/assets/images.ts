// Every use of sharp for assets. Each input is opened with `limitInputPixels` at MAX_INPUT_PIXELS, so an image
// whose header declares more pixels (a 30,000×30,000 "decompression bomb") fails on metadata(), which reads
// the header only, before a single pixel is decoded.
import { createRequire } from 'node:module';
import type SharpLibrary from 'sharp';
import type { Metadata, Sharp, SharpOptions } from 'sharp';
import { invalidField, unprocessable } from '../errors.ts';

/** The most pixels (width × height of one frame) an image asset may have: 50 megapixels. */
const MAX_INPUT_PIXELS = 50_000_000;
/** Longest side of the `thumbnail` variant. */
const THUMBNAIL_SIZE = 320;
/** The `mms` variant: longest side at most this, and at most MMS_MAX_BYTES. */
const MMS_MAX_SIDE = 1280;
export const MMS_MAX_BYTES = 1024 * 1024;

/**
 * sharp, loaded on the first image (it costs start-up about 30 ms; bench part a). Its CommonJS build, loaded
 * synchronously; every use in the process goes through here, so its ES module build (a second copy) never loads.
 */
let sharpLib: typeof SharpLibrary | undefined;
export const sharp = (): typeof SharpLibrary => {
  if (!sharpLib) {
    sharpLib = createRequire(import.meta.url)('sharp') as typeof SharpLibrary;
    sharpLib.cache(false);
  }
  return sharpLib;
};

const open = (data: Buffer, opts: SharpOptions = {}) => sharp()(data, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'warning', ...opts });

export type Dimensions = { width: number; height: number; pages: number };

/** Dimensions from the header (one frame of an animation); 400 when it cannot be read or is too large. */
export async function probe(data: Buffer, mimeType: string, field: string): Promise<Dimensions> {
  let meta: Metadata;
  try {
    meta = await open(data).metadata();
  } catch (error) {
    const message = (error as Error).message;
    if (/pixel limit/i.test(message)) {
      throw invalidField(
        field,
        `the image has more than ${MAX_INPUT_PIXELS.toLocaleString('en-US')} pixels; at most 50 megapixels are accepted`,
      );
    }
    throw invalidField(field, `the file starts like ${mimeType} but is not a readable ${mimeType} image`);
  }
  const width = meta.width;
  const height = meta.pageHeight ?? meta.height;
  if (!width || !height) throw invalidField(field, `the file starts like ${mimeType} but its dimensions cannot be read`);
  if (width * height > MAX_INPUT_PIXELS) {
    throw invalidField(field, `the image is ${width}×${height}; at most 50 megapixels are accepted`);
  }
  return { width, height, pages: meta.pages ?? 1 };
}

export type Rendition = { data: Buffer; mimeType: string; width: number; height: number };

async function rendition(pipeline: Sharp, mimeType: string): Promise<Rendition> {
  const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
  return { data, mimeType, width: info.width, height: info.pageHeight ?? info.height };
}

/** JPEG, longest side THUMBNAIL_SIZE (never enlarged), first frame, transparency on white. */
export function thumbnail(data: Buffer): Promise<Rendition> {
  return rendition(
    open(data)
      .flatten({ background: '#ffffff' })
      .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true })
      .jpeg({ quality: 80 }),
    'image/jpeg',
  );
}

/** A still JPEG of at most MMS_MAX_BYTES: longest side MMS_MAX_SIDE, lower quality and size until it fits. */
export function mmsVariant(data: Buffer): Promise<Rendition> {
  return jpegWithin(data, MMS_MAX_BYTES, MMS_MAX_SIDE);
}

/**
 * The carrier's limit for one MMS image: 600 KB, the common US carrier (and Twilio) guidance. The `mms` variant
 * (1 MB) fits most handsets but not every carrier, so a larger image is transcoded at dispatch when the sender's
 * MMS protocol sets `mmsTranscoding`, and otherwise fails the message (dispatch.ts fitMmsMedia).
 */
export const MMS_CARRIER_MAX_BYTES = 600 * 1024;

/** A still JPEG of at most MMS_CARRIER_MAX_BYTES, from the image as it is sent (never enlarged). */
export function carrierVariant(data: Buffer): Promise<Rendition> {
  return jpegWithin(data, MMS_CARRIER_MAX_BYTES, MMS_MAX_SIDE);
}

/** A JPEG of at most `maxBytes`: quality 82 down to 40 at longest side `side`, then 0.7 of the side, and again. */
async function jpegWithin(data: Buffer, maxBytes: number, side: number): Promise<Rendition> {
  for (;;) {
    for (const quality of [82, 70, 55, 40]) {
      const out = await rendition(
        open(data).flatten({ background: '#ffffff' }).resize(side, side, { fit: 'inside', withoutEnlargement: true }).jpeg({ quality }),
        'image/jpeg',
      );
      if (out.data.length <= maxBytes || side <= 160) return out;
    }
    side = Math.round(side * 0.7);
  }
}

const OUTPUT: Record<string, (s: Sharp) => Sharp> = {
  'image/jpeg': (s) => s.jpeg({ quality: 90 }),
  'image/png': (s) => s.png(),
  'image/webp': (s) => s.webp({ quality: 90 }),
  'image/gif': (s) => s.gif(),
};

/** An edit sharp refuses (an animation whose frames together pass the pixel limit, a damaged file): 422. */
async function edited(work: Promise<Rendition>): Promise<Rendition> {
  try {
    return await work;
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0] ?? '';
    throw unprocessable(
      'UNPROCESSABLE',
      `The image cannot be edited: ${/pixel limit/i.test(reason) ? `it has more than ${MAX_INPUT_PIXELS.toLocaleString('en-US')} pixels in all frames` : reason}.`,
    );
  }
}

/** The rectangle, in the source's format; every frame of an animated GIF. */
export function crop(data: Buffer, mimeType: string, rect: { x: number; y: number; width: number; height: number }): Promise<Rendition> {
  const format = OUTPUT[mimeType] ?? OUTPUT['image/png']!;
  const animated = mimeType === 'image/gif';
  return edited(
    rendition(
      format(open(data, { animated }).extract({ left: rect.x, top: rect.y, width: rect.width, height: rect.height })),
      OUTPUT[mimeType] ? mimeType : 'image/png',
    ),
  );
}

/** A JPEG (quality 85) of width×height per `fit`; first frame of a GIF; transparency flattened onto white. */
export function resize(data: Buffer, size: { width: number; height: number; fit: 'cover' | 'contain' | 'inside' }): Promise<Rendition> {
  return edited(
    rendition(
      open(data)
        .flatten({ background: '#ffffff' })
        .resize(size.width, size.height, { fit: size.fit, background: '#ffffff', position: 'centre' })
        .jpeg({ quality: 85 }),
      'image/jpeg',
    ),
  );
}
