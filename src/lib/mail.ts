// Outgoing email (scheduled analytics reports) with nodemailer. With SMTP_URL, messages go to that SMTP server
// (smtp:// upgrades with STARTTLS when offered, smtps:// is TLS from the start; credentials in the URL). Without
// it, nodemailer's stream transport builds the same raw message and it is written as an .eml file under
// DATA_DIR/outbox (opened by any mail client), so a fresh install shows what it would have sent.
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type NodemailerLibrary from 'nodemailer';
import type { Transporter } from 'nodemailer';
import type { MailConfig } from '../config.ts';

export type MailAttachment = { filename: string; content: Buffer | string | Readable; contentType: string };
export type Mail = { to: string[]; subject: string; text: string; attachments: MailAttachment[] };
/** Where a message went: accepted by the SMTP server, or written to a file. */
export type MailDelivery = { via: 'smtp'; messageId: string; accepted: string[] } | { via: 'file'; path: string };

const SEND_TIMEOUT_MS = 60_000;
const transports = new WeakMap<MailConfig, Transporter>();

type Nodemailer = typeof NodemailerLibrary;

function smtpTransport(nodemailer: Nodemailer, config: MailConfig, smtpUrl: string): Transporter {
  let t = transports.get(config);
  if (!t) {
    const url = new URL(smtpUrl);
    // Timeouts bound a send to an unresponsive server (the job then retries); query options of the URL still apply.
    if (!url.searchParams.has('connectionTimeout')) url.searchParams.set('connectionTimeout', String(SEND_TIMEOUT_MS));
    if (!url.searchParams.has('socketTimeout')) url.searchParams.set('socketTimeout', String(SEND_TIMEOUT_MS));
    t = nodemailer.createTransport(url.toString());
    transports.set(config, t);
  }
  return t;
}

function message(config: MailConfig, mail: Mail) {
  return {
    from: config.from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    // base64 keeps the CSVs' CRLF line ends byte for byte.
    attachments: mail.attachments.map((a) => ({ ...a, contentTransferEncoding: 'base64' as const })),
  };
}

/** Sends the message; a refusal or an unreachable server throws (the caller retries). */
export async function sendMail(config: MailConfig, mail: Mail, fileStem: string): Promise<MailDelivery> {
  const { default: nodemailer } = await import('nodemailer'); // loaded on the first mail, not at start-up (bench part a)
  if (config.smtpUrl) {
    const info = await smtpTransport(nodemailer, config, config.smtpUrl).sendMail(message(config, mail));
    return { via: 'smtp', messageId: String(info.messageId), accepted: (info.accepted as unknown[]).map(String) };
  }
  const info = await nodemailer
    .createTransport({ streamTransport: true, buffer: false, newline: 'windows' })
    .sendMail(message(config, mail));
  await mkdir(config.dir, { recursive: true });
  const path = join(config.dir, `${fileStem.replace(/[^A-Za-z0-9._-]/g, '_')}.eml`);
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await pipeline(info.message as Readable, createWriteStream(tmp, { mode: 0o600 }));
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  return { via: 'file', path };
}
